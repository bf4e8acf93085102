"""What only the PostgreSQL engine has: translation, its migration lock, the split, restarts."""

from __future__ import annotations

import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pipeline.inputs.posts import post_from_text
from storage import Store
from storage.health import database_health
from storage.pg import WRITE_LOCK, PgDatabase, scope_key, translate
from storage.pg_migrations import MIGRATIONS
from tests.support.postgres import PostgresServer


def test_statements_are_translated_outside_string_literals() -> None:
    sql = "SELECT * FROM t WHERE a = ? AND b LIKE '%?%' AND c IS NOT ? AND d IS ?"
    assert translate(sql) == (
        "SELECT * FROM t WHERE a = %s AND b LIKE '%%?%%' AND c IS DISTINCT FROM %s "
        "AND d IS NOT DISTINCT FROM %s"
    )
    assert translate("INSERT OR IGNORE INTO t (a) VALUES (?) RETURNING a") == (
        "INSERT INTO t (a) VALUES (%s) ON CONFLICT DO NOTHING RETURNING a"
    )
    assert translate("SELECT 1 FROM jobs WHERE json_extract(payload, '$.check_id') = ?") == (
        "SELECT 1 FROM jobs WHERE (payload::jsonb ->> 'check_id') = %s"
    )
    assert translate("SELECT 'it''s ?'") == "SELECT 'it''s ?'"
    assert translate("INSERT INTO t (a, b) VALUES (:a, :b_2) -- x::jsonb ':c'", named=True) == (
        "INSERT INTO t (a, b) VALUES (%(a)s, %(b_2)s) -- x::jsonb ':c'"
    )


