"""Query building: one search query per claim for each retrieval path.

The dense path embeds the claim as written; the lexical path is an FTS5 expression of the
claim's content words, OR-ed so that partial matches still rank (BM25 rewards the overlap).

Failure policy: never raises; a claim without content words gets an empty lexical query and is
searched by embedding only.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.records.domain import Claim
from pipeline.util.text import keywords


@dataclass(frozen=True)
class Query:
    """What to search for one claim."""

    claim_id: str
    text: str  # embedded for the dense path
    terms: tuple[str, ...]  # content words for the lexical path

    @property
    def fts(self) -> str:
        """Return the FTS5 MATCH expression (empty when there are no terms)."""
        return " OR ".join(f'"{t}"' for t in self.terms)


async def build_queries(claims: list[Claim]) -> list[Query]:
    """Return one query per claim."""
    return [
        Query(
            claim_id=c.id,
            text=c.text,
            terms=tuple(t.replace('"', "") for t in keywords(c.text, limit=20)),
        )
        for c in claims
    ]
