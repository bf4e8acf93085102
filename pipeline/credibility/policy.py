"""The source policy: which stored rating applies to a URL, and whether it may be cited.

Ratings come from `pipeline.credibility.importers` (operator tables and the built-in seed) through
a `RatingTable`; the policy only reads them.
"""

from __future__ import annotations

from typing import Literal, get_args

from pipeline.credibility.domains import candidate_keys
from pipeline.ports import RatingTable
from pipeline.records.domain import SourceRating, Tier

UNRATED_ORIGIN = "none"

# allow: unrated publishers are citable wherever they came from; exclude: never; local: only
# documents the operator put in the local index, never pages found by live web search (the
# default: the operator chose what went into the index, the open web is not vetted).
UnratedPolicy = Literal["allow", "exclude", "local"]


class SourcePolicy:
    """Resolve a URL or domain to its most specific rating and decide whether it may be cited.

    The most specific key wins, even over a block on its parent domain, so blocking a platform
    does not block a reputable section of it. Lookups are cached per instance: build one per
    check or worker batch, since ratings imported afterwards are not seen by an old instance.
    """

    def __init__(self, table: RatingTable, *, unrated: UnratedPolicy = "local") -> None:
        if unrated not in get_args(UnratedPolicy):
            raise ValueError(f"unrated must be 'allow', 'exclude' or 'local', not {unrated!r}")
        self.table = table
        self.unrated = unrated
        self._known: dict[str, SourceRating | None] = {}

    def rate(self, url_or_domain: str) -> SourceRating:
        """Return the most specific stored rating for url_or_domain, or an UNRATED one."""
        try:
            keys = candidate_keys(url_or_domain)
        except ValueError as exc:
            return SourceRating(url_or_domain, Tier.UNRATED, f"no rating: {exc}", UNRATED_ORIGIN)
        missing = [k for k in keys if k not in self._known]
        if missing:
            found = self.table.get_many(missing)
            self._known.update((k, found.get(k)) for k in missing)
        for key in keys:
            rating = self._known[key]
            if rating is not None:
                return rating
        return SourceRating(keys[-1], Tier.UNRATED, f"no rating for {keys[-1]}", UNRATED_ORIGIN)

    def citable(self, rating: SourceRating, *, web: bool = False) -> bool:
        """Return whether evidence from a source with this rating may be cited.

        `web` is True for a page found by live web search (not yet in the local index).
        """
        if rating.tier is Tier.UNRATED:
            return self.unrated == "allow" or (self.unrated == "local" and not web)
        return rating.tier in (Tier.HIGH, Tier.MEDIUM, Tier.LOW)
