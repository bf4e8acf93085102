"""What `/metrics` reads: aggregates over the durable tables, the same from every process.

Workers run in any number of processes (`factbot worker`), so a counter kept in a worker's
memory would be seen only by that worker, and lost when it restarts. Everything a check, a job
or a reply leaves behind is already in the database, so the metrics are read from there when
Prometheus scrapes, and the process that serves `/metrics` reports the whole deployment:

- the queue (`jobs`): jobs by kind and status, the attempts they used, the oldest queued job;
- the reply ledger (`replies`): replies by platform and status; what was withheld comes from
  the link audit's job events, the review queue's rejected or expired proposals and X's
  Community Notes that the local scores kept back;
- finished checks (`checks`), read in rowid order from a cursor the caller keeps (`checks_after`):
  verdict and judge path, each stage's seconds, the model usage per stage, the search status.

Failure policy: the queries raise what SQLite raises; the caller decides what a failed scrape
answers. Nothing here writes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlite_utils import Database

from storage.codec import dt_in

# The job event the reply step records when its audit withheld a rendered reply.
WITHHELD_STAGE = "reply"
WITHHELD_STATUS = "withheld"


@dataclass(frozen=True)
class JobGroup:
    """The jobs of one kind in one status."""

    kind: str
    status: str
    jobs: int
    attempts: int  # attempts these jobs used, summed
    oldest: datetime | None  # when the oldest of them was enqueued


@dataclass(frozen=True)
class ReplyGroup:
    """Replies of one platform in one status (sent, failed, pending) or withheld for a reason."""

    platform: str
    status: str
    replies: int


@dataclass(frozen=True)
class CheckFacts:
    """What the metrics read of one stored check."""

    seq: int  # the check's rowid: the cursor `checks_after` continues from
    verdict: str
    judge: str  # the judge path: "model" or "no-model"
    timings: tuple[tuple[str, float], ...]
    usage: tuple[dict[str, Any], ...]
    search: dict[str, Any]


class MetricsRepo:
    """Read-only aggregates for the metrics endpoint."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def jobs(self) -> list[JobGroup]:
        """Return the jobs grouped by kind and status."""
        rows = self.db.execute(
            "SELECT kind, status, count(*), coalesce(sum(attempts), 0), min(created_at) "
            "FROM jobs GROUP BY kind, status ORDER BY kind, status"
        ).fetchall()
        return [JobGroup(r[0], r[1], int(r[2]), int(r[3]), dt_in(r[4])) for r in rows]

    def replies(self) -> list[ReplyGroup]:
        """Return the reply ledger grouped by platform and status."""
        rows = self.db.execute(
            "SELECT platform, status, count(*) FROM replies GROUP BY platform, status "
            "ORDER BY platform, status"
        ).fetchall()
        return [ReplyGroup(r[0], r[1], int(r[2])) for r in rows]

    def withheld(self) -> list[ReplyGroup]:
        """Return replies factbot held back, by platform and reason (in `status`)."""
        audited = self.db.execute(
            "SELECT coalesce(json_extract(detail, '$.platform'), ''), count(*) FROM job_events "
            "WHERE stage = ? AND status = ? GROUP BY 1",
            [WITHHELD_STAGE, WITHHELD_STATUS],
        ).fetchall()
        reviewed = self.db.execute(
            "SELECT platform, 'review ' || status, count(*) FROM review_proposals "
            "WHERE status IN ('rejected', 'expired') GROUP BY platform, status"
        ).fetchall()
        notes = self.db.execute(
            "SELECT count(*) FROM x_notes WHERE status = 'withheld'"
        ).fetchone()[0]
        found = [ReplyGroup(r[0], "unretrieved link", int(r[1])) for r in audited]
        found += [ReplyGroup(r[0], r[1], int(r[2])) for r in reviewed]
        if notes:
            found.append(ReplyGroup("x", "note scores", int(notes)))
        return found

    def checks_after(self, seq: int, *, limit: int = 2000) -> list[CheckFacts]:
        """Return up to `limit` checks stored after rowid `seq`, in the order they were stored.

        Writes to the database are serialised (BEGIN IMMEDIATE), so rowids grow in commit
        order and a cursor never skips a check that commits later with a smaller rowid.
        """
        rows = self.db.execute(
            "SELECT rowid, verdict, judge, timings, usage, search_status FROM checks "
            "WHERE rowid > ? ORDER BY rowid LIMIT ?",
            [seq, limit],
        ).fetchall()
        return [
            CheckFacts(
                seq=int(r[0]),
                verdict=str(r[1]),
                judge=str(r[2]),
                timings=tuple((str(s), float(t)) for s, t in _list(r[3])),
                usage=tuple(u for u in _list(r[4]) if isinstance(u, dict)),
                search=_dict(r[5]),
            )
            for r in rows
        ]


def _list(value: str | None) -> list[Any]:
    data = json.loads(value) if value else []
    return data if isinstance(data, list) else []


def _dict(value: str | None) -> dict[str, Any]:
    data = json.loads(value) if value else {}
    return data if isinstance(data, dict) else {}
