"""The store: one SQLite database (WAL) with migrations applied on open.

`Store` groups the tables by concern: `documents` (the local evidence index), `checks` (posts,
checks, claims, evidence), `sources` (credibility), `jobs` (the durable queue), `replies` (the
reply ledger), `workers` (who is alive), `state` (small values by key), `platform` (rate-limit
buckets, platform requests, opt-outs), `images` (the image index, for provenance), `faces`
(the gallery of known public figures), `review` (proposed corrections and their decisions),
`web` (search, page and reachability caches), `monitor` (the proactive monitor's lease,
candidates and actions), `users` (dashboard operators), `browse` (the dashboard's filtered
lists and figures) and `metrics` (the aggregates `/metrics` reads). Each multi-table write
happens inside one transaction.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import TracebackType

from sqlite_utils import Database

from pipeline.util.clock import SYSTEM, Clock
from storage.browse import BrowseRepo
from storage.checks import CheckRepo
from storage.faces import FaceGalleryRepo
from storage.images import ImageIndexRepo
from storage.index import DocumentIndex
from storage.jobs import JobQueue
from storage.metrics import MetricsRepo
from storage.migrations import migrations
from storage.monitor import MonitorRepo
from storage.platform import PlatformRepo
from storage.replies import ReplyLedger
from storage.reuse import ReuseRepo
from storage.review import ReviewRepo
from storage.sources import SourceTable
from storage.state import StateRepo
from storage.tx import SerialDatabase, immediate
from storage.users import UserRepo
from storage.webcache import WebCache
from storage.workers import WorkerRegistry


class Store:
    """The database and its repositories."""

    def __init__(self, db: Database, *, clock: Clock = SYSTEM) -> None:
        self.db = db
        self.clock = clock
        self.documents = DocumentIndex(db)
        self.checks = CheckRepo(db)
        self.sources = SourceTable(db)
        self.jobs = JobQueue(db, clock=clock)
        self.replies = ReplyLedger(db, clock=clock)
        self.workers = WorkerRegistry(db, clock=clock)
        self.web = WebCache(db, clock=clock)
        self.reuse = ReuseRepo(db)
        self.images = ImageIndexRepo(db)
        self.faces = FaceGalleryRepo(db, clock=clock)
        self.state = StateRepo(db, clock=clock)
        self.platform = PlatformRepo(db, clock=clock)
        self.monitor = MonitorRepo(db, clock=clock)
        self.review = ReviewRepo(db, clock=clock)
        self.users = UserRepo(db, clock=clock)
        self.browse = BrowseRepo(db)
        self.metrics = MetricsRepo(db)

    @classmethod
    def open(cls, path: Path | str, *, clock: Clock = SYSTEM) -> Store:
        """Open (creating if needed) the database at path, apply migrations; time reads clock."""
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30.0)
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA busy_timeout = 30000")
        db = SerialDatabase(conn)
        if str(path) != ":memory:":
            db.enable_wal()
        conn.execute("PRAGMA synchronous = NORMAL")
        with immediate(db):  # processes opening one new database migrate it one at a time
            migrations.apply(db)
        return cls(db, clock=clock)

    def applied_migrations(self) -> list[str]:
        """Return the names of the migrations applied to this database."""
        return [m.name for m in migrations.applied(self.db)]

    def journal_mode(self) -> str:
        """Return SQLite's journal mode (``wal`` for file databases)."""
        return str(self.db.execute("PRAGMA journal_mode").fetchone()[0])

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
