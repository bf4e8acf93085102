"""Checks made for dashboard tests: real records, stored through the real CheckRepo."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from pipeline.records.domain import (
    Assessment,
    Basis,
    Check,
    Claim,
    ClaimVerdict,
    Correction,
    CorrectionItem,
    CorrectionQuote,
    Document,
    Evidence,
    FacetCheck,
    Label,
    ModelUsage,
    Narrative,
    Passage,
    Post,
    Quote,
    Reference,
    Relation,
    StageTiming,
    Stance,
    Tier,
    Verdict,
    new_id,
)
from pipeline.records.image import (
    Caption,
    ContentCredentials,
    ExifInfo,
    ImageDescription,
    ImageFailure,
    ImageHashes,
    ImageMetadata,
    ImageOrigin,
    ImageReport,
    ImageSource,
    OcrLine,
    OcrText,
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


OCR_TEXT = "5G KILLS <script>alert('ocr')</script>"
CAPTION = "A phone mast at dusk with a <b>warning</b> sign"
IMAGE_URL = "https://cdn.example.net/mast.jpg"


def image_report() -> ImageReport:
    """Return an image report with one read image (OCR, EXIF, C2PA, caption) and one failure."""
    description = ImageDescription(
        image_id="a" * 64,
        url=IMAGE_URL,
        origin=ImageOrigin.ATTACHMENT,
        width=800,
        height=600,
        frames=1,
        hashes=ImageHashes(phash="f0e1d2c3b4a59687", phash_core="0f1e2d3c4b5a6978"),
        ocr=OcrText(engine="tesseract", lines=(OcrLine(OCR_TEXT, 0.91),)),
        metadata=ImageMetadata(
            exif=ExifInfo(
                captured_at=datetime(2019, 7, 4, 18, 30),  # naive: the camera gave no offset
                latitude=48.8566,
                longitude=2.3522,
                camera="Canon EOS 5D",
                software="GIMP 2.10",
            ),
            credentials=ContentCredentials(
                signer="Example News Agency",
                claim_generator="ExampleCam/1.0",
                actions=("c2pa.created",),
                ai_generated=True,
                valid=True,
                trusted=False,
            ),
        ),
        caption=Caption(text=CAPTION, model="tiny-captioner"),
        terms=("Paris",),
        text=f"Text in the image: {OCR_TEXT}",
    )
    failure = ImageFailure(
        source=ImageSource(ref="https://cdn.example.net/gone.png", origin=ImageOrigin.LINK),
        reason="the image could not be downloaded (404)",
    )
    return ImageReport(descriptions=(description,), failures=(failure,))


def with_details(check: Check, *, basis: Basis = Basis.MODEL) -> Check:
    """Return check with an image report, one narrative per claim, its assessment and a basis."""
    narratives = tuple(
        Narrative(
            id=f"n{i}",
            claim_id=claim.id,
            evidence_ids=tuple(e.id for e in check.evidence if e.claim_id == claim.id),
            representative_id=next(e.id for e in check.evidence if e.claim_id == claim.id),
        )
        for i, claim in enumerate(check.claims)
    )
    assessments = tuple(
        Assessment(
            claim_id=n.claim_id,
            narrative_id=n.id,
            relation=Relation.CONFLICTS,
            facets=(
                FacetCheck("what", "conflicting", "agencies found no link"),
                FacetCheck("when", "missing"),
            ),
            rationale="The review finds no <em>link</em> at all.",
        )
        for n in narratives
    )
    claims = tuple(dataclasses.replace(v, basis=basis) for v in check.verdict.claims)
    return dataclasses.replace(
        check,
        verdict=dataclasses.replace(check.verdict, claims=claims),
        images=image_report(),
        narratives=narratives,
        assessments=assessments,
        quotes=tuple(
            Quote(n.representative_id, "agencies found no link", Stance.REFUTES) for n in narratives
        ),
    )
