"""Retrieval leads: pages a third party suggested as evidence about a post (`Post.leads`).

A lead is not one of the post's own links (`Post.links`), which are never evidence about the
post and whose page may be read as the post's content: it is a URL that someone else pointed at
as where the answer may be — the people who asked X for a Community Note
(`suggested_source_links_with_counts`, `note_request_suggestions`), a moderator, whoever calls
the HTTP API or the CLI with `leads`. The check fetches leads beside its search results
(`pipeline.evidence.suggested`) through the same fetcher and the same credibility policy: a lead
is read like a search result from its publisher, never trusted more for having been suggested.

`clean_leads` keeps at most `MAX_LEADS` well-formed http(s) URLs (no credentials, at most 2,048
characters; the fragment dropped), each page once (by its canonical URL), in the order given,
and says why it dropped each other one. `with_leads` does that for a post, also dropping the
post's own URL and links, and logs what it dropped.

Failure policy: never raises for a bad URL; it is dropped with its reason.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, replace

from pipeline.errors import UnsafeURLError
from pipeline.fetch.addresses import check_url
from pipeline.records.domain import MAX_LEADS, Post
from pipeline.search.urls import canonical_url

log = logging.getLogger(__name__)

__all__ = ["MAX_LEADS", "Leads", "clean_leads", "with_leads"]


@dataclass(frozen=True)
class Leads:
    """The leads kept, and each one dropped with why."""

    kept: tuple[str, ...]
    dropped: tuple[tuple[str, str], ...] = ()  # (the URL as given, the reason)


def clean_leads(urls: Iterable[str], *, limit: int = MAX_LEADS, own: Iterable[str] = ()) -> Leads:
    """Return the usable leads among urls (at most limit), and why each other one was not.

    `own` are the post's own URL and links: a lead to one of them is dropped (a post is not
    evidence about itself).
    """
    own_keys = {canonical_url(u) for u in own if u}
    kept: dict[str, str] = {}  # canonical URL -> the URL kept
    dropped: list[tuple[str, str]] = []
    for raw in urls:
        url = str(raw).strip()
        try:
            parsed = check_url(url)
        except UnsafeURLError as exc:
            dropped.append((url, exc.reason))
            continue
        url = str(parsed.copy_with(fragment=None))
        key = canonical_url(url)
        if key in own_keys:
            dropped.append((url, "the post's own link"))
        elif key in kept:
            continue  # the same page again: not worth a reason
        elif len(kept) >= limit:
            dropped.append((url, f"more than {limit} leads"))
        else:
            kept[key] = url
    return Leads(tuple(kept.values()), tuple(dropped))


def with_leads(post: Post, urls: Iterable[str], *, limit: int = MAX_LEADS) -> Post:
    """Return post with the usable urls as its leads (after those it has), logging the rest."""
    leads = clean_leads(
        (*post.leads, *urls), limit=limit, own=(u for u in (post.url, *post.links) if u)
    )
    for url, reason in leads.dropped:
        log.info(
            "lead dropped",
            extra={
                "post": post.platform_id,
                "platform": post.platform,
                "lead": url[:200],
                "reason": reason,
            },
        )
    return replace(post, leads=leads.kept)
