"""Database health for `factbot doctor` and /readyz, read without changing anything.

`Store.open` creates the file and applies migrations; a health check must not. `database_health`
opens the file read-only (`mode=ro`), so a missing, unreadable or damaged database is reported,
never created or repaired: which migrations are pending, what `PRAGMA quick_check` says (the
fast form of integrity_check: it skips the index-content cross-check), the index's size, and
which engines hold the data and the queue (SQLite and factbot's own queue, the `jobs` table of
the same file) with the queue's depth.

Failure policy: never raises; every failure is a field of the returned `DatabaseHealth`.
"""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from storage.index import MODEL_KEY
from storage.migrations import migrations

_QUICK_CHECK_ROWS = 5
ENGINE = "sqlite"
QUEUE_ENGINE = "factbot-sqlite"  # factbot's own queue: the jobs table of the same database
QUEUE_ENGINE_TEXT = "factbot's own queue (the jobs table of this SQLite database)"
PG_ENGINE = "postgresql"
PG_QUEUE_ENGINE = "factbot-postgresql"  # the same queue, its jobs table in PostgreSQL
PG_QUEUE_ENGINE_TEXT = "factbot's own queue (the jobs table in PostgreSQL, shared by every node)"
NODE_SECONDS = 60.0  # a worker that heartbeat this recently (and did not stop) is alive


@dataclass(frozen=True)
class DatabaseHealth:
    """What the database file looks like."""

    path: str
    exists: bool
    opens: bool
    error: str = ""  # why it does not open, or what a query failed with
    pending: tuple[str, ...] = ()  # migrations not applied yet (applied on the next open)
    integrity: str = ""  # "ok", or quick_check's first findings; "" when not checked
    documents: int | None = None  # in the local evidence index
    passages: int | None = None
    index_version: str = ""  # digest of the index's documents and embedding model ("": none)
    engine: str = ENGINE  # the database engine
    queue_engine: str = QUEUE_ENGINE
    queue: dict[str, int] | None = None  # jobs by status (queued, running, done, dead)
    nodes: tuple[str, ...] = ()  # live workers on any machine: "host pid (worker id)"
    shared: str = ""  # the PostgreSQL server and database (scaled-out mode), no password

    @property
    def queue_text(self) -> str:
        """Return the queue engine in words."""
        return PG_QUEUE_ENGINE_TEXT if self.engine == PG_ENGINE else QUEUE_ENGINE_TEXT

    @property
    def healthy(self) -> bool:
        """Return whether the database opens and passes its quick check."""
        return self.opens and not self.error and self.integrity in ("ok", "")

    def to_json(self) -> dict[str, Any]:
        """Return the health as a JSON object."""
        return {
            "path": self.path,
            "exists": self.exists,
            "opens": self.opens,
            "error": self.error,
            "migrations_pending": list(self.pending),
            "migrations_current": self.opens and not self.pending,
            "integrity": self.integrity,
            "documents": self.documents,
            "passages": self.passages,
            "index_version": self.index_version,
            "engine": self.engine,
            "queue": {"engine": self.queue_engine, "jobs": self.queue},
            "shared": self.shared,
            "nodes": list(self.nodes),
        }


def database_health(
    path: Path, *, integrity: bool = True, database_url: str | None = None
) -> DatabaseHealth:
    """Return the health of the database at path, opened read-only; integrity runs quick_check.

    With database_url (the scaled-out mode) the file is this node's evidence index, and the
    engine, migrations, queue and live nodes are PostgreSQL's.
    """
    local = _file_health(path, integrity=integrity)
    if not database_url:
        return local
    return _with_shared(local, database_url)


def _with_shared(local: DatabaseHealth, url: str) -> DatabaseHealth:
    from storage import pg_migrations
    from storage.pg import PgDatabase, describe_url

    where = describe_url(url)
    base = replace(local, engine=PG_ENGINE, queue_engine=PG_QUEUE_ENGINE, shared=where, queue=None)
    try:
        db = PgDatabase(url)
    except Exception as exc:  # noqa: BLE001 - failure policy: a field, never raised
        return replace(base, opens=False, error=f"PostgreSQL {where}: {type(exc).__name__}: {exc}")
    try:
        pending = tuple(pg_migrations.pending(db))
        queue = nodes = None
        if "p001_schema" not in pending:
            found = dict(db.execute("SELECT status, count(*) FROM jobs GROUP BY 1").fetchall())
            queue = {s: int(found.get(s, 0)) for s in ("queued", "running", "done", "dead")}
            since = (datetime.now(UTC) - timedelta(seconds=NODE_SECONDS)).isoformat()
            nodes = tuple(
                f"{r[0]} {r[1]} ({r[2]})"
                for r in db.execute(
                    "SELECT host, pid, id FROM workers WHERE stopped_at IS NULL "
                    "AND heartbeat_at >= ? ORDER BY host, pid, id",
                    [since],
                ).fetchall()
            )
        return replace(base, pending=pending, queue=queue, nodes=nodes or ())
    except Exception as exc:  # noqa: BLE001
        return replace(base, error=f"PostgreSQL {where}: {type(exc).__name__}: {exc}")
    finally:
        db.close()


