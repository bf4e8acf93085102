"""One connection, many threads: the loop and the CPU pool take turns on the store's database."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from storage.store import Store
from storage.tx import immediate


@pytest.fixture
def store(tmp_path: Path, open_store: Callable[..., Store]) -> Iterator[Store]:
    opened = open_store(tmp_path / "factbot.db")
    opened.db.execute("CREATE TABLE t (v TEXT)")
    yield opened
    opened.close()


def values(store: Store) -> list[str]:
    return sorted(row["v"] for row in store.db.query("SELECT v FROM t"))


def test_queries_beside_transactions_never_lose_their_savepoint(store: Store) -> None:
    # A COMMIT in one thread ends the savepoint a query in another thread still has to release.
    store.db.execute("INSERT INTO t VALUES ('seed')")

    def read(_: int) -> int:
        return sum(len(list(store.db.query("SELECT v FROM t LIMIT 1"))) for _ in range(300))

    def write() -> None:
        for n in range(300):
            with immediate(store.db):
                store.db.execute("INSERT INTO t VALUES (?)", [str(n)])

    with ThreadPoolExecutor(4) as pool:
        writer = pool.submit(write)
        counts = list(pool.map(read, range(3)))
        writer.result()
    assert counts == [300] * 3
    assert len(values(store)) == 301


def test_a_transaction_in_another_thread_is_not_joined_by_this_one(store: Store) -> None:
    opened, done = threading.Event(), threading.Event()

    def rolled_back() -> None:
        with pytest.raises(RuntimeError), immediate(store.db):
            store.db.execute("INSERT INTO t VALUES ('a')")
            opened.set()
            done.wait(0.3)  # the other thread tries to write meanwhile
            raise RuntimeError("this transaction rolls back")

    first = threading.Thread(target=rolled_back)
    first.start()
    assert opened.wait(5)
    # Without turns, this write would nest as a savepoint inside the open transaction above and
    # be rolled back with it; with them it waits for that transaction to end, then commits.
    with immediate(store.db):
        store.db.execute("INSERT INTO t VALUES ('b')")
    done.set()
    first.join(5)
    assert values(store) == ["b"]


def test_rows_of_a_query_are_read_before_another_thread_writes(store: Store) -> None:
    store.db.execute("INSERT INTO t VALUES ('x')")
    rows = store.db.query("SELECT v FROM t")
    writer = threading.Thread(target=store.db.execute, args=("INSERT INTO t VALUES ('y')",))
    writer.start()
    writer.join(5)
    assert [row["v"] for row in rows] == ["x"]
    assert values(store) == ["x", "y"]


def test_a_file_database_opens_a_connection_per_thread_and_memory_shares_one(
    tmp_path: Path,
) -> None:
    with Store.open(tmp_path / "f.db") as file, Store.open(":memory:") as memory:
        for store in (file, memory):
            here = store.db.conn
            with ThreadPoolExecutor(1) as pool:
                there = pool.submit(lambda s=store: s.db.conn).result()
            assert (there is here) == (store is memory)
        pragma = "PRAGMA journal_mode"
        with ThreadPoolExecutor(1) as pool:
            mode = pool.submit(lambda: file.db.execute(pragma).fetchone()[0]).result()
            keys = pool.submit(lambda: file.db.execute("PRAGMA foreign_keys").fetchone()[0])
        assert mode == "wal" and keys.result() == 1


async def test_store_call_runs_in_a_storage_thread_with_the_callers_context(
    tmp_path: Path,
) -> None:
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="")
    var.set("request-7")
    with Store.open(tmp_path / "c.db") as store:
        name, seen = await store.call(lambda: (threading.current_thread().name, var.get()))
    assert name.startswith("factbot-storage") and seen == "request-7"
