"""Relevance filtering: keep candidates whose passage is close enough to the claim.

The threshold is a cosine similarity of all-MiniLM-L6-v2 embeddings (dot product of normalised
vectors, as MUSE filters with a sentence-transformer). It was calibrated on AVeriTeC dev with
`factbot eval relevance` (see docs/evaluation/calibration.md). At most `per_document` passages of
one document are kept per claim so one long page cannot crowd out every other source.

Failure policy: never raises.
"""

from __future__ import annotations

from collections import defaultdict

from pipeline.evidence.retrieval import Candidate


async def filter_relevant(
    candidates: list[Candidate],
    *,
    min_score: float,
    per_document: int = 2,
    exclude_urls: frozenset[str] = frozenset(),
) -> list[Candidate]:
    """Keep relevant candidates, best first within each claim; never the post's own pages."""
    kept: list[Candidate] = []
    per_doc: dict[tuple[str, str], int] = defaultdict(int)
    seen: set[tuple[str, str]] = set()  # several queries of one claim may find one passage
    for cand in sorted(candidates, key=lambda c: (c.claim_id, -c.cosine)):
        if cand.cosine < min_score or cand.document.url in exclude_urls:
            continue
        if (cand.claim_id, cand.passage.id) in seen:
            continue
        seen.add((cand.claim_id, cand.passage.id))
        key = (cand.claim_id, cand.document.id)
        if per_doc[key] >= per_document:
            continue
        per_doc[key] += 1
        kept.append(cand)
    return kept
