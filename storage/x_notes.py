"""Community Notes factbot wrote on X, what X's API costs, and the notes' dashboard summary.

One `x_notes` row per post (UNIQUE post_id), so a retried or re-enqueued `x:note` job never
writes a second note for one post. A row is written before the note is submitted (status
`scored`) and moved on once the API answered:

    scored ──submit──> submitted ──status refresh──> (rating_status: helpful / not_helpful /
      │                                                 needs_more_ratings)
      ├──refused by the API (4xx)──> rejected
      └──local scores say it would not pass──> withheld (never submitted)

`api_costs` holds one row per billed call of a platform's API (X bills every post read and
written); the platform's money budget counts it (`storage.platform.PlatformRepo.usage_since`).

The job kinds and their enqueue functions live here too, so the monitor (which schedules
them) and the adapter (which runs them) share one definition without importing each other.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from pipeline.communitynotes.admission import NOTES_PER_DAY, WINDOW, Standing, standing
from pipeline.communitynotes.claimopinion import Agreement, agreement
from pipeline.records.domain import new_id
from pipeline.util.clock import SYSTEM, Clock
from storage.codec import dt_in, dt_out
from storage.jobs import Job, JobQueue

NOTE_KIND = "x:note"
NOTES_STATUS_KIND = "x:notes-status"
LEVELS = ("high", "medium", "low")
RATINGS = ("helpful", "not_helpful", "needs_more_ratings")
SUMMARY_WINDOW = WINDOW  # the admission evaluator scores a writer's last 50 notes


@dataclass(frozen=True)
class XNote:
    """One Community Note factbot wrote, scored and (perhaps) submitted."""

    id: str
    post_id: str
    check_id: str | None
    job_id: str | None
    text: str
    classification: str
    misleading_tags: tuple[str, ...]
    trustworthy_sources: bool
    urls: tuple[str, ...]
    url_validity: str  # high / low: every URL answered 200
    claim_opinion: str  # high / medium / low: addresses the claim without opinion
    harassment_abuse: str  # high (nothing abusive) / low
    score_detail: dict[str, Any]
    test_mode: bool
    status: str  # scored, submitted, rejected, withheld
    api_note_id: str | None
    claim_opinion_score: float | None  # what POST /2/evaluate_note returned
    rating_status: str | None
    evaluation: dict[str, str]  # the API evaluator's buckets in test mode, e.g. UrlValidity: high
    error: str | None
    created_at: datetime | None
    updated_at: datetime | None

    @property
    def is_media_note(self) -> bool:
        """Return whether the note is about the post's image (kept with the local scores)."""
        return bool(self.score_detail.get("is_media_note"))

    @property
    def local_buckets(self) -> dict[str, str]:
        """Return factbot's own buckets, named as X's evaluators are."""
        return {
            "ClaimOpinion": self.claim_opinion,
            "UrlValidity": self.url_validity,
            "HarassmentAbuse": self.harassment_abuse,
        }

    @property
    def local_claim_opinion_score(self) -> float | None:
        """Return factbot's ClaimOpinion number, when it was measured (not the old heuristic)."""
        value = self.score_detail.get("claim_opinion_local")
        return float(value) if isinstance(value, int | float) else None


