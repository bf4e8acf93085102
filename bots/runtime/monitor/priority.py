"""The order a scan takes its candidates in: posts a published fact-check answers come first.

A scan decides its candidates one by one, and the budgets (checks per hour and per day, money)
go to the first ones that pass the score. A post whose text the fact-check matcher
(`pipeline.factchecks.matching.FactCheckMatcher`) matches, with the match decision accepting
the review as the same claim, gets an answer that is cheap (the check stops at the published
review) and reliable (a fact-checker wrote it): such posts are taken first, the others after
them in the order the source returned them. Nothing else changes: a matched post still needs
its score, and the thread, author and budget rules still apply.

Matching is CPU work (BM25 and embeddings over the index): `match` runs it in the CPU pool, off
the event loop, for the whole batch at once. Posts that are never checked (by factbot or other
bots, mentioning factbot, without text) are not matched.

Failure policy: a matcher that fails (an embedder error) is logged and leaves the source's
order; ordering is an optimisation and never stops a scan.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Protocol

from bots.runtime.monitor.candidates import Candidate
from pipeline.records.factchecks import FactCheckMatch

log = logging.getLogger(__name__)


class MatchesFactChecks(Protocol):
    """The fact-check matcher, as the monitor uses it (`FactCheckMatcher.match`)."""

    async def match(
        self, texts: Sequence[str], *, languages: Sequence[str | None] | None = None, limit: int = 5
    ) -> list[list[FactCheckMatch]]:
        """Return, per text, the best `limit` reviews (the first accepted or not)."""
        ...


def _matchable(candidate: Candidate) -> bool:
    author = candidate.author
    return not (author.is_self or author.is_bot or candidate.mentions_bot) and bool(
        candidate.post.text.strip()
    )


async def matched_first(
    candidates: Sequence[Candidate], matcher: MatchesFactChecks | None
) -> list[Candidate]:
    """Return candidates with those an accepted fact-check match answers first (module doc)."""
    wanted = [n for n, c in enumerate(candidates) if _matchable(c)]
    if matcher is None or not wanted:
        return list(candidates)
    texts = [candidates[n].post.text for n in wanted]
    languages = [candidates[n].post.language for n in wanted]
    try:
        found = await matcher.match(texts, languages=languages, limit=1)
    except Exception as exc:  # noqa: BLE001 - the order is an optimisation: keep the source's
        log.warning("fact-check matching failed; source order kept", extra={"error": repr(exc)})
        return list(candidates)
    answered = {n for n, best in zip(wanted, found, strict=True) if best and best[0].accepted}
    if answered:
        log.info("candidates answered by a fact-check go first", extra={"matched": len(answered)})
    first = [c for n, c in enumerate(candidates) if n in answered]
    return first + [c for n, c in enumerate(candidates) if n not in answered]
