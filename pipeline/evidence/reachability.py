"""Reference reachability: drop evidence whose page does not answer before anything cites it.

Each URL is fetched through the SSRF-safe fetcher (whose page cache makes pages fetched moments
ago free) and the outcome is cached in the database for `ttl`, so a popular reference is
checked once, not once per reply.

Failure policy: never raises; a URL that fails for any fetch reason counts as unreachable.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import timedelta

from pipeline.errors import FactbotError, RobotsDisallowedError
from pipeline.fetch.fetcher import Fetcher
from pipeline.ports import ReachabilityCache
from pipeline.records.domain import Evidence, Reachability, utcnow

log = logging.getLogger(__name__)


async def is_reachable(
    url: str, *, fetcher: Fetcher, cache: ReachabilityCache, ttl: timedelta
) -> bool:
    """Return whether url answers with a page (cached for ttl)."""
    known = cache.get_reachability(url)
    if known is not None:
        return known.reachable
    try:
        await fetcher.fetch(url)
        outcome = Reachability(url, True, "ok", utcnow())
    except RobotsDisallowedError:
        # The site asks bots not to fetch it; people can still follow the link.
        outcome = Reachability(url, True, "not checked: robots.txt disallows it", utcnow())
    except FactbotError as exc:
        outcome = Reachability(url, False, str(exc), utcnow())
    cache.put_reachability(outcome, ttl=ttl)
    if not outcome.reachable:
        log.info("reference unreachable", extra={"url": url, "reason": outcome.reason})
    return outcome.reachable


async def keep_reachable(
    evidence: Sequence[Evidence], *, fetcher: Fetcher, cache: ReachabilityCache, ttl: timedelta
) -> list[Evidence]:
    """Return the evidence whose document URL is reachable, in the same order."""
    urls = list(dict.fromkeys(e.document.url for e in evidence))
    answers = await asyncio.gather(
        *(is_reachable(u, fetcher=fetcher, cache=cache, ttl=ttl) for u in urls)
    )
    reachable = {u for u, ok in zip(urls, answers, strict=True) if ok}
    return [e for e in evidence if e.document.url in reachable]