@dataclass(frozen=True)
class NotesSummary:
    """The last notes at a glance, against what admission asks of an AI note writer."""

    notes: int  # every note in the window, whatever its status
    submitted: int
    withheld: int
    rejected: int
    claim_opinion_high: float  # shares of the submitted notes in the window, 0..1
    claim_opinion_low: float
    url_validity_high: float
    harassment_abuse_high: float
    mean_claim_opinion_score: float | None  # the API's evaluation, over notes that have one
    helpful: int
    not_helpful: int
    needs_more_ratings: int
    hit_rate: float | None  # (helpful - not helpful) / rated notes
    # the last 50 submitted notes against admission: from factbot's own scores, and from the
    # buckets X's evaluators recorded in test mode; under 50: "not enough notes yet"
    admission: Standing
    admission_api: Standing
    claim_opinion_agreement: Agreement  # factbot's score against X's, where both were recorded
    notes_today: int  # notes submitted in the last 24 hours
    daily_limit: int  # the POST /2/notes limit X documents (it follows the hit rate)

    @property
    def meets_admission(self) -> bool:
        """Return whether the last 50 submitted notes meet admission (never under 50)."""
        return self.admission.meets

    def to_json(self) -> dict[str, Any]:
        """Return the summary as a JSON object (the dashboard's)."""
        out = dict(self.__dict__)
        out["admission"] = self.admission.to_json()
        out["admission_api"] = self.admission_api.to_json()
        out["claim_opinion_agreement"] = self.claim_opinion_agreement.to_json()
        out["meets_admission"] = self.meets_admission
        out["admission_state"] = self.admission.state
        return out


class XNotesRepo:
    """Store and read the Community Notes factbot wrote."""

    def __init__(self, db: Database, *, clock: Clock = SYSTEM) -> None:
        self.db = db
        self.clock = clock

    def add(self, note: XNote) -> XNote:
        """Store a scored note; return the one stored for its post (the first one wins)."""
        now = dt_out(self.clock.now())
        self.db.execute(
            "INSERT OR IGNORE INTO x_notes (id, post_id, check_id, job_id, text, classification, "
            "misleading_tags, trustworthy_sources, urls, url_validity, claim_opinion, "
            "harassment_abuse, score_detail, test_mode, status, created_at, updated_at) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [
                note.id,
                note.post_id,
                note.check_id,
                note.job_id,
                note.text,
                note.classification,
                json.dumps(list(note.misleading_tags)),
                int(note.trustworthy_sources),
                json.dumps(list(note.urls)),
                note.url_validity,
                note.claim_opinion,
                note.harassment_abuse,
                json.dumps(note.score_detail, default=str),
                int(note.test_mode),
                note.status,
                now,
                now,
            ],
        )
        stored = self.for_post(note.post_id)
        assert stored is not None
        return stored

    def for_post(self, post_id: str) -> XNote | None:
        """Return the note written for a post, if any."""
        rows = list(self.db.query("SELECT * FROM x_notes WHERE post_id = ?", [post_id]))
        return _note(rows[0]) if rows else None

    def update(self, note_id: str, **fields: Any) -> None:
        """Change a note's status, API answer or error fields."""
        allowed = {"status", "api_note_id", "claim_opinion_score", "rating_status", "error"}
        unknown = set(fields) - allowed
        if unknown:
            raise ValueError(f"cannot update x_notes fields {sorted(unknown)}")
        sets = ", ".join(f"{name} = ?" for name in fields)
        self.db.execute(
            f"UPDATE x_notes SET {sets}, updated_at = ? WHERE id = ?",
            [*fields.values(), dt_out(self.clock.now()), note_id],
        )

    def set_status(
        self, post_id: str, *, rating: str | None, evaluation: dict[str, str], api_note_id: str
    ) -> bool:
        """Record what X reports of a submitted note; return whether it changed anything."""
        if rating is not None and rating not in RATINGS:
            raise ValueError(f"rating must be one of {RATINGS}, not {rating!r}")
        cursor = self.db.execute(
            "UPDATE x_notes SET rating_status = ?, evaluation = ?, "
            "api_note_id = coalesce(api_note_id, ?), updated_at = ? "
            "WHERE post_id = ? AND status = 'submitted' "
            "AND (rating_status IS NOT ? OR evaluation IS NOT ?)",
            [
                rating,
                json.dumps(evaluation, sort_keys=True),
                api_note_id,
                dt_out(self.clock.now()),
                post_id,
                rating,
                json.dumps(evaluation, sort_keys=True),
            ],
        )
        return cursor.rowcount == 1

    def recent(self, limit: int = SUMMARY_WINDOW, *, status: str | None = None) -> list[XNote]:
        """Return the newest notes (of one status, or all), newest first."""
        where, args = ("WHERE status = ? ", [status]) if status else ("", [])
        rows = self.db.query(
            f"SELECT * FROM x_notes {where}ORDER BY created_at DESC, id DESC LIMIT ?",
            [*args, limit],
        )
        return [_note(r) for r in rows]

    def submitted_since(self, since: datetime) -> int:
        """Return how many notes were submitted since a time (the daily limit's use)."""
        row = self.db.execute(
            "SELECT count(*) FROM x_notes WHERE status = 'submitted' AND updated_at >= ?",
            [dt_out(since)],
        ).fetchone()
        return int(row[0])


