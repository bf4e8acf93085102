"""Posts, checks, claims and evidence: a check is written in one transaction."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlite_utils import Database

from pipeline.errors import NotFoundError
from pipeline.records.codec import dump, load
from pipeline.records.domain import (
    Basis,
    Check,
    Claim,
    ClaimGraph,
    ClaimVerdict,
    Document,
    Evidence,
    Injection,
    Label,
    ModelUsage,
    Passage,
    Reference,
    StageTiming,
    Stance,
    Tier,
    Verdict,
)
from pipeline.records.search_status import SearchStatus
from storage.codec import (
    correction_in,
    correction_items_out,
    document_from_row,
    dt_in,
    dt_out,
    post_from_row,
    post_row,
)
from storage.details import (
    assessments_in,
    assessments_out,
    fact_checks_in,
    fact_checks_out,
    images_in,
    images_out,
    narratives_in,
    narratives_out,
    quotes_in,
    quotes_out,
    trace_in,
    trace_out,
)
from storage.tx import immediate


class CheckRepo:
    """Store and load complete checks."""

    def __init__(self, db: Database, *, index_db: Database | None = None) -> None:
        self.db = db
        self.index_db = index_db if index_db is not None else db  # where documents live

    def save(self, check: Check) -> None:
        """Write the post, the check, its claims and its evidence atomically."""
        verdicts = {v.claim_id: v for v in check.verdict.claims}
        with immediate(self.db):
            existing = self.db.execute(
                "SELECT id FROM posts WHERE platform = ? AND platform_id = ?",
                [check.post.platform, check.post.platform_id],
            ).fetchone()
            if existing is None:
                self.db.table("posts").insert(post_row(check.post))
            elif existing[0] != check.post.id:
                raise ValueError(
                    f"post {check.post.platform}/{check.post.platform_id} "
                    f"is stored as {existing[0]}"
                )
            elif check.post.language is not None:
                # the check identified the language; the platform's own field was only a hint
                self.db.execute(
                    "UPDATE posts SET language = ? WHERE id = ?",
                    [check.post.language, check.post.id],
                )
            self.db.table("checks").insert(
                {
                    "id": check.id,
                    "post_id": check.post.id,
                    "created_at": dt_out(check.created_at),
                    "verdict": check.verdict.label.value,
                    "judge": check.judge,
                    "before": dt_out(check.before),
                    "correction": check.correction.text,
                    "correction_items": correction_items_out(check.correction),
                    "refs": dump(check.correction.references, kind=tuple[Reference, ...]),
                    "timings": json.dumps([[t.stage, t.seconds] for t in check.timings]),
                    "usage": dump(check.usage, kind=tuple[ModelUsage, ...]),
                    "injections": dump(check.injections, kind=tuple[Injection, ...]),
                    "graphs": dump(check.graphs, kind=tuple[ClaimGraph, ...]),
                    "search_status": json.dumps(check.search.to_json()),
                    "narratives": narratives_out(check.narratives),
                    "assessments": assessments_out(check.assessments),
                    "quotes": quotes_out(check.quotes),
                    "fact_checks": fact_checks_out(check.fact_checks),
                    "images": images_out(check.images),
                }
            )
            self.db.table("claims").insert_all(
                {
                    "id": c.id,
                    "check_id": check.id,
                    "post_id": c.post_id,
                    "position": c.position,
                    "text": c.text,
                    "label": verdicts[c.id].label.value if c.id in verdicts else "unverifiable",
                    "rationale": verdicts[c.id].rationale if c.id in verdicts else "",
                    "evidence_ids": json.dumps(
                        list(verdicts[c.id].evidence_ids) if c.id in verdicts else []
                    ),
                    "shown": int(verdicts[c.id].shown) if c.id in verdicts else 1,
                    "basis": verdicts[c.id].basis.value if c.id in verdicts else "unknown",
                    "language": c.language,
                }
                for c in check.claims
            )
            self.db.table("evidence").insert_all(
                {
                    "id": e.id,
                    "check_id": check.id,
                    "claim_id": e.claim_id,
                    "passage_id": e.passage.id,
                    "passage_position": e.passage.position,
                    "passage_text": e.passage.text,
                    "document_id": e.document.id,
                    "document_url": e.document.url,
                    "document_title": e.document.title,
                    "document_domain": e.document.domain,
                    "document_published_at": dt_out(e.document.published_at),
                    "relevance": e.relevance,
                    "tier": e.tier.value,
                    "stance": e.stance.value,
                    "image": trace_out(e.image),
                }
                for e in check.evidence
            )

    def get(self, check_id: str) -> Check:
        """Load one check; raise NotFoundError when it does not exist."""
        rows = list(self.db.query("SELECT * FROM checks WHERE id = ?", [check_id]))
        if not rows:
            raise NotFoundError(f"no check with id {check_id!r}")
        row = rows[0]
        post = post_from_row(
            next(self.db.query("SELECT * FROM posts WHERE id = ?", [row["post_id"]]))
        )
        claim_rows = list(
            self.db.query("SELECT * FROM claims WHERE check_id = ? ORDER BY position", [check_id])
        )
        claims = tuple(
            Claim(
                id=c["id"],
                post_id=c["post_id"],
                position=c["position"],
                text=c["text"],
                language=c["language"],
            )
            for c in claim_rows
        )
        verdicts = tuple(
            ClaimVerdict(
                claim_id=c["id"],
                label=Label(c["label"]),
                rationale=c["rationale"],
                evidence_ids=tuple(json.loads(c["evidence_ids"])),
                shown=bool(c["shown"]),
                basis=_basis(c["basis"]),
            )
            for c in claim_rows
        )
        evidence = tuple(
            self._evidence(e)
            for e in self.db.query(
                "SELECT * FROM evidence WHERE check_id = ? ORDER BY rowid", [check_id]
            )
        )
        return Check(
            id=row["id"],
            post=post,
            claims=claims,
            evidence=evidence,
            verdict=Verdict(label=Label(row["verdict"]), claims=verdicts),
            correction=correction_in(
                row["correction_items"],
                text=row["correction"],
                label=Label(row["verdict"]),
                references=load(tuple[Reference, ...], row["refs"]),
            ),
            timings=tuple(StageTiming(stage=s, seconds=t) for s, t in json.loads(row["timings"])),
            judge=row["judge"],
            usage=load(tuple[ModelUsage, ...], row["usage"]),
            injections=load(tuple[Injection, ...], row["injections"]),
            graphs=load(tuple[ClaimGraph, ...], row["graphs"]),
            search=SearchStatus.from_json(json.loads(row["search_status"])),
            created_at=_required_dt(row["created_at"]),
            before=dt_in(row["before"]),
            images=images_in(row["images"]),
            narratives=narratives_in(row["narratives"]),
            assessments=assessments_in(row["assessments"]),
            quotes=quotes_in(row["quotes"]),
            fact_checks=fact_checks_in(row["fact_checks"]),
        )

    def drop_uploads_before(self, cutoff: datetime) -> int:
        """Remove uploaded image bytes (`data:` refs) from posts first stored before cutoff.

        A post's age is that of its oldest check or job (an API or dashboard post is stored
        with its job, a `factbot check` post with its check). Its http(s) image links, its text
        and what the image stage read stay; the check's image report keeps only the start of
        each data: URI (type and name). Returns how many posts lost uploaded bytes.
        """
        stamp = dt_out(cutoff)
        with immediate(self.db):
            rows = self.db.execute(
                "SELECT id, image_refs FROM posts WHERE image_refs LIKE '%\"data:%' AND ("
                "id IN (SELECT post_id FROM checks WHERE created_at < ?) OR "
                "id IN (SELECT post_id FROM jobs WHERE post_id IS NOT NULL AND created_at < ?))",
                [stamp, stamp],
            ).fetchall()
            for post_id, raw in rows:
                kept = [r for r in json.loads(raw) if not str(r).startswith("data:")]
                self.db.execute(
                    "UPDATE posts SET image_refs = ? WHERE id = ?", [json.dumps(kept), post_id]
                )
        return len(rows)

    def recent(self, *, limit: int = 20) -> list[dict[str, Any]]:
        """Return a summary of the most recent checks."""
        return list(
            self.db.query(
                "SELECT checks.id, checks.created_at, checks.verdict, posts.platform, "
                "substr(posts.text, 1, 80) AS text FROM checks "
                "JOIN posts ON posts.id = checks.post_id ORDER BY checks.created_at DESC LIMIT ?",
                [limit],
            )
        )

    def _evidence(self, row: dict[str, Any]) -> Evidence:
        doc_rows = list(
            self.index_db.query("SELECT * FROM documents WHERE id = ?", [row["document_id"]])
        )
        if doc_rows:
            document = document_from_row(doc_rows[0])
        else:  # the document left the index; the check keeps its own snapshot
            document = Document(
                id=row["document_id"],
                url=row["document_url"],
                domain=row["document_domain"],
                title=row["document_title"],
                text=row["passage_text"],
                published_at=dt_in(row["document_published_at"]),
            )
        return Evidence(
            id=row["id"],
            claim_id=row["claim_id"],
            passage=Passage(
                id=row["passage_id"],
                document_id=row["document_id"],
                position=row["passage_position"],
                text=row["passage_text"],
            ),
            document=document,
            relevance=row["relevance"],
            tier=Tier(row["tier"]),
            stance=Stance(row["stance"]),
            image=trace_in(row.get("image")),
        )


def _basis(value: str) -> Basis:
    try:
        return Basis(value)
    except ValueError:  # a basis a newer factbot wrote
        return Basis.UNKNOWN


def _required_dt(value: str) -> datetime:
    parsed = dt_in(value)
    if parsed is None:
        raise ValueError("a stored check has no creation time")
    return parsed
