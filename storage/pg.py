"""PostgreSQL behind the same small database surface the repositories use on SQLite.

Why psycopg 3 and one dialect-neutral set of repositories, not SQLAlchemy or a second copy of
each repository: the repositories are synchronous and written as plain SQL through the few
calls sqlite-utils offers (`execute`, `query`, `table(...).insert/insert_all/upsert_all`,
`atomic`, `conn.executemany`). `PgDatabase` offers exactly those calls over one psycopg
connection, so every repository runs unchanged on either engine and the code above storage
cannot tell which one it has. SQLAlchemy Core would mean rewriting ~150 hand-written
statements into its expression language (and a second dependency tree) for no gain in what
the queries can say; one implementation per engine would double every repository and let the
two drift. The few statements whose SQL differs (JSON functions, full-text search, upserts
without a conflict target) branch on `db.dialect` inside their repository.

The SQLite dialect is translated once per statement text (`translate`, cached): `?`
placeholders become `%s` (a literal `%` becomes `%%`), and `INSERT OR IGNORE` becomes
`INSERT ... ON CONFLICT DO NOTHING`. `json_extract(x, '$.a')` becomes `(x::jsonb ->> 'a')`
(text: what the callers compare it with) and `json_remove(x, '$.a')` `(x::jsonb - 'a')::text`.

Transactions: what is serialised, and why. The repositories were written for SQLite's
one-writer-at-a-time model: a read-then-write transaction (`immediate`) sees no concurrent
writer between its read and its write. PostgreSQL's READ COMMITTED would let two writers read
the same row and both act on what they read (two requests for one event both find no request
stored, two sign-ins both find a token bucket full). So `immediate` starts its transaction by
taking a transaction-level advisory lock, held to COMMIT:
- the queue's hot path takes none: a claim picks its row with `FOR UPDATE SKIP LOCKED` (claimers
  pass each other by) and a completion, a failure or a hand-back re-checks its row's lease in
  the UPDATE itself, under the row's lock (storage/jobs.py, `_row_tx`);
- a transaction whose reads and writes stay inside one family of tables names that family as
  its `scope` and takes that scope's lock, `pg_advisory_xact_lock(WRITE_LOCK, key(scope))`:
  `buckets` (rate-limit token buckets), `users` (operators, invitations, sign-in attempts),
  `web` (cache expiry). Writers of different scopes run side by side;
- every other `immediate` (a request's intake: dedupe, guards, the post and its jobs, the
  platform row; the review queue; retention) takes the one shared lock `WRITE_LOCK`, which
  gives those multi-table read-then-write transactions exactly SQLite's guarantee without
  rewriting each one for row locks. They are short (milliseconds) next to a check's seconds.
A scoped transaction never opens an unscoped one inside it, so two transactions cannot wait
for each other's locks (a scoped one may run inside an unscoped one: always in that order).
Plain reads and single statements run without a lock, in autocommit.

Connections. Each thread has its own connection (opened on its first statement): the event
loop hands storage calls to a small pool of storage threads (storage/threads.py), the CPU pool
reads from its own, and a transaction stays on its thread's connection from BEGIN to COMMIT,
so threads never share a transaction state and no lock is needed between them. The pool is
as large as the threads that use the store (the storage threads, the CPU pool's, the thread
that opened it); `close` closes them all. A lost connection (the server restarted) is opened
again on the thread's next statement outside a transaction; inside one the error propagates
and the caller's transaction is lost as a whole, as with any database error. A connection that
cannot be had back raises `DatabaseUnavailableError` (storage/tx.py), which workers wait out.
"""

from __future__ import annotations

import functools
import hashlib
import re
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

import psycopg
from psycopg.adapt import Loader
from psycopg.pq import Format

from storage.threads import LoopGuard, PerThread
from storage.tx import DatabaseUnavailableError

DIALECT = "postgresql"
WRITE_LOCK = 0x46414354  # "FACT": the shared lock of `immediate`, and its scopes' namespace
MIGRATION_LOCK = 0x4D494752  # "MIGR": held while migrations are applied