def summarize(
    notes: Sequence[XNote], *, notes_today: int = 0, window: int = SUMMARY_WINDOW
) -> NotesSummary:
    """Return the summary of notes (newest first) against the admission thresholds (>= 30 %
    high and <= 30 % low ClaimOpinion, >= 95 % high UrlValidity, >= 98 % high HarassmentAbuse
    over the last 50 submitted notes; fewer: "not enough notes yet")."""
    sent = [x for x in notes if x.status == "submitted"][:window]
    n = len(sent)

    def share(predicate: Any) -> float:
        return sum(1 for note in sent if predicate(note)) / n if n else 0.0

    scores = [x.claim_opinion_score for x in notes if x.claim_opinion_score is not None]
    ratings = [x.rating_status for x in notes]
    helpful, unhelpful = ratings.count("helpful"), ratings.count("not_helpful")
    rated = helpful + unhelpful + ratings.count("needs_more_ratings")
    both = [
        (x.local_claim_opinion_score, x.claim_opinion_score)
        for x in notes
        if x.local_claim_opinion_score is not None and x.claim_opinion_score is not None
    ]
    return NotesSummary(
        notes=len(notes),
        submitted=sum(1 for x in notes if x.status == "submitted"),
        withheld=sum(1 for x in notes if x.status == "withheld"),
        rejected=sum(1 for x in notes if x.status == "rejected"),
        claim_opinion_high=share(lambda x: x.claim_opinion == "high"),
        claim_opinion_low=share(lambda x: x.claim_opinion == "low"),
        url_validity_high=share(lambda x: x.url_validity == "high"),
        harassment_abuse_high=share(lambda x: x.harassment_abuse == "high"),
        mean_claim_opinion_score=sum(scores) / len(scores) if scores else None,
        helpful=helpful,
        not_helpful=unhelpful,
        needs_more_ratings=ratings.count("needs_more_ratings"),
        hit_rate=(helpful - unhelpful) / rated if rated else None,
        admission=standing([x.local_buckets for x in sent], window=window),
        admission_api=standing([x.evaluation for x in sent], window=window),
        claim_opinion_agreement=agreement([(a, b) for a, b in both if a is not None]),
        notes_today=notes_today,
        daily_limit=NOTES_PER_DAY,
    )


class ApiCosts:
    """What a platform's API billed: one row a billed call."""

    def __init__(self, db: Database, *, clock: Clock = SYSTEM) -> None:
        self.db = db
        self.clock = clock

    def record(
        self,
        platform: str,
        kind: str,
        units: int,
        cost_usd: float,
        *,
        ref: str | None = None,
        workspace_id: str = "",
    ) -> None:
        """Record units billed calls of one kind (e.g. 12 post reads) and what they cost."""
        if units <= 0 or cost_usd <= 0:
            return
        self.db.execute(
            "INSERT INTO api_costs (id, platform, workspace_id, kind, units, cost_usd, ref, at) "
            "VALUES (?,?,?,?,?,?,?,?)",
            [
                new_id(),
                platform,
                workspace_id,
                kind,
                units,
                cost_usd,
                ref,
                dt_out(self.clock.now()),
            ],
        )

    def totals(self, platform: str) -> dict[str, tuple[int, float]]:
        """Return the units and cost billed so far, by kind."""
        rows = self.db.execute(
            "SELECT kind, sum(units), sum(cost_usd) FROM api_costs WHERE platform = ? "
            "GROUP BY kind",
            [platform],
        ).fetchall()
        return {str(r[0]): (int(r[1]), float(r[2])) for r in rows}


