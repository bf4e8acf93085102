"""Checks made for dashboard tests: real records, stored through the real CheckRepo."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pipeline.records import (
    Check,
    Claim,
    ClaimVerdict,
    Correction,
    CorrectionItem,
    CorrectionQuote,
    Document,
    Evidence,
    Label,
    ModelUsage,
    Passage,
    Post,
    Reference,
    StageTiming,
    Stance,
    Tier,
    Verdict,
    new_id,
)
from storage import Store

QUOTE = "no link between 5G and the virus"
PASSAGE = f"Health agencies found {QUOTE}, according to the review published in May."


def make_check(
    *,
    text: str = "5G towers spread the coronavirus.",
    claim: str = "5G towers spread the coronavirus",
    platform: str = "api",
    label: Label = Label.FALSE,
    judge: str = "no-model",
    created_at: datetime | None = None,
    url: str = "https://health.example.org/5g",
    cost: float = 0.0012,
) -> Check:
    """Return a complete check with one claim, one piece of evidence, a quote and a reference."""
    post_id = new_id()
    post = Post(id=post_id, platform=platform, platform_id=post_id, text=text)
    claim_record = Claim(id=new_id(), post_id=post_id, position=0, text=claim)
    document = Document(
        id=new_id(),
        url=url,
        domain="health.example.org",
        title="What the review found",
        text=PASSAGE,
        published_at=datetime(2020, 5, 1, tzinfo=UTC),
    )
    evidence = Evidence(
        id=new_id(),
        claim_id=claim_record.id,
        passage=Passage(id=new_id(), document_id=document.id, position=0, text=PASSAGE),
        document=document,
        relevance=0.82,
        tier=Tier.HIGH,
        stance=Stance.REFUTES,
    )
    reference = Reference(number=1, document_id=document.id, url=url, title=document.title)
    item = CorrectionItem(
        claim_number=1,
        claim=claim,
        label=label,
        explanation="Health agencies found no such link.",
        references=(1,),
        quote=CorrectionQuote(text=QUOTE, reference=1),
    )
    return Check(
        id=new_id(),
        post=post,
        claims=(claim_record,),
        evidence=(evidence,),
        verdict=Verdict(
            label=label,
            claims=(
                ClaimVerdict(
                    claim_id=claim_record.id,
                    label=label,
                    rationale="refuted",
                    evidence_ids=(evidence.id,),
                ),
            ),
        ),
        correction=Correction(
            label=label,
            headline=f"This post is {label.value}",
            items=(item,),
            references=(reference,),
        ),
        timings=(StageTiming("claims", 0.05), StageTiming("retrieval", 0.4)),
        judge=judge,
        usage=(ModelUsage("judge", 1, 900, 120, cost, 1.2),) if cost else (),
        created_at=created_at or datetime.now(UTC) - timedelta(minutes=5),
    )


def store_checks(store: Store, checks: list[Check]) -> list[Check]:
    """Save checks and return them."""
    for check in checks:
        store.checks.save(check)
    return checks
