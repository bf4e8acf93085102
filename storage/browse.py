"""What the dashboard reads: checks filtered, searched and paged, and the overview's figures.

Search goes through the `check_text` FTS5 table that triggers keep in step with posts and
claims (see m018_dashboard): a check's rows are the rowid range ``checks.rowid * 1024 ...``,
so matches map back to checks without a join column. Words typed by a user are quoted one by
one before they reach MATCH, so FTS syntax (``OR``, ``NEAR``, quotes) is searched as text and
never raises; the last word matches as a prefix. After a VACUUM (which may renumber rowids)
call `rebuild_search`.

On PostgreSQL `check_text` is a table with the same rowids, a stored `tsvector` ('simple'
configuration: no stemming, as unicode61) and a GIN index (storage/pg_migrations.py); the
words become a `to_tsquery` of the same shape (all words, the last a prefix), and the page
comes back in the same `CheckPage`.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlite_utils import Database

from storage.codec import dt_in, dt_out
from storage.tx import immediate

PAGE_SIZE = 50
NO_LANGUAGE = "none"  # the language filter's value for posts stored before identification
COUNT_CAP = 1000  # a search counts its matches exactly up to here, then says "1,000+"
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True)
class CheckFilter:
    """What the checks list shows: every field narrows it; None means any."""

    platform: str | None = None
    verdict: str | None = None
    judge: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    reviewed: bool | None = None
    query: str | None = None
    language: str | None = None  # the post's (ISO 639-1, zh-Hans/zh-Hant, und); "none": unset


@dataclass(frozen=True)
class CheckRow:
    """One line of the checks list."""

    id: str
    created_at: datetime
    verdict: str
    judge: str
    platform: str
    text: str
    cost_usd: float
    language: str | None = None  # the post's language; None: stored before identification


@dataclass(frozen=True)
class CheckPage:
    """A page of the checks list and how many checks match in all (a broad search: at least)."""

    rows: tuple[CheckRow, ...]
    total: int  # COUNT_CAP when capped
    page: int
    pages: int
    capped: bool = False  # more than `total` match: a search too broad to count (and page)


def match_expression(query: str) -> str | None:
    """Return an FTS5 MATCH expression of the words in query (all of them), or None."""
    words = _WORD.findall(query)[:12]
    if not words:
        return None
    quoted = [f'"{w}"' for w in words]
    quoted[-1] += "*"
    return " ".join(quoted)


def tsquery_expression(query: str) -> str | None:
    """Return a PostgreSQL to_tsquery expression of the words in query (all), or None."""
    words = _WORD.findall(query)[:12]
    if not words:
        return None
    quoted = [f"'{w}'" for w in words]  # \w+ holds no quote: nothing else to escape
    quoted[-1] += ":*"
    return " & ".join(quoted)


class BrowseRepo:
    """Queries behind the dashboard's pages."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.pg = getattr(db, "dialect", "sqlite") == "postgresql"

    def _expression(self, query: str) -> str | None:
        return tsquery_expression(query) if self.pg else match_expression(query)

    def _cost_sql(self) -> str:
        """The cost of check `c`'s model calls, as SQL."""
        if self.pg:
            return (
                "(SELECT coalesce(sum((u.value ->> 'cost_usd')::float8), 0) "
                "FROM jsonb_array_elements(c.usage::jsonb) AS u(value))"
            )
        return (
            "(SELECT coalesce(sum(json_extract(u.value, '$.cost_usd')), 0) "
            "FROM json_each(c.usage) AS u)"
        )

    def checks(
        self, where: CheckFilter, *, page: int = 1, size: int = PAGE_SIZE, cap: int = COUNT_CAP
    ) -> CheckPage:
        """Return one page of the checks that match, newest first.

        The page's rowids are picked from the checks table (and its indexes) alone, then
        joined with their posts: a deep page does not join every row it skips.

        A search reads its matching checks from the FTS index once, up to `COUNT_CAP` + 1 of
        them (the index stops early when there are more). Up to the cap, those rowids are the
        search's condition: the rest is counted exactly and sorted by time without touching
        the index again. Beyond it, the checks are walked newest first through the time index
        and each is tested against the matches (`walk`), and the total is "more than
        COUNT_CAP" (`CheckPage.capped`): counting every match is what made searches slow.
        """
        found = self._matches(where.query or "", cap)
        walk = found is not None and len(found) > cap
        clauses, params = self._where(where, matches=None if walk else found)
        sql_where = (" WHERE " + " AND ".join(clauses)) if clauses else ""
        if walk and len(clauses) == 1:  # the search alone: the FTS index said it all
            total = cap + 1
        else:
            limit = f" LIMIT {int(cap) + 1}" if walk else ""
            total = int(
                self.db.execute(
                    f"SELECT count(*) FROM (SELECT 1 FROM checks AS c{sql_where}{limit}) AS t",
                    params,
                ).fetchone()[0]
            )
        capped = walk and total > cap
        shown = cap if capped else total
        pages = max(1, -(-shown // size))
        page = min(max(1, page), pages)
        rows = self.db.execute(
            "SELECT c.id, c.created_at, c.verdict, c.judge, p.platform, substr(p.text, 1, 200), "
            f"{self._cost_sql()}, p.language FROM checks AS c JOIN posts AS p ON p.id = c.post_id "
            f"WHERE c.rowid IN (SELECT c.rowid FROM checks AS c{sql_where} "
            "ORDER BY c.created_at DESC LIMIT ? OFFSET ?) ORDER BY c.created_at DESC",
            [*params, size, (page - 1) * size],
        ).fetchall()
        return CheckPage(
            rows=tuple(
                CheckRow(
                    id=r[0],
                    created_at=_dt(r[1]),
                    verdict=r[2],
                    judge=r[3],
                    platform=r[4],
                    text=r[5],
                    cost_usd=float(r[6]),
                    language=r[7],
                )
                for r in rows
            ),
            total=shown,
            page=page,
            pages=pages,
            capped=capped,
        )

    def _matches(self, query: str, cap: int) -> list[int] | None:
        """Return the rowids of the checks a search matches (up to cap + 1), else None."""
        expression = self._expression(query)
        if expression is None:
            return None
        if self.pg:
            return self._pg_matches(expression, cap)
        rows = self.db.execute(
            "SELECT DISTINCT rowid / 1024 FROM check_text WHERE "
            + ("tsv @@ to_tsquery('simple', ?)" if self.pg else "check_text MATCH ?")
            + " LIMIT ?",
            [expression, cap + 1],
        ).fetchall()
        return [int(r[0]) for r in rows]

    def _pg_matches(self, expression: str, cap: int) -> list[int]:
        """`_matches` on PostgreSQL: a DISTINCT over every match reads them all (a GIN bitmap
        has no order to stop early in), so the first rows are read raw, a few per check, and
        deduplicated here; only when those do not settle it is every match read."""
        probe = 3 * (cap + 1)
        rows = self.db.execute(
            "SELECT rowid / 1024 FROM check_text WHERE tsv @@ to_tsquery('simple', ?) LIMIT ?",
            [expression, probe],
        ).fetchall()
        found = list(dict.fromkeys(int(r[0]) for r in rows))
        if len(found) > cap or len(rows) < probe:
            return found[: cap + 1]
        rows = self.db.execute(
            "SELECT DISTINCT rowid / 1024 FROM check_text "
            "WHERE tsv @@ to_tsquery('simple', ?) LIMIT ?",
            [expression, cap + 1],
        ).fetchall()
        return [int(r[0]) for r in rows]

    def _where(
        self, where: CheckFilter, *, matches: list[int] | None = None
    ) -> tuple[list[str], list[Any]]:
        """Return the SQL conditions of a filter.

        With a search, `matches` are the checks it matched (all of them); without, the search
        is a subquery on the FTS index that the time index's walk tests each check against.
        """
        expression = self._expression(where.query or "")
        walk = expression is not None and matches is None
        clauses: list[str] = []
        params: list[Any] = []
        for column, value in (("c.verdict", where.verdict), ("c.judge", where.judge)):
            if value:
                clauses.append(f"{column} = ?")
                params.append(value)
        if where.platform and walk:  # tested on each check the time index walks through
            clauses.append("(SELECT platform FROM posts WHERE id = c.post_id) = ?")
            params.append(where.platform)
        elif where.platform:
            clauses.append("c.post_id IN (SELECT id FROM posts WHERE platform = ?)")
            params.append(where.platform)
        if where.language == NO_LANGUAGE:  # checks stored before languages were identified
            clauses.append("c.post_id IN (SELECT id FROM posts WHERE language IS NULL)")
        elif where.language:
            clauses.append("c.post_id IN (SELECT id FROM posts WHERE language = ?)")
            params.append(where.language)
        if where.since is not None:
            clauses.append("c.created_at >= ?")
            params.append(dt_out(where.since))
        if where.until is not None:
            clauses.append("c.created_at < ?")
            params.append(dt_out(where.until))
        if where.reviewed is not None:
            clauses.append(
                ("" if where.reviewed else "NOT ")
                + "EXISTS (SELECT 1 FROM review_proposals AS rp JOIN review_decisions AS d "
                "ON d.proposal_id = rp.id WHERE rp.check_id = c.id)"
            )
        if expression is not None and matches is not None and self.pg:
            clauses.append("c.rowid = ANY(?)")
            params.append(matches)
        elif expression is not None and matches is not None:
            clauses.append("c.rowid IN (SELECT value FROM json_each(?))")
            params.append(json.dumps(matches))
        elif expression is not None and self.pg:
            # A scalar subquery with LIMIT is not turned into a join: the planner walks the
            # time index and tests each check's own rows (its rowid range), as on SQLite.
            clauses.append(
                "(SELECT true FROM check_text AS t WHERE t.rowid BETWEEN c.rowid * 1024 "
                "AND c.rowid * 1024 + 1023 AND t.tsv @@ to_tsquery('simple', ?) LIMIT 1)"
            )
            params.append(expression)
        elif expression is not None:
            # "+": the rowid is then no index to drive the query, so the planner walks the
            # time index and tests each check against the matches (an IN list is a set).
            clauses.append(
                "+c.rowid IN (SELECT rowid / 1024 FROM check_text WHERE check_text MATCH ?)"
            )
            params.append(expression)
        return clauses, params

    def choices(self) -> dict[str, list[str]]:
        """Return the platforms, verdicts, judges and languages that occur, for the filter menus.

        Each is read by skipping through its index (one probe per distinct value), so the
        menus cost the same with a hundred checks or a million.
        """
        return {
            "platform": self._distinct("posts", "platform"),
            "verdict": self._distinct("checks", "verdict"),
            "judge": self._distinct("checks", "judge"),
            "language": self._distinct("posts", "language"),
        }

    def _distinct(self, table: str, column: str) -> list[str]:
        found: list[str] = []
        value = self.db.execute(f"SELECT min({column}) FROM {table}").fetchone()[0]
        while value is not None and len(found) < 100:
            found.append(str(value))
            value = self.db.execute(
                f"SELECT min({column}) FROM {table} WHERE {column} > ?", [value]
            ).fetchone()[0]
        return found

    def checks_per_day(self, since: datetime) -> dict[str, dict[str, int]]:
        """Return {day: {verdict: count}} for checks made since then (UTC days)."""
        found: dict[str, dict[str, int]] = defaultdict(dict)
        for day, verdict, count in self.db.execute(
            "SELECT substr(created_at, 1, 10), verdict, count(*) FROM checks "
            "WHERE created_at >= ? GROUP BY 1, 2 ORDER BY 1",
            [dt_out(since)],
        ):
            found[day][verdict] = int(count)
        return dict(found)

    def cost_per_day(self, since: datetime) -> dict[str, float]:
        """Return {day: model cost in USD} of checks made since then."""
        return {
            day: float(cost)
            for day, cost in self.db.execute(
                (
                    "SELECT substr(c.created_at, 1, 10), sum((u.value ->> 'cost_usd')::float8) "
                    "FROM checks AS c, jsonb_array_elements(c.usage::jsonb) AS u(value) "
                    if self.pg
                    else "SELECT substr(c.created_at, 1, 10), "
                    "sum(json_extract(u.value, '$.cost_usd')) FROM checks AS c, "
                    "json_each(c.usage) AS u "
                )
                + "WHERE c.created_at >= ? GROUP BY 1 ORDER BY 1",
                [dt_out(since)],
            )
        }

    def stage_seconds(self, since: datetime, *, limit: int = 5000) -> dict[str, list[float]]:
        """Return each stage's durations over the latest checks since then (at most limit)."""
        seconds: dict[str, list[float]] = defaultdict(list)
        for (timings,) in self.db.execute(
            "SELECT timings FROM checks WHERE created_at >= ? ORDER BY created_at DESC LIMIT ?",
            [dt_out(since), limit],
        ):
            for stage, value in json.loads(timings):
                seconds[stage].append(float(value))
        return dict(seconds)

    def reachability(self) -> dict[str, int]:
        """Return how many cited URLs were last found reachable and unreachable."""
        counts = dict(
            self.db.execute("SELECT reachable, count(*) FROM url_checks GROUP BY 1").fetchall()
        )
        return {"reachable": int(counts.get(1, 0)), "unreachable": int(counts.get(0, 0))}

    def agreement(self, since: datetime) -> dict[str, int]:
        """Return reviewers' decisions on proposals since then: approved as written, edited,
        rejected (how often people agree with factbot)."""
        names = {"approve": "approved", "edit": "edited", "reject": "rejected"}
        counts = dict.fromkeys(names.values(), 0)
        for action, count in self.db.execute(
            "SELECT action, count(*) FROM review_decisions WHERE at >= ? GROUP BY 1",
            [dt_out(since)],
        ):
            if action in names:
                counts[names[action]] = int(count)
        return counts

    def rebuild_search(self) -> None:
        """Fill the search table again from posts and claims (after a VACUUM)."""
        with immediate(self.db):
            self.db.execute("DELETE FROM check_text")
            self.db.execute(
                "INSERT INTO check_text (rowid, body) SELECT c.rowid * 1024, p.text "
                "FROM checks AS c JOIN posts AS p ON p.id = c.post_id WHERE p.text != ''"
            )
            self.db.execute(
                "INSERT INTO check_text (rowid, body) "
                f"SELECT c.rowid * 1024 + 1 + {'LEAST' if self.pg else 'min'}(cl.position, 1022), "
                "cl.text FROM claims AS cl "
                "JOIN checks AS c ON c.id = cl.check_id WHERE cl.text != ''"
            )


def _dt(value: str) -> datetime:
    parsed = dt_in(value)
    assert parsed is not None
    return parsed


def find_sources(db: Database, text: str, *, limit: int = 100) -> list[dict[str, Any]]:
    """Return rated sources whose key contains text (all when empty), by key."""
    pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    rows = db.execute(
        "SELECT domain, tier, reason, origin, updated_at FROM sources "
        "WHERE domain LIKE ? ESCAPE '\\' ORDER BY domain LIMIT ?",
        [pattern, limit],
    ).fetchall()
    keys = ("domain", "tier", "reason", "origin", "updated_at")
    return [dict(zip(keys, r, strict=True)) for r in rows]
