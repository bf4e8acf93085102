"""Worker processes register here and heartbeat, so any process can tell which are alive."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlite_utils import Database

from pipeline.util.clock import SYSTEM, Clock
from storage.codec import dt_in, dt_out


@dataclass(frozen=True)
class WorkerRecord:
    """One worker as it last reported itself."""

    id: str
    pid: int
    host: str
    started_at: datetime | None
    heartbeat_at: datetime | None
    stopped_at: datetime | None


class WorkerRegistry:
    """Register, heartbeat and list workers."""

    def __init__(self, db: Database, *, clock: Clock = SYSTEM) -> None:
        self.db = db
        self.clock = clock

    def register(self, worker_id: str) -> None:
        """Record that worker_id started in this process."""
        now = dt_out(self.clock.now())
        self.db.execute(
            "INSERT INTO workers (id, pid, host, started_at, heartbeat_at, stopped_at) "
            "VALUES (?,?,?,?,?,NULL) ON CONFLICT(id) DO UPDATE SET pid = excluded.pid, "
            "host = excluded.host, started_at = excluded.started_at, "
            "heartbeat_at = excluded.heartbeat_at, stopped_at = NULL",
            [worker_id, os.getpid(), socket.gethostname(), now, now],
        )

    def heartbeat(self, worker_id: str) -> None:
        """Record that worker_id is alive now."""
        self.db.execute(
            "UPDATE workers SET heartbeat_at = ? WHERE id = ?",
            [dt_out(self.clock.now()), worker_id],
        )

    def stopped(self, worker_id: str) -> None:
        """Record that worker_id stopped cleanly."""
        self.db.execute(
            "UPDATE workers SET stopped_at = ? WHERE id = ?", [dt_out(self.clock.now()), worker_id]
        )

    def alive(self, *, within: float) -> list[WorkerRecord]:
        """Return workers that heartbeat in the last `within` seconds and did not stop."""
        since = dt_out(self.clock.now() - timedelta(seconds=within))
        rows = self.db.query(
            "SELECT * FROM workers WHERE stopped_at IS NULL AND heartbeat_at >= ? ORDER BY id",
            [since],
        )
        return [
            WorkerRecord(
                id=r["id"],
                pid=r["pid"],
                host=r["host"],
                started_at=dt_in(r["started_at"]),
                heartbeat_at=dt_in(r["heartbeat_at"]),
                stopped_at=dt_in(r["stopped_at"]),
            )
            for r in rows
        ]
