"""Suggested pages: fetch a post's leads (`Post.leads`) into the index beside search results.

A lead is a page a third party pointed at as evidence (the people who asked X for a Community
Note, a moderator, whoever calls the API or the CLI with `leads`; `pipeline.inputs.leads`). It
takes the path a search result takes (`pipeline.evidence.web`), and no shortcut:

- its publisher is rated first, as a page found by live web search is (`Rater.citable(...,
  web=True)`): a blocked, unusable or (unless the operator allows them) unrated publisher is not
  fetched at all; a suggestion earns a page no credibility it does not have;
- it is fetched by the same fetcher (address policy, robots.txt, paywall and bot walls, host
  gates, size and time limits) and extracted the same way; the page it ends on after redirects
  is rated again, so a redirect cannot launder a publisher that may not be cited;
- a page dated after the check's time bound is not evidence for the post, as a search result
  dated after it is not;
- what is read goes into the evidence index, where the ordinary retrieval, relevance filter,
  page screening (a page with instruction-like text is never evidence), credibility ranking and
  reachability check treat it like any other document. Nothing here makes it evidence: only its
  relevance to a claim and its publisher's tier do.

Failure policy: never raises for one lead; each one's outcome, read or why not, is returned
(`LeadStatus`) and stored with the check's search status, so a lead that could not be read is
recorded as a failure and can never be cited.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from datetime import datetime

from pipeline.errors import UnsafeURLError
from pipeline.evidence.ingest import Ingester
from pipeline.evidence.pages import fetch_page
from pipeline.evidence.ranking import Rater
from pipeline.fetch.addresses import check_url
from pipeline.fetch.fetcher import Fetcher
from pipeline.records.domain import MAX_LEADS
from pipeline.records.search_status import LeadStatus
from pipeline.search.urls import canonical_url
from pipeline.util.cpu import CpuPool

log = logging.getLogger(__name__)

LEAD = "lead"  # the documents' `search_provider`: where the page came from


async def gather_leads(
    leads: Sequence[str],
    *,
    fetcher: Fetcher,
    rater: Rater,
    ingester: Ingester,
    before: datetime | None = None,
    own: Sequence[str] = (),
    cpu: CpuPool | None = None,
) -> tuple[LeadStatus, ...]:
    """Fetch the leads into the index (at most MAX_LEADS); return what became of each.

    `own` are the post's own URL and links: never evidence about it, so never fetched as such.
    """
    own_keys = frozenset(canonical_url(u) for u in own if u)
    outcomes = await asyncio.gather(
        *(
            _read_one(
                url,
                fetcher=fetcher,
                rater=rater,
                ingester=ingester,
                before=before,
                own=own_keys,
                cpu=cpu,
            )
            for url in list(dict.fromkeys(leads))[:MAX_LEADS]
        )
    )
    await ingester.finish()
    for status in outcomes:
        log.info(
            "lead",
            extra={"lead": status.url[:200], "read": status.read, "reason": status.reason},
        )
    return tuple(outcomes)


async def _read_one(
    url: str,
    *,
    fetcher: Fetcher,
    rater: Rater,
    ingester: Ingester,
    before: datetime | None,
    own: frozenset[str],
    cpu: CpuPool | None,
) -> LeadStatus:
    """Fetch, check and index one lead; return its outcome."""
    try:
        check_url(url)
    except UnsafeURLError as exc:
        return LeadStatus(url, False, f"bad URL: {exc.reason}")
    if canonical_url(url) in own:
        return LeadStatus(url, False, "the post's own link")
    refusal = _not_citable(url, rater)
    if refusal:
        return LeadStatus(url, False, refusal)
    fetched = await fetch_page(url, fetcher=fetcher, cpu=cpu)
    if isinstance(fetched, str):
        return LeadStatus(url, False, fetched)
    extracted, page = fetched
    document = extracted.document
    if page.url != url:
        refusal = _not_citable(page.url, rater)
        if refusal:
            return LeadStatus(url, False, f"redirected to {page.url}: {refusal}")
        if canonical_url(page.url) in own:
            return LeadStatus(url, False, "redirected to the post's own link")
    published = document.published_at
    if before is not None and published is not None and published >= before:
        return LeadStatus(url, False, "published after the time bound")
    extra = {"search_provider": LEAD, "author": extracted.metadata.author}
    errors = len(ingester.report.errors)
    if not await ingester.add_document(document, extra) and len(ingester.report.errors) > errors:
        return LeadStatus(url, False, "no usable text")  # False alone: indexed as it is already
    return LeadStatus(url, True)


def _not_citable(url: str, rater: Rater) -> str:
    """Return why url's publisher may not be cited from the web ("" when it may)."""
    rating = rater.rate(url)
    if rater.citable(rating, web=True):
        return ""
    return f"publisher not citable ({rating.tier.value})"
