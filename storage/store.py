"""The store: one SQLite database (WAL), or its shared tables in PostgreSQL, migrated on open.

`Store` groups the tables by concern: `documents` (the local evidence index), `checks` (posts,
checks, claims, evidence), `sources` (credibility), `jobs` (the durable queue), `replies` (the
reply ledger), `workers` (who is alive), `state` (small values by key), `platform` (rate-limit
buckets, platform requests, opt-outs), `images` (the image index, for provenance), `faces`
(the gallery of known public figures), `review` (proposed corrections and their decisions),
`web` (search, page and reachability caches), `monitor` (the proactive monitor's lease,
candidates and actions), `users` (dashboard operators), `browse` (the dashboard's filtered
lists and figures), `metrics` (the aggregates `/metrics` reads) and `fact_checks` (the
operator's index of published fact-checks, loaded from ClaimReview feeds). Each multi-table
write happens inside one transaction.

Two engines. By default everything lives in one SQLite file. With a PostgreSQL URL
(`FACTBOT_DATABASE_URL`, the scaled-out mode) every shared table moves to PostgreSQL
(storage/pg.py, storage/pg_migrations.py) and the SQLite file keeps only what each node holds
for itself: the evidence index (`documents`: documents, passages, FTS5, vectors), the image
index and the face gallery. Those are large, read-mostly and rebuilt from their sources
(Debian has no pgvector, and FTS5's BM25 ranking is what retrieval was tuned on); each node
ingests the same sources (or gets a copy of the file), and `factbot doctor` shows each node's
index version. The repositories and everything above them are the same on both engines.

The repositories are synchronous. Async code calls them through `Store.call`, which runs them
in the store's small pool of storage threads (storage/threads.py), each with its own
connection (storage/tx.py, storage/pg.py), so the event loop never waits on the database.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, ParamSpec, TypeVar

from sqlite_utils import Database

from pipeline.util.clock import SYSTEM, Clock
from storage import pg_migrations
from storage.browse import BrowseRepo
from storage.checks import CheckRepo
from storage.faces import FaceGalleryRepo
from storage.factchecks import FactCheckRepo
from storage.images import ImageIndexRepo
from storage.index import DocumentIndex
from storage.jobs import JobQueue
from storage.metrics import MetricsRepo
from storage.migrations import migrations
from storage.monitor import MonitorRepo
from storage.pg import PgDatabase
from storage.platform import PlatformRepo
from storage.replies import ReplyLedger
from storage.reuse import ReuseRepo
from storage.review import ReviewRepo
from storage.sources import SourceTable
from storage.state import StateRepo
from storage.threads import THREADS, LoopGuard, StorageThreads
from storage.tx import SerialDatabase, immediate
from storage.users import UserRepo
from storage.webcache import WebCache
from storage.workers import WorkerRegistry

P = ParamSpec("P")
T = TypeVar("T")


class Store:
    """The database and its repositories."""

    def __init__(
        self,
        db: Database | PgDatabase,
        *,
        clock: Clock = SYSTEM,
        index_db: Database | None = None,
        threads: int = THREADS,
    ) -> None:
        # sqlite-utils Database or PgDatabase: the repositories' calls answer alike on both.
        shared: Any = db
        self.db: Any = shared
        self.index_db: Database = index_db if index_db is not None else shared
        self.clock = clock
        self.threads = StorageThreads(threads)
        self.engine: str = getattr(db, "dialect", "sqlite")
        self.documents = DocumentIndex(self.index_db)
        self.checks = CheckRepo(shared, index_db=self.index_db)
        self.sources = SourceTable(shared)
        self.jobs = JobQueue(shared, clock=clock)
        self.replies = ReplyLedger(shared, clock=clock)
        self.workers = WorkerRegistry(shared, clock=clock)
        self.web = WebCache(shared, clock=clock)
        self.reuse = ReuseRepo(shared)
        self.images = ImageIndexRepo(self.index_db)
        self.faces = FaceGalleryRepo(self.index_db, clock=clock)
        self.state = StateRepo(shared, clock=clock)
        self.platform = PlatformRepo(shared, clock=clock)
        self.monitor = MonitorRepo(shared, clock=clock)
        self.review = ReviewRepo(shared, clock=clock)
        self.users = UserRepo(shared, clock=clock)
        self.browse = BrowseRepo(shared)
        self.metrics = MetricsRepo(shared)
        self.fact_checks = FactCheckRepo(shared)

    @classmethod
    def open(
        cls,
        path: Path | str,
        *,
        clock: Clock = SYSTEM,
        database_url: str | None = None,
        threads: int = THREADS,
    ) -> Store:
        """Open (creating if needed) the database at path, apply migrations; time reads clock.

        With database_url (postgresql://...), the shared tables are that database's (migrated
        on open, once whatever the number of processes opening it) and path keeps this node's
        evidence index. `threads` bounds the storage pool (`storage.threads`), and with it
        this process's connections.
        """
        local = cls._open_sqlite(path)
        if not database_url:
            return cls(local, clock=clock, threads=threads)
        if not database_url.startswith(("postgresql://", "postgres://")):
            local.close()
            scheme = database_url.split(":")[0]
            raise ValueError(f"FACTBOT_DATABASE_URL must be a postgresql:// URL, not {scheme!r}")
        try:
            shared = PgDatabase(database_url)
            pg_migrations.apply(shared)
        except BaseException:
            local.close()
            raise
        return cls(shared, clock=clock, index_db=local, threads=threads)

    @staticmethod
    def _open_sqlite(path: Path | str) -> Database:
        memory = str(path) == ":memory:"
        if not memory:
            Path(path).parent.mkdir(parents=True, exist_ok=True)

        def connect() -> sqlite3.Connection:
            # check_same_thread=False: `close` closes every thread's connection from one thread.
            conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30.0)
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA busy_timeout = 30000")
            conn.execute("PRAGMA recursive_triggers = ON")  # as sqlite-utils sets on its own
            if not memory:
                conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            return conn

        # A file database: a connection per thread (storage/tx.py); memory: one, shared.
        db = SerialDatabase(connect(), connect=None if memory else connect)
        with immediate(db):  # processes opening one new database migrate it one at a time
            migrations.apply(db)
        return db

    def applied_migrations(self) -> list[str]:
        """Return the names of the migrations applied to the shared database."""
        if isinstance(self.db, PgDatabase):
            return pg_migrations.applied(self.db)
        return [m.name for m in migrations.applied(self.db)]

    def pending_migrations(self) -> list[str]:
        """Return the names of the shared database's migrations not applied yet."""
        if isinstance(self.db, PgDatabase):
            return pg_migrations.pending(self.db)
        return [m.name for m in migrations.pending(self.db)]

    def journal_mode(self) -> str:
        """Return SQLite's journal mode of the local file (``wal`` for file databases)."""
        return str(self.index_db.execute("PRAGMA journal_mode").fetchone()[0])

    async def call(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Run a synchronous storage call (a repository's method, or a function of several)
        in a storage thread, off the event loop; return its result (storage/threads.py)."""
        return await self.threads.call(fn, *args, **kwargs)

    def guard_loop(self, *, raises: bool = True) -> list[str]:
        """Make every statement on a thread running an event loop raise (tests call this), or
        only be recorded (`raises` False); return the list where they are recorded."""
        violations: list[str] = []
        databases: tuple[Any, ...] = (self.db, self.index_db)
        for db in databases:
            guard: LoopGuard = db.guard
            guard.armed = True
            guard.raises = raises
            guard.violations = violations
        return violations

    def ping(self) -> None:
        """Ask the shared database for a row; raise what the engine raises when it cannot."""
        self.db.execute("SELECT 1").fetchone()

    def close(self) -> None:
        """Stop the storage threads (after their calls in flight), then close the connections."""
        self.threads.close()
        self.db.close()
        if self.index_db is not self.db:
            self.index_db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
