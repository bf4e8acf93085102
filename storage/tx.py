"""Write transactions that take SQLite's write lock at once (BEGIN IMMEDIATE).

A deferred transaction that reads before it writes can fail with SQLITE_BUSY when another
process wrote in between, and busy_timeout does not retry that case; workers in several
processes share one database, so every read-then-write transaction of the queue is immediate.
Inside an open transaction it nests as a savepoint (sqlite-utils' `atomic`).

One process shares one connection between the event loop and the CPU pool's threads (retrieval
reads the index in a pool thread while the loop records a decision), and a connection has one
transaction state: a thread's statement would land inside another thread's open transaction,
and two `query` calls interleaving their `SAVEPOINT "sqlite_utils_query"` release each other's
savepoint ("no such savepoint"). `SerialDatabase` makes threads take turns: each statement, each
`query` with its rows, and each transaction (`atomic`, `immediate`) holds the connection's lock
from start to end. Processes still share the database through SQLite's own locking.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Generator, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from sqlite_utils import Database


class DatabaseUnavailableError(sqlite3.OperationalError):
    """The database server cannot be reached now (restarting, a network fault); try later.

    Raised by the PostgreSQL engine (storage/pg.py) when its connection is lost and cannot be
    opened again; a sqlite3.OperationalError, so the callers need not know the engine.
    """


class SerialDatabase(Database):
    """A sqlite-utils Database whose connection one thread uses at a time."""

    dialect = "sqlite"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.lock = threading.RLock()  # before super(), which may already run statements
        super().__init__(*args, **kwargs)

    def execute(
        self, sql: str, parameters: Sequence[Any] | dict[str, Any] | None = None
    ) -> sqlite3.Cursor:
        with self.lock:
            return super().execute(sql, parameters)

    def executescript(self, sql: str) -> sqlite3.Cursor:
        with self.lock:
            return super().executescript(sql)

    def query(
        self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None
    ) -> Generator[dict[str, Any], None, None]:
        # Rows are read under the lock: a cursor stepped later would run beside other threads.
        with self.lock:
            rows = list(super().query(sql, params))
        return (row for row in rows)

    def executemany(self, sql: str, rows: Any) -> sqlite3.Cursor:
        with self.lock:
            return self.conn.executemany(sql, rows)

    @contextmanager
    def atomic(self) -> Iterator[Database]:
        with self.lock, super().atomic() as db:
            yield db


def _turn(db: Database) -> AbstractContextManager[Any]:
    """Return db's connection lock, or nothing to hold for a plain Database."""
    return db.lock if isinstance(db, SerialDatabase) else nullcontext()


@contextmanager
def immediate(db: Database) -> Iterator[Database]:
    """Run the block in one transaction holding the write lock from its start."""
    if getattr(db, "dialect", "sqlite") != "sqlite":  # PostgreSQL: see storage/pg.py
        with db.immediate() as same:  # type: ignore[attr-defined]
            yield same
        return
    with _turn(db):
        if db.conn.in_transaction:
            with db.atomic():
                yield db
            return
        db.conn.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            if db.conn.in_transaction:
                db.conn.execute("ROLLBACK")
            raise
        else:
            db.conn.execute("COMMIT")