def _file_health(path: Path, *, integrity: bool) -> DatabaseHealth:
    if not path.exists():
        return DatabaseHealth(str(path), exists=False, opens=False, error="no database file yet")
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5.0)
    except sqlite3.Error as exc:
        return DatabaseHealth(str(path), exists=True, opens=False, error=_describe(exc))
    try:
        db = Database(conn)
        try:
            pending = tuple(m.name for m in migrations.pending(db))
        except sqlite3.Error as exc:
            return DatabaseHealth(str(path), exists=True, opens=False, error=_describe(exc))
        found = ""
        if integrity:
            rows = conn.execute(f"PRAGMA quick_check({_QUICK_CHECK_ROWS})").fetchall()
            found = "; ".join(str(row[0]) for row in rows)
        documents = passages = None
        version = ""
        tables = set(db.table_names())
        if {"documents", "passages"} <= tables:
            documents = int(conn.execute("SELECT count(*) FROM documents").fetchone()[0])
            passages = int(conn.execute("SELECT count(*) FROM passages").fetchone()[0])
            version = index_version(conn) if "kv" in tables else ""
        queue = None
        if "jobs" in tables:
            found_jobs = dict(
                conn.execute("SELECT status, count(*) FROM jobs GROUP BY 1").fetchall()
            )
            queue = {s: int(found_jobs.get(s, 0)) for s in ("queued", "running", "done", "dead")}
        return DatabaseHealth(
            str(path),
            exists=True,
            opens=True,
            pending=pending,
            integrity=found,
            documents=documents,
            passages=passages,
            index_version=version,
            queue=queue,
        )
    except sqlite3.Error as exc:
        return DatabaseHealth(str(path), exists=True, opens=True, error=_describe(exc))
    finally:
        conn.close()


def _describe(exc: sqlite3.Error) -> str:
    return f"{type(exc).__name__}: {exc}"


@dataclass(frozen=True)
class MigrationStatus:
    """Which migrations a database has and lacks (read without migrating it)."""

    engine: str
    where: str  # the file, or the PostgreSQL server and database (no password)
    applied: tuple[str, ...]
    pending: tuple[str, ...]


def migration_status(path: Path, *, database_url: str | None = None) -> MigrationStatus:
    """Return the shared database's migrations: applied and pending. Nothing is changed."""
    if database_url:
        from storage import pg_migrations
        from storage.pg import PgDatabase, describe_url

        shared = PgDatabase(database_url)
        try:
            return MigrationStatus(
                PG_ENGINE,
                describe_url(database_url),
                tuple(pg_migrations.applied(shared)),
                tuple(pg_migrations.pending(shared)),
            )
        finally:
            shared.close()
    every = tuple(m.name for m in migrations._migrations)
    if not path.exists():
        return MigrationStatus(ENGINE, str(path), (), every)
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5.0)
    try:
        db = Database(conn)
        pending = tuple(m.name for m in migrations.pending(db))
    finally:
        conn.close()
    return MigrationStatus(ENGINE, str(path), tuple(n for n in every if n not in pending), pending)


def index_version(conn: sqlite3.Connection) -> str:
    """Return a short digest of the evidence index: its documents' ids and content hashes, and
    the embedding model of its vectors.

    Two nodes that ingested the same sources with the same model show the same version,
    whatever the order or time of ingestion; compare it across nodes (`factbot doctor`).
    """
    digest = hashlib.sha256()
    model = conn.execute("SELECT value FROM kv WHERE key = ?", [MODEL_KEY]).fetchone()
    digest.update(f"{model[0] if model else ''}\n".encode())
    for doc_id, content_hash in conn.execute("SELECT id, content_hash FROM documents ORDER BY id"):
        digest.update(f"{doc_id} {content_hash}\n".encode())
    return digest.hexdigest()[:12]
