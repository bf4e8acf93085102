"""What `/metrics` reads: aggregates over the durable tables, the same from every process.

Workers run in any number of processes (`factbot worker`), so a counter kept in a worker's
memory would be seen only by that worker, and lost when it restarts. Everything a check, a job
or a reply leaves behind is already in the database, so the metrics are read from there when
Prometheus scrapes, and the process that serves `/metrics` reports the whole deployment:

- the queue (`jobs`): jobs by kind and status, the attempts they used, the oldest queued job;
- the reply ledger (`replies`): replies by platform and status; what was withheld comes from
  the link audit's job events, the review queue's rejected or expired proposals and X's
  Community Notes that the local scores kept back;
- finished checks (`checks`), summed over a rowid range the caller advances (`check_sums`):
  verdict and judge path, each stage's seconds, the model usage per stage, the search status,
  the post's language.

Failure policy: the queries raise what SQLite raises; the caller decides what a failed scrape
answers. Nothing here writes.
"""

from __future__ import annotations

from collections.abc import Sequence
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
class Histogram:
    """Observations counted at or below each bound (cumulative), their count and sum."""

    buckets: tuple[int, ...]
    count: int
    total: float


@dataclass(frozen=True)
class ModelStage:
    """Language-model usage of one stage, summed over checks."""

    stage: str
    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    failures: int


@dataclass(frozen=True)
class ProviderCount:
    """How many checks asked a search provider, and in how many it never answered."""

    provider: str
    kind: str  # "web" or "reverse image"
    checks: int
    failures: int


@dataclass(frozen=True)
class CheckSums:
    """What the checks stored in a rowid range add to the counters."""

    checks: dict[tuple[str, str], int]  # (verdict, judge path) -> checks
    stages: dict[str, Histogram]  # stage -> its seconds
    duration: Histogram  # a whole check's seconds (its stages summed)
    model: list[ModelStage]
    search: list[ProviderCount]
    live: dict[str, int]  # how live search went -> checks
    languages: dict[str | None, int]  # the post's language (None: not identified) -> checks


