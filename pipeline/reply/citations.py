"""The citation check: what a reply quotes and cites must be what the pipeline retrieved.

Before a correction is written, every quote is looked up in the stored text of its document
(whitespace and typographic quotes normalised) and every piece of evidence a verdict relies on
must be a retrieved document held in the index. A claim whose verdict leans on anything that
fails is not shipped: its verdict is kept in the check, marked `shown=False`, and the post's
label is recomputed from the claims that remain.

Failure policy: never raises; failures are logged with the claim and the reason.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable, Sequence

from pipeline.judge.claimreview import combine
from pipeline.records.domain import Document, Evidence, Label, Quote, Verdict

log = logging.getLogger(__name__)

_SPACE_RE = re.compile(r"\s+")
_QUOTES = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "\u00a0": " "})


def normalise(text: str) -> str:
    """Return text with whitespace collapsed and typographic quotes made plain."""
    return _SPACE_RE.sub(" ", text.translate(_QUOTES)).strip()


def quote_is_verbatim(quote: str, document_text: str) -> bool:
    """Return whether quote occurs in the document text (after normalising both)."""
    needle = normalise(quote)
    return bool(needle) and needle in normalise(document_text)


def enforce_citations(
    verdict: Verdict,
    evidence: Sequence[Evidence],
    quotes: Sequence[Quote],
    *,
    lookup: Callable[[str], Document | None],
) -> tuple[Verdict, list[Quote]]:
    """Return the verdict with failing claims hidden, and the quotes that passed."""
    by_id = {e.id: e for e in evidence}
    stored: dict[str, Document | None] = {}

    def document(doc_id: str) -> Document | None:
        if doc_id not in stored:
            stored[doc_id] = lookup(doc_id)
        return stored[doc_id]

    good_quotes: list[Quote] = []
    bad_evidence: set[str] = set()
    for quote in quotes:
        ev = by_id.get(quote.evidence_id)
        doc = document(ev.document.id) if ev else None
        if ev is None or doc is None or not quote_is_verbatim(quote.text, doc.text):
            log.warning("quote failed the citation check", extra={"evidence": quote.evidence_id})
            bad_evidence.add(quote.evidence_id)
            continue
        good_quotes.append(quote)
    claims = []
    for cv in verdict.claims:
        problem = _problem(cv.evidence_ids, by_id, document, bad_evidence)
        if problem and cv.label is not Label.UNVERIFIABLE:
            log.warning(
                "claim removed from the reply", extra={"claim": cv.claim_id, "why": problem}
            )
            cv = dataclasses.replace(
                cv, shown=False, rationale=f"{cv.rationale} [hidden: {problem}]"
            )
        claims.append(cv)
    shown = [cv.label for cv in claims if cv.shown]
    label = combine(shown) if shown else Label.UNVERIFIABLE
    return Verdict(label=label, claims=tuple(claims)), good_quotes


def _problem(
    evidence_ids: Sequence[str],
    by_id: dict[str, Evidence],
    document: Callable[[str], Document | None],
    bad_evidence: set[str],
) -> str | None:
    for evidence_id in evidence_ids:
        ev = by_id.get(evidence_id)
        if ev is None:
            return f"evidence {evidence_id} was not retrieved"
        stored = document(ev.document.id)
        if stored is None or stored.url != ev.document.url:
            return f"{ev.document.url} is not a stored, retrieved document"
        if evidence_id in bad_evidence:
            return f"a quote from {ev.document.url} is not in the page"
    return None