_IGNORE = re.compile(r"^\s*INSERT\s+OR\s+IGNORE\s+INTO\b", re.IGNORECASE)
_RETURNING = re.compile(r"\sRETURNING\s", re.IGNORECASE)
_NAMED = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")
_IS_NOT = re.compile(r"\bIS\s+NOT\s+\?")
_IS = re.compile(r"\bIS\s+\?")
_JSON_EXTRACT = re.compile(r"json_extract\(\s*([\w.]+)\s*,\s*'\$\.(\w+)'\s*\)")
_JSON_REMOVE = re.compile(r"json_remove\(\s*([\w.]+)\s*,\s*'\$\.(\w+)'\s*\)")


class _BytesLoader(Loader):
    """Load bytea as bytes (psycopg's default is memoryview), as sqlite3 returns BLOBs.

    Text results arrive in PostgreSQL's hex output (`\\x0a1b...`, its default since 9.0).
    """

    def load(self, data: Any) -> bytes:
        raw = bytes(data)
        if not raw.startswith(b"\\x"):
            raise ValueError("bytea arrived in escape format: set bytea_output = 'hex'")
        return bytes.fromhex(raw[2:].decode("ascii"))


class _BytesBinaryLoader(Loader):
    """Load binary bytea as bytes."""

    format = Format.BINARY

    def load(self, data: Any) -> bytes:
        return bytes(data)


def _split_literals(sql: str) -> list[tuple[bool, str]]:
    """Split sql into (is_literal, text) parts at single-quoted strings."""
    parts: list[tuple[bool, str]] = []
    i, start, n = 0, 0, len(sql)
    while i < n:
        if sql[i] == "'":
            parts.append((False, sql[start:i]))
            j = i + 1
            while j < n:
                if sql[j] == "'" and j + 1 < n and sql[j + 1] == "'":
                    j += 2
                    continue
                if sql[j] == "'":
                    break
                j += 1
            parts.append((True, sql[i : j + 1]))
            i = start = j + 1
            continue
        i += 1
    parts.append((False, sql[start:]))
    return parts


@functools.lru_cache(maxsize=2048)
def translate(sql: str, *, named: bool = False) -> str:
    """Return sql (SQLite dialect, `?` placeholders, or `:name` ones when named) as PostgreSQL
    with `%s` (`%(name)s`) placeholders."""
    ignore = bool(_IGNORE.match(sql))
    if ignore:
        sql = _IGNORE.sub("INSERT INTO", sql, count=1)
    sql = _JSON_EXTRACT.sub(r"(\1::jsonb ->> '\2')", sql)
    sql = _JSON_REMOVE.sub(r"(\1::jsonb - '\2')::text", sql)
    # SQLite's IS / IS NOT compare with NULL as a value; PostgreSQL spells that DISTINCT FROM.
    sql = _IS.sub("IS NOT DISTINCT FROM ?", _IS_NOT.sub("IS DISTINCT FROM ?", sql))
    out = []
    for literal, text in _split_literals(sql):
        text = text.replace("%", "%%")
        if not literal:
            text = _NAMED.sub(r"%(\1)s", text) if named else text.replace("?", "%s")
        out.append(text)
    sql = "".join(out)
    if ignore:
        found = _RETURNING.search(sql)
        if found:
            sql = f"{sql[: found.start()]} ON CONFLICT DO NOTHING{sql[found.start() :]}"
        else:
            sql = f"{sql.rstrip().rstrip(';')} ON CONFLICT DO NOTHING"
    return sql