class MetricsRepo:
    """Read-only aggregates for the metrics endpoint."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.pg = getattr(db, "dialect", "sqlite") == "postgresql"

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

    def last_check(self) -> int:
        """Return the rowid of the newest stored check (0 when there is none)."""
        return int(self.db.execute("SELECT coalesce(max(rowid), 0) FROM checks").fetchone()[0])

    def check_sums(self, after: int, upto: int, bounds: Sequence[float]) -> CheckSums:
        """Return the sums over checks with `after < rowid <= upto`; seconds binned at bounds.

        Writes are serialised (BEGIN IMMEDIATE), so rowids grow in commit order: a caller that
        keeps `upto` as its next `after` never skips a check nor counts one twice. (One rare
        exception: when `forget` deletes the newest check, the next check takes its rowid and
        is not counted by a caller already past it.) The JSON columns are read by SQLite's own
        JSON functions, in C: 100,000 checks in seconds. On PostgreSQL `immediate` writes hold
        one advisory lock (storage/pg.py), so the `rowid` identity grows in commit order too,
        and the same sums are read with its jsonb functions.
        """
        if self.pg:
            return self._pg_check_sums(after, upto, bounds)
        span = "c.rowid > ? AND c.rowid <= ?"
        checks = {
            (str(r[0]), str(r[1])): int(r[2])
            for r in self.db.execute(
                f"SELECT verdict, judge, count(*) FROM checks AS c WHERE {span} GROUP BY 1, 2",
                [after, upto],
            ).fetchall()
        }
        binned = ", ".join("count(*) FILTER (WHERE x <= ?)" for _ in bounds)
        stages = {
            str(r[0]): _histogram(r[1:], len(bounds))
            for r in self.db.execute(
                f"SELECT stage, {binned}, count(*), coalesce(sum(x), 0) FROM ("
                "SELECT json_extract(t.value, '$[0]') AS stage, json_extract(t.value, '$[1]') AS x "
                f"FROM checks AS c, json_each(c.timings) AS t WHERE {span}) GROUP BY stage",
                [*bounds, after, upto],
            ).fetchall()
        }
        whole = self.db.execute(
            f"SELECT {binned}, count(*), coalesce(sum(x), 0) FROM ("
            "SELECT coalesce(sum(json_extract(t.value, '$[1]')), 0) AS x "
            f"FROM checks AS c LEFT JOIN json_each(c.timings) AS t WHERE {span} GROUP BY c.rowid)",
            [*bounds, after, upto],
        ).fetchone()
        model = [
            ModelStage(str(r[0]), int(r[1]), int(r[2]), int(r[3]), float(r[4]), int(r[5]))
            for r in self.db.execute(
                "SELECT json_extract(u.value, '$.stage'), "
                "sum(coalesce(json_extract(u.value, '$.calls'), 0)), "
                "sum(coalesce(json_extract(u.value, '$.input_tokens'), 0)), "
                "sum(coalesce(json_extract(u.value, '$.output_tokens'), 0)), "
                "sum(coalesce(json_extract(u.value, '$.cost_usd'), 0.0)), "
                "sum(coalesce(json_extract(u.value, '$.failures'), 0)) "
                f"FROM checks AS c, json_each(c.usage) AS u WHERE {span} GROUP BY 1 ORDER BY 1",
                [after, upto],
            ).fetchall()
        ]
        search = [
            ProviderCount(str(r[0]), kind, int(r[1]), int(r[2]))
            for kind, path in (("web", "$.providers"), ("reverse image", "$.reverse_image"))
            for r in self.db.execute(
                "SELECT json_extract(p.value, '$.provider'), count(*), "
                "sum(NOT coalesce(json_extract(p.value, '$.reachable'), 0)) "
                f"FROM checks AS c, json_each(c.search_status, ?) AS p WHERE {span} "
                "GROUP BY 1 ORDER BY 1",
                [path, after, upto],
            ).fetchall()
        ]
        live = {
            str(r[0]): int(r[1])
            for r in self.db.execute(
                "SELECT coalesce(json_extract(c.search_status, '$.live'), 'off'), count(*) "
                f"FROM checks AS c WHERE {span} GROUP BY 1",
                [after, upto],
            ).fetchall()
        }
        return CheckSums(
            languages=self._languages(after, upto),
            checks=checks,
            stages=stages,
            duration=_histogram(whole, len(bounds)),
            model=model,
            search=search,
            live=live,
        )

    def _pg_check_sums(self, after: int, upto: int, bounds: Sequence[float]) -> CheckSums:
        """`check_sums` on PostgreSQL: the same sums through jsonb."""
        span = "c.rowid > ? AND c.rowid <= ?"
        binned = ", ".join("count(*) FILTER (WHERE x <= ?)" for _ in bounds)
        checks = {
            (str(r[0]), str(r[1])): int(r[2])
            for r in self.db.execute(
                f"SELECT verdict, judge, count(*) FROM checks AS c WHERE {span} GROUP BY 1, 2",
                [after, upto],
            ).fetchall()
        }
        stages = {
            str(r[0]): _histogram(r[1:], len(bounds))
            for r in self.db.execute(
                f"SELECT stage, {binned}, count(*), coalesce(sum(x), 0) FROM ("
                "SELECT t.value ->> 0 AS stage, (t.value ->> 1)::float8 AS x "
                "FROM checks AS c, jsonb_array_elements(c.timings::jsonb) AS t(value) "
                f"WHERE {span}) AS s GROUP BY stage",
                [*bounds, after, upto],
            ).fetchall()
        }
        whole = self.db.execute(
            f"SELECT {binned}, count(*), coalesce(sum(x), 0) FROM ("
            "SELECT coalesce(sum((t.value ->> 1)::float8), 0) AS x FROM checks AS c "
            "LEFT JOIN jsonb_array_elements(c.timings::jsonb) AS t(value) ON true "
            f"WHERE {span} GROUP BY c.rowid) AS s",
            [*bounds, after, upto],
        ).fetchone()
        number = "coalesce((u.value ->> '{}')::float8, 0)"
        model = [
            ModelStage(str(r[0]), int(r[1]), int(r[2]), int(r[3]), float(r[4]), int(r[5]))
            for r in self.db.execute(
                "SELECT u.value ->> 'stage', "
                + ", ".join(
                    f"sum({number.format(k)})"
                    for k in ("calls", "input_tokens", "output_tokens", "cost_usd", "failures")
                )
                + " FROM checks AS c, jsonb_array_elements(c.usage::jsonb) AS u(value) "
                f"WHERE {span} GROUP BY 1 ORDER BY 1",
                [after, upto],
            ).fetchall()
        ]
        search = [
            ProviderCount(str(r[0]), kind, int(r[1]), int(r[2]))
            for kind, key in (("web", "providers"), ("reverse image", "reverse_image"))
            for r in self.db.execute(
                "SELECT p.value ->> 'provider', count(*), "
                "sum(CASE WHEN coalesce((p.value ->> 'reachable')::boolean, false) "
                "THEN 0 ELSE 1 END) FROM checks AS c, jsonb_array_elements(CASE WHEN "
                "jsonb_typeof(c.search_status::jsonb -> ?) = 'array' "
                "THEN c.search_status::jsonb -> ? ELSE '[]'::jsonb END) AS p(value) "
                f"WHERE {span} GROUP BY 1 ORDER BY 1",
                [key, key, after, upto],
            ).fetchall()
        ]
        live = {
            str(r[0]): int(r[1])
            for r in self.db.execute(
                "SELECT coalesce(c.search_status::jsonb ->> 'live', 'off'), count(*) "
                f"FROM checks AS c WHERE {span} GROUP BY 1",
                [after, upto],
            ).fetchall()
        }
        return CheckSums(
            languages=self._languages(after, upto),
            checks=checks,
            stages=stages,
            duration=_histogram(whole, len(bounds)),
            model=model,
            search=search,
            live=live,
        )

    def _languages(self, after: int, upto: int) -> dict[str | None, int]:
        """Return checks by their post's language (None: identification off or not yet run)."""
        return {
            (None if r[0] is None else str(r[0])): int(r[1])
            for r in self.db.execute(
                "SELECT p.language, count(*) FROM checks AS c LEFT JOIN posts AS p "
                "ON p.id = c.post_id WHERE c.rowid > ? AND c.rowid <= ? GROUP BY 1",
                [after, upto],
            ).fetchall()
        }


def _histogram(row: Sequence[Any], n: int) -> Histogram:
    return Histogram(
        buckets=tuple(int(v) for v in row[:n]), count=int(row[n]), total=float(row[n + 1])
    )
