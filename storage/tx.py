"""Connections per thread, and write transactions that take SQLite's write lock at once.

A deferred transaction that reads before it writes can fail with SQLITE_BUSY when another
connection wrote in between, and busy_timeout does not retry that case; workers in several
processes share one database, and the threads of one process each have a connection, so every
read-then-write transaction is immediate (BEGIN IMMEDIATE): `immediate`, and the outermost
`atomic` of a file database. Inside an open transaction both nest as savepoints.

Connections. A sqlite3 connection has one transaction state, so threads cannot share one
freely: a thread's statement would land inside another thread's open transaction. The event
loop hands storage calls to a small pool of threads (storage/threads.py), the CPU pool's
threads read the evidence index, and a worker's claim must not wait behind a dashboard's read.
So `SerialDatabase` opens one connection per thread for a file database (`connect`, each with
the same PRAGMAs, WAL), and a transaction stays on its thread's connection from start to end;
SQLite's own locking orders the writers, of this process and of the others. An in-memory
database (`:memory:`) cannot be opened twice (each connection would be a new, empty database),
so it keeps one shared connection that threads take turns on: each statement, each `query`
with its rows, and each transaction hold the connection's lock from start to end.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from sqlite_utils import Database

from storage.threads import LoopGuard, PerThread


class DatabaseUnavailableError(sqlite3.OperationalError):
    """The database server cannot be reached now (restarting, a network fault); try later.

    Raised by the PostgreSQL engine (storage/pg.py) when its connection is lost and cannot be
    opened again; a sqlite3.OperationalError, so the callers need not know the engine.
    """


class SerialDatabase(Database):
    """A sqlite-utils Database with a connection per thread (file) or one shared (memory)."""

    dialect = "sqlite"

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        connect: Callable[[], sqlite3.Connection] | None = None,
        **kwargs: Any,
    ) -> None:
        # Set before super(), which already runs statements through `self.conn`.
        self.guard = LoopGuard()
        self._connect = connect
        self._mine: PerThread[sqlite3.Connection] = PerThread()
        self._shared: sqlite3.Connection | None = None
        self._shared_lock = threading.RLock()
        super().__init__(conn, **kwargs)

    @property
    def conn(self) -> sqlite3.Connection:
        """This thread's connection (opened on first use), or the shared one in memory."""
        self.guard.check()
        if self._connect is None:
            assert self._shared is not None
            return self._shared
        conn = self._mine.get()
        if conn is None:
            conn = self._connect()
            self._mine.set(conn)
        return conn

    @conn.setter
    def conn(self, value: sqlite3.Connection) -> None:
        if self._connect is None:
            self._shared = value
        else:
            self._mine.set(value)

    @property
    def lock(self) -> AbstractContextManager[Any]:
        """What a thread holds while it uses the connection: the shared one's lock, or nothing
        (a thread's own connection is its alone)."""
        return self._shared_lock if self._connect is None else nullcontext()

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
        with self.lock:
            if self._connect is not None and not self.conn.in_transaction:
                with _begin_immediate(self):  # see the module docstring
                    yield self
                return
            with super().atomic() as db:
                yield db

    def close(self) -> None:
        """Close every connection this database opened, whichever thread opened it."""
        if self._connect is None:
            if self._shared is not None:
                self._shared.close()
            return
        self._mine.close_all()


def _turn(db: Database) -> AbstractContextManager[Any]:
    """Return db's connection lock, or nothing to hold for a plain Database."""
    return db.lock if isinstance(db, SerialDatabase) else nullcontext()


@contextmanager
def _begin_immediate(db: Database) -> Iterator[None]:
    conn = db.conn
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    else:
        conn.execute("COMMIT")


@contextmanager
def immediate(db: Database, *, scope: str = "") -> Iterator[Database]:
    """Run the block in one transaction holding the write lock from its start.

    On PostgreSQL the lock is `scope`'s (storage/pg.py says which writers share one); SQLite
    has one write lock per database, whatever the scope.
    """
    if getattr(db, "dialect", "sqlite") != "sqlite":  # PostgreSQL: see storage/pg.py
        with db.immediate(scope=scope) as same:  # type: ignore[attr-defined]
            yield same
        return
    with _turn(db):
        if db.conn.in_transaction:
            with db.atomic():
                yield db
            return
        with _begin_immediate(db):
            yield db