def scope_key(scope: str) -> int:
    """Return a write scope's advisory lock key: a signed 32-bit number, the same in every
    process and release (a hash of the name, not Python's salted `hash`)."""
    digest = hashlib.blake2b(scope.encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big", signed=True)


def describe_url(url: str) -> str:
    """Return url's host, port and database without its user or password (for output)."""
    info = psycopg.conninfo.conninfo_to_dict(url)
    return f"{info.get('host', 'localhost')}:{info.get('port', 5432)}/{info.get('dbname', '')}"


class PgCursor:
    """What a statement returned, read at once (rows, rowcount), like a finished sqlite3 cursor."""

    def __init__(self, rows: list[tuple[Any, ...]], rowcount: int, columns: list[str]) -> None:
        self._rows = rows
        self._at = 0
        self.rowcount = rowcount
        self.description = [(c,) for c in columns] if columns else None

    def fetchone(self) -> tuple[Any, ...] | None:
        if self._at >= len(self._rows):
            return None
        self._at += 1
        return self._rows[self._at - 1]

    def fetchall(self) -> list[tuple[Any, ...]]:
        rows, self._at = self._rows[self._at :], len(self._rows)
        return rows

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return iter(self.fetchall())


class PgTable:
    """The table calls the repositories make: insert, insert_all, upsert_all."""

    def __init__(self, db: PgDatabase, name: str) -> None:
        self.db = db
        self.name = name

    def insert(self, row: dict[str, Any]) -> PgTable:
        return self.insert_all([row])

    def insert_all(self, rows: Iterable[dict[str, Any]], **_: Any) -> PgTable:
        self._write(list(rows), pk=None)
        return self

    def upsert_all(self, rows: Iterable[dict[str, Any]], *, pk: str, **_: Any) -> PgTable:
        self._write(list(rows), pk=pk)
        return self

    def _write(self, rows: list[dict[str, Any]], *, pk: str | None) -> None:
        if not rows:
            return
        columns = list(rows[0])
        names = ", ".join(f'"{c}"' for c in columns)
        marks = ", ".join("%s" for _ in columns)
        sql = f'INSERT INTO "{self.name}" ({names}) VALUES ({marks})'
        if pk is not None:
            sets = ", ".join(f'"{c}" = EXCLUDED."{c}"' for c in columns if c != pk)
            sql += f' ON CONFLICT ("{pk}") DO UPDATE SET {sets}'
        values = [[row.get(c) for c in columns] for row in rows]
        with self.db.lock, self.db._cursor() as cur:
            try:
                cur.executemany(sql, values)
            except psycopg.IntegrityError as exc:
                raise sqlite3.IntegrityError(str(exc)) from exc


class _ConnShim:
    """The `db.conn` calls the repositories make (`executemany`, `in_transaction`)."""

    def __init__(self, db: PgDatabase) -> None:
        self._db = db

    @property
    def in_transaction(self) -> bool:
        return self._db.in_transaction

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> PgCursor:
        with self._db.lock, self._db._cursor() as cur:
            try:
                cur.executemany(translate(sql), list(rows))
            except psycopg.IntegrityError as exc:
                raise sqlite3.IntegrityError(str(exc)) from exc
            return PgCursor([], cur.rowcount, [])

    def execute(self, sql: str, params: Sequence[Any] | None = None) -> PgCursor:
        return self._db.execute(sql, params)


class PgDatabase:
    """One psycopg connection that answers the repositories' calls as sqlite-utils does."""

    dialect = DIALECT

    def __init__(self, url: str) -> None:
        self.url = url
        # A thread's own connection needs no lock: kept for the callers that hold one.
        self.lock: AbstractContextManager[Any] = nullcontext()
        self.guard = LoopGuard()
        self._local = threading.local()  # this thread's transaction depth
        self._mine: PerThread[psycopg.Connection[Any]] = PerThread()
        self.connection = self._connect()  # the opening thread's; others open theirs on use
        self.conn = _ConnShim(self)

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            connection = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        except psycopg.OperationalError as exc:
            raise DatabaseUnavailableError(str(exc)) from exc
        connection.adapters.register_loader("bytea", _BytesLoader)
        connection.adapters.register_loader("bytea", _BytesBinaryLoader)
        return connection

    @property
    def connection(self) -> psycopg.Connection[Any]:
        """This thread's connection, opened on its first statement."""
        connection = self._mine.get()
        if connection is None:
            connection = self.connection = self._connect()
        return connection

    @connection.setter
    def connection(self, value: psycopg.Connection[Any]) -> None:
        self._mine.set(value)

    @property
    def _depth(self) -> int:
        """This thread's open transaction blocks (the outermost is BEGIN, others savepoints)."""
        return int(getattr(self._local, "depth", 0))

    @_depth.setter
    def _depth(self, value: int) -> None:
        self._local.depth = value

    @property
    def in_transaction(self) -> bool:
        return self._depth > 0

    @contextmanager
    def _cursor(self) -> Iterator[psycopg.Cursor[Any]]:
        self.guard.check()
        # The server went away (a restart): outside a transaction, the next statement reconnects.
        if self._depth == 0 and (self.connection.closed or self.connection.broken):
            self.connection = self._connect()
        with self.connection.cursor() as cur:
            yield cur

    def execute(
        self, sql: str, parameters: Sequence[Any] | dict[str, Any] | None = None
    ) -> PgCursor:
        """Run one statement; return its rows (read at once) and rowcount."""
        with self.lock:
            for attempt in (1, 2):
                try:
                    with self._cursor() as cur:
                        if isinstance(parameters, dict):
                            cur.execute(translate(sql, named=True), parameters)
                        else:
                            cur.execute(translate(sql), list(parameters or []))
                        rows = cur.fetchall() if cur.description else []
                        columns = [d.name for d in cur.description or []]
                        return PgCursor(rows, cur.rowcount, columns)
                except psycopg.IntegrityError as exc:
                    # The repositories' error contract is sqlite3's (DB-API) exception types:
                    # callers that catch a constraint violation need not know the engine.
                    raise sqlite3.IntegrityError(str(exc)) from exc
                except psycopg.OperationalError as exc:
                    # One retry outside a transaction, on a fresh connection (a restarted server).
                    lost = self.connection.closed or self.connection.broken
                    if not lost:
                        raise
                    if attempt == 2 or self._depth > 0:
                        raise DatabaseUnavailableError(str(exc)) from exc
            raise AssertionError("unreachable")

    def query(
        self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None
    ) -> Iterator[dict[str, Any]]:
        """Run one statement; yield its rows as dicts."""
        cursor = self.execute(sql, params)
        names = [d[0] for d in cursor.description or []]
        rows = cursor.fetchall()
        return (dict(zip(names, row, strict=True)) for row in rows)

    def executescript(self, sql: str) -> None:
        """Run several statements (no parameters)."""
        with self.lock, self._cursor() as cur:
            cur.execute(sql.encode())

    def table(self, name: str) -> PgTable:
        return PgTable(self, name)

    def __getitem__(self, name: str) -> PgTable:
        return PgTable(self, name)

    def table_names(self) -> list[str]:
        rows = self.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
        ).fetchall()
        return [r[0] for r in rows]

    @contextmanager
    def atomic(self) -> Iterator[PgDatabase]:
        """Run the block in one transaction (a savepoint inside an open one)."""
        self.guard.check()
        with self.lock:
            if self._depth == 0 and (self.connection.closed or self.connection.broken):
                self.connection = self._connect()
            self._depth += 1
            try:
                with self.connection.transaction():
                    yield self
            except psycopg.OperationalError as exc:
                if self.connection.closed or self.connection.broken:
                    raise DatabaseUnavailableError(str(exc)) from exc
                raise
            finally:
                self._depth -= 1

    @contextmanager
    def immediate(self, scope: str = "") -> Iterator[PgDatabase]:
        """Run the block in one transaction that holds scope's write lock (none given: the
        shared one) from its start; see the module docstring."""
        with self.atomic():
            # Taken again inside a plain `atomic` block: the lock is re-entrant, held to COMMIT.
            if scope:
                self.execute("SELECT pg_advisory_xact_lock(?, ?)", [WRITE_LOCK, scope_key(scope)])
            else:
                self.execute("SELECT pg_advisory_xact_lock(?)", [WRITE_LOCK])
            yield self

    def close(self) -> None:
        """Close every connection this database opened, whichever thread opened it."""
        self._mine.close_all()