def test_processes_opening_a_new_database_at_once_migrate_it_once(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    url = postgres_server.fresh_database()

    def open_one(n: int) -> list[str]:
        with Store.open(tmp_path / f"node{n}" / "factbot.db", database_url=url) as store:
            return store.applied_migrations()

    with ThreadPoolExecutor(6) as pool:  # one connection each: as separate processes are
        applied = list(pool.map(open_one, range(6)))
    assert applied == [[m.name for m in MIGRATIONS]] * 6
    db = PgDatabase(url)
    try:
        rows = db.execute("SELECT name, count(*) FROM factbot_migrations GROUP BY name").fetchall()
    finally:
        db.close()
    assert sorted(rows) == [(m.name, 1) for m in MIGRATIONS]


def test_the_evidence_index_stays_in_the_nodes_file_and_the_rest_is_shared(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    url = postgres_server.migrated_database()
    with Store.open(tmp_path / "a" / "factbot.db", database_url=url) as a:
        assert a.engine == "postgresql"
        shared = set(a.db.table_names())
        assert {"posts", "checks", "jobs", "replies", "users", "check_text"} <= shared
        assert not {"documents", "passages", "image_index", "face_gallery"} & shared
        assert "documents" in a.index_db.table_names()
        job, _ = a.jobs.enqueue("check", {"n": 1}, post=post_from_text("x", max_chars=100))
    with Store.open(tmp_path / "b" / "factbot.db", database_url=url) as b:  # another node
        assert b.jobs.get(job.id) is not None
        assert b.documents.document_count() == 0


def test_a_constraint_violation_is_the_same_error_on_both_engines(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    url = postgres_server.migrated_database()
    with Store.open(tmp_path / "factbot.db", database_url=url) as store:
        store.db.execute("INSERT INTO kv (key, value, updated_at) VALUES ('k', 'v', 'now')")
        with pytest.raises(sqlite3.IntegrityError):
            store.db.execute("INSERT INTO kv (key, value, updated_at) VALUES ('k', 'v', 'now')")


def test_a_restarted_server_loses_nothing_and_the_store_reconnects(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    url = postgres_server.migrated_database()
    with Store.open(tmp_path / "factbot.db", database_url=url) as store:
        job, _ = store.jobs.enqueue("check", {"n": 1}, dedupe_key="one")
        store.state.set("cursor", "41")
        postgres_server.stop()
        postgres_server.start()
        # The first statement after the restart finds the connection gone and opens another.
        assert store.state.get("cursor") == "41"
        claimed = store.jobs.claim("w", lease=30)
        assert claimed is not None and claimed.id == job.id
        store.jobs.complete(claimed, "w", result_id="r")
        again, created = store.jobs.enqueue("check", {"n": 1}, dedupe_key="one")
        assert not created and again.status == "done"


def test_health_reports_the_shared_engine_its_queue_and_the_live_nodes(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    url = postgres_server.migrated_database()
    with Store.open(tmp_path / "a" / "factbot.db", database_url=url) as a:
        a.workers.register("worker@a:1")
        a.workers.register("worker@b:2")
        a.workers.stopped("worker@b:2")
        a.jobs.enqueue("check", {})
    found = database_health(tmp_path / "a" / "factbot.db", database_url=url)
    assert found.healthy and found.engine == "postgresql" and not found.pending
    assert found.queue == {"queued": 1, "running": 0, "done": 0, "dead": 0}
    assert len(found.nodes) == 1 and found.nodes[0].endswith("(worker@a:1)")
    assert found.shared.endswith(url.rsplit("/", 1)[1]) and "factbot@" not in found.shared
    down = database_health(
        tmp_path / "a" / "factbot.db", database_url="postgresql://x@127.0.0.1:1/n"
    )
    assert not down.healthy and "PostgreSQL 127.0.0.1:1/n" in down.error


def test_concurrent_claimers_on_separate_connections_take_each_job_once(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    url = postgres_server.migrated_database()
    with Store.open(tmp_path / "q" / "factbot.db", database_url=url) as store:
        ids = {store.jobs.enqueue("check", {"n": n})[0].id for n in range(120)}

    def drain(n: int) -> list[str]:
        taken = []
        with Store.open(tmp_path / f"w{n}" / "factbot.db", database_url=url) as mine:
            while (job := mine.jobs.claim(f"w{n}", lease=60)) is not None:
                mine.jobs.complete(job, f"w{n}", result_id=job.id)
                taken.append(job.id)
        return taken

    with ThreadPoolExecutor(6) as pool:
        taken = [job for part in pool.map(drain, range(6)) for job in part]
    assert sorted(taken) == sorted(ids)  # every job once: none twice, none left
    with Store.open(tmp_path / "q" / "factbot.db", database_url=url) as store:
        assert store.jobs.counts() == {"queued": 0, "running": 0, "done": 120, "dead": 0}
        assert all(j.attempts == 1 for j in store.jobs.list(limit=200))


def test_one_monitor_scheduler_and_one_reply_across_nodes(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    url = postgres_server.migrated_database()

    def node(n: int) -> Store:
        return Store.open(tmp_path / f"node{n}" / "factbot.db", database_url=url)

    stores = [node(n) for n in range(4)]
    try:
        with ThreadPoolExecutor(4) as pool:
            leases = list(
                pool.map(lambda n: stores[n].monitor.take_lease("m", f"n{n}", seconds=60), range(4))
            )
            replies = list(
                pool.map(
                    lambda n: stores[n].replies.reserve("slack", "T1:C1:1", "answer"), range(4)
                )
            )
        assert leases.count(True) == 1  # one scheduler across nodes
        holder = leases.index(True)
        assert all(s.monitor.holds_lease("m", f"n{holder}") for s in stores)
        assert sum(r is not None for r in replies) == 1  # the ledger reserves the reply once
        stores[holder].monitor.release_lease("m", f"n{holder}")
        other = (holder + 1) % 4
        assert stores[other].monitor.take_lease("m", f"n{other}", seconds=60)
    finally:
        for store in stores:
            store.close()


def test_each_thread_has_its_own_connection_and_keeps_its_transaction(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    url = postgres_server.migrated_database()
    with Store.open(tmp_path / "t" / "factbot.db", database_url=url) as store:
        db = store.db
        started, release = threading.Event(), threading.Event()

        def hold() -> int:
            with db.atomic():  # a transaction left open while the main thread writes
                db.execute("INSERT INTO kv (key, value, updated_at) VALUES ('a', '1', 'x')")
                started.set()
                release.wait(10)
                return int(db.execute("SELECT pg_backend_pid()").fetchone()[0])

        with ThreadPoolExecutor(1) as pool:
            holder = pool.submit(hold)
            assert started.wait(10)
            # Not inside the other thread's transaction: its row is not visible here yet.
            assert store.state.get("a") is None
            store.state.set("b", "2")  # committed at once, on this thread's connection
            release.set()
            other = holder.result()
        assert other != db.execute("SELECT pg_backend_pid()").fetchone()[0]
        assert store.state.get("a") == "1" and store.state.get("b") == "2"


def test_writes_of_different_scopes_do_not_wait_for_each_other(
    tmp_path: Path, postgres_server: PostgresServer
) -> None:
    url = postgres_server.migrated_database()
    a, b = PgDatabase(url), PgDatabase(url)
    try:
        with a.immediate(scope="users"), b.atomic():
            taken = "SELECT pg_try_advisory_xact_lock(?, ?)"
            assert b.execute(taken, [WRITE_LOCK, scope_key("buckets")]).fetchone()[0] is True
            assert b.execute(taken, [WRITE_LOCK, scope_key("users")]).fetchone()[0] is False
            shared = "SELECT pg_try_advisory_xact_lock(?)"
            assert b.execute(shared, [WRITE_LOCK]).fetchone()[0] is True
        assert scope_key("users") == scope_key("users") != scope_key("web")
    finally:
        a.close()
        b.close()
