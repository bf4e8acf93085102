"""A stored check to propose for review, without running the pipeline (its evidence is real
records, written through the real store)."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from pipeline.records.domain import (
    Check,
    Claim,
    ClaimVerdict,
    Correction,
    CorrectionItem,
    CorrectionQuote,
    Document,
    Evidence,
    Label,
    Passage,
    Post,
    Reference,
    Stance,
    Tier,
    Verdict,
    document_id_for,
)
from pipeline.util.i18n import available, catalogue_code
from storage import Store

SOURCE = "https://www.who.int/news/5g-myths"


def stored_check(
    store: Store,
    check_id: str = "check1",
    *,
    text: str = "5G networks spread the coronavirus.",
    url: str = SOURCE,
    post_url: str | None = "https://chat.example/p/1",
    language: str | None = None,
    headline: str = "This post is false: 5G does not spread the coronavirus.",
    explanation: str = "Viruses cannot travel on radio waves or mobile networks.",
) -> Check:
    """Store and return a check whose correction cites one retrieved document at url.

    `language`: the post's, as a check identifies it; the correction is written in it (its
    headline and explanation given in that language) where a catalogue has it.
    """
    reply_language = catalogue_code(language) if language else "en"
    if reply_language not in available():
        reply_language = "en"
    doc = Document(
        id=document_id_for(url),
        url=url,
        domain="who.int",
        title="Viruses cannot travel on radio waves",
        text="Viruses cannot travel on radio waves or mobile networks.",
        published_at=datetime(2020, 5, 1, tzinfo=UTC),
    )
    vector = np.ones(384, dtype=np.float32) / np.sqrt(384)
    store.documents.upsert(doc, [(doc.text, vector)], content_hash=f"h-{check_id}")
    post_id = f"post-{check_id}"
    post = Post(
        id=post_id, platform="chat", platform_id=post_id, text=text, url=post_url, language=language
    )
    claim = Claim(id=f"c-{check_id}", post_id=post_id, position=0, text=text)
    passage = Passage(id=f"p-{check_id}", document_id=doc.id, position=0, text=doc.text)
    evidence = Evidence(
        id=f"e-{check_id}",
        claim_id=claim.id,
        passage=passage,
        document=doc,
        relevance=0.9,
        tier=Tier.HIGH,
        stance=Stance.REFUTES,
    )
    verdict = Verdict(
        label=Label.FALSE,
        claims=(
            ClaimVerdict(
                claim.id, Label.FALSE, "Viruses do not travel on networks.", (evidence.id,)
            ),
        ),
    )
    correction = Correction(
        label=Label.FALSE,
        headline=headline,
        items=(
            CorrectionItem(
                claim_number=1,
                claim=text,
                label=Label.FALSE,
                explanation=explanation,
                references=(1,),
                quote=CorrectionQuote(text=doc.text, reference=1),
                language=reply_language,
            ),
        ),
        references=(Reference(number=1, document_id=doc.id, url=url, title=doc.title),),
        language=reply_language,
    )
    check = Check(
        id=check_id,
        post=post,
        claims=(claim,),
        evidence=(evidence,),
        verdict=verdict,
        correction=correction,
    )
    store.checks.save(check)
    return check
