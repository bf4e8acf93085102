"""Fact-checks: what the index of published reviews holds, and what a text would match.

The page counts the indexed reviews (in all, by publisher, by language) and takes a text. A
text of `MIN_WORDS` words or more goes through the matcher the checks use
(`app.resources.fact_checks`, in the CPU pool), so the operator sees what a post would match:
each review's re-ranker score, lexical score, cosine and the match decision with its reasons.
A shorter text (a name, a word) is looked up in the index's full-text search instead and the
reviews are listed without scores. Review text comes from feeds: the template escapes all of
it and links only http(s) addresses.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from bots.app.root import App
from bots.dashboard._access import Access, Principal
from bots.dashboard._deps import needs
from bots.dashboard._views import Views
from pipeline.util.cpu import run_cpu

MIN_WORDS = 3  # fewer words: a plain listing (the matcher needs a claim to compare)
MAX_CHARS = 2000
SHOWN = 10  # reviews a search shows
TOP_PUBLISHERS = 25


def router(access: Access, views: Views) -> APIRouter:
    """Return the fact-checks route."""
    routes = APIRouter()
    as_viewer = Depends(needs(access, "viewer"))
    app = access.app
    store = app.store

    @routes.get("/factchecks", response_class=HTMLResponse)
    async def fact_checks(request: Request, q: str = "", me: Principal = as_viewer) -> HTMLResponse:
        """The fact-check index: counts, and the reviews a text matches (or lists)."""
        text = " ".join(q.split())[:MAX_CHARS]
        stats = await store.call(store.fact_checks.fact_check_stats)
        publishers = list(stats.by_publisher.items())
        mode, rows = "", []
        if len(text.split()) >= MIN_WORDS:
            mode, rows = "match", await _matched(app, text)
        elif text:
            found = await store.call(store.fact_checks.search_fact_checks, text, SHOWN)
            mode, rows = "list", [{"review": review} for _, review in found]
        return views.render(
            request,
            "factchecks.html",
            q=text,
            stats=stats,
            publishers=publishers[:TOP_PUBLISHERS],
            more_publishers=max(0, len(publishers) - TOP_PUBLISHERS),
            mode=mode,
            rows=rows,
            min_words=MIN_WORDS,
        )

    return routes


async def _matched(app: App, text: str) -> list[dict[str, Any]]:
    """Return the reviews the matcher ranks for text, with their scores and the decision."""
    resources = app.resources
    language = None
    if resources.languages is not None:
        found = await run_cpu(resources.cpu, resources.languages.identify, text)
        language = found.code if found.determined else None
    [matches] = await resources.fact_checks.match([text], languages=[language], limit=SHOWN)
    return [
        {
            "review": m.fact_check,
            "score": m.score,
            "lexical": m.lexical,
            "cosine": m.semantic,
            "accepted": m.accepted,
            "reasons": m.reasons,
        }
        for m in matches
    ]