def enqueue_note(
    jobs: JobQueue,
    *,
    check_id: str,
    check_job: str | None,
    post_id: str,
    key: str,
    max_attempts: int = 5,
) -> tuple[Job, bool]:
    """Queue the writing of a Community Note on a post once its check has ended."""
    if not post_id.isdigit():
        raise ValueError(f"an X post id is numeric, not {post_id!r}")
    return jobs.enqueue(
        NOTE_KIND,
        {"check_id": check_id, "check_job": check_job, "post_id": post_id, "key": key},
        dedupe_key=f"{NOTE_KIND}:{post_id}",
        max_attempts=max_attempts,
        waits_for=check_job,
    )


def enqueue_notes_status(jobs: JobQueue, *, key: str) -> tuple[Job, bool]:
    """Queue a refresh of the written notes' rating status (key: one per scheduled run)."""
    return jobs.enqueue(NOTES_STATUS_KIND, {"key": key}, dedupe_key=f"{NOTES_STATUS_KIND}:{key}")


def _note(r: dict[str, Any]) -> XNote:
    return XNote(
        id=r["id"],
        post_id=r["post_id"],
        check_id=r["check_id"],
        job_id=r["job_id"],
        text=r["text"],
        classification=r["classification"],
        misleading_tags=tuple(json.loads(r["misleading_tags"])),
        trustworthy_sources=bool(r["trustworthy_sources"]),
        urls=tuple(json.loads(r["urls"])),
        url_validity=r["url_validity"],
        claim_opinion=r["claim_opinion"],
        harassment_abuse=r["harassment_abuse"],
        score_detail=json.loads(r["score_detail"]),
        test_mode=bool(r["test_mode"]),
        status=r["status"],
        api_note_id=r["api_note_id"],
        claim_opinion_score=r["claim_opinion_score"],
        rating_status=r["rating_status"],
        evaluation=json.loads(r["evaluation"]),
        error=r["error"],
        created_at=dt_in(r["created_at"]),
        updated_at=dt_in(r["updated_at"]),
    )


def notes_summary(repo: XNotesRepo, *, window: int = SUMMARY_WINDOW) -> NotesSummary:
    """Return the dashboard summary: the last `window` notes, and the last `window` submitted
    ones against admission (50: what admission reads), with the day's use of the limit."""
    latest = repo.recent(window)
    sent = repo.recent(window, status="submitted")
    known = {x.id for x in latest}
    notes = sorted(
        [*latest, *(x for x in sent if x.id not in known)],
        key=lambda x: (x.created_at or datetime.min.replace(tzinfo=UTC), x.id),
        reverse=True,
    )
    today = repo.submitted_since(repo.clock.now() - timedelta(days=1))
    return summarize(notes, notes_today=today, window=window)


def standing_at(path: Path, *, database_url: str | None = None) -> NotesSummary | None:
    """Return the notes summary of a database opened read-only (`factbot doctor`), or None
    when it has no notes table yet or cannot be read."""
    if database_url:
        from storage.pg import PgDatabase

        try:
            db: Any = PgDatabase(database_url)
        except Exception:  # noqa: BLE001 - failure policy: the doctor reports the database
            return None
    elif path.exists():
        db = Database(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True))
    else:
        return None
    try:
        return notes_summary(XNotesRepo(db))
    except Exception:  # noqa: BLE001 - an older schema without x_notes: nothing to say
        return None
    finally:
        db.close()
