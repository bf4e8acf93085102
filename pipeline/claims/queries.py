"""Query building: one search query per claim for each retrieval path.

The dense path embeds the claim as written; the lexical path is an FTS5 expression of the
claim's content words, OR-ed so that partial matches still rank (BM25 rewards the overlap).
Chinese, Japanese and Thai are written without spaces between words, and Korean attaches
particles to its words, so a word-tokenised index holds whole runs that only an identical run
matches; for those scripts `Query.trigram_fts` is the claim's three-character pieces, OR-ed, for
the index's trigram table (storage m026).

Failure policy: never raises; a claim without content words gets an empty lexical query and is
searched by embedding only.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from pipeline.records.domain import Claim
from pipeline.search.locales import search_language
from pipeline.util.text import keywords

# Runs of the scripts the trigram table serves; the FTS5 trigram tokenizer needs 3 characters.
_TRIGRAM_RUN = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\p{Thai}ー]{3,}")
MAX_TRIGRAMS = 40


def trigrams(text: str, *, limit: int = MAX_TRIGRAMS) -> tuple[str, ...]:
    """Return the distinct three-character pieces of text's CJK, Hangul and Thai runs."""
    found: dict[str, None] = {}
    for run in _TRIGRAM_RUN.findall(text):
        for i in range(len(run) - 2):
            found.setdefault(run[i : i + 3], None)
            if len(found) == limit:
                return tuple(found)
    return tuple(found)


@dataclass(frozen=True)
class Query:
    """What to search for one claim."""

    claim_id: str
    text: str  # embedded for the dense path
    terms: tuple[str, ...]  # content words for the lexical path
    language: str | None = None  # what web search asks in (ISO 639-1); None: the default

    @property
    def fts(self) -> str:
        """Return the FTS5 MATCH expression (empty when there are no terms)."""
        return " OR ".join(f'"{t}"' for t in self.terms)

    @property
    def trigram_fts(self) -> str:
        """Return the trigram table's MATCH expression (empty for claims in other scripts)."""
        return " OR ".join(f'"{t}"' for t in trigrams(self.text))


async def build_queries(claims: list[Claim]) -> list[Query]:
    """Return one query per claim."""
    return [
        Query(
            claim_id=c.id,
            text=c.text,
            terms=tuple(t.replace('"', "") for t in keywords(c.text, limit=20)),
            language=search_language(c.language),
        )
        for c in claims
    ]
