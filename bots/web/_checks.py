"""The checks list (filters, full-text search, pages) and a check's full page."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from bots.web._access import Access, Principal
from bots.web._deps import needs
from bots.web._views import Views
from pipeline.errors import NotFoundError
from pipeline.records import Check, Evidence
from storage.browse import CheckFilter

FILTERS = ("q", "platform", "verdict", "judge", "reviewed", "since", "until")


def _day(value: str) -> datetime | None:
    try:
        return datetime.strptime(value, "%Y-%m-%d").replace(tzinfo=UTC) if value else None
    except ValueError:
        return None


def parse_filter(args: dict[str, str]) -> CheckFilter:
    """Return the filter the query string asks for (bad dates are ignored)."""
    until = _day(args.get("until", ""))
    reviewed = {"yes": True, "no": False}.get(args.get("reviewed", ""))
    return CheckFilter(
        platform=args.get("platform") or None,
        verdict=args.get("verdict") or None,
        judge=args.get("judge") or None,
        since=_day(args.get("since", "")),
        until=until + timedelta(days=1) if until else None,
        reviewed=reviewed,
        query=(args.get("q") or "").strip()[:200] or None,
    )


def router(access: Access, views: Views) -> APIRouter:
    """Return the routes of the checks pages."""
    routes = APIRouter()
    as_viewer = Depends(needs(access, "viewer"))
    store = access.app.store

    @routes.get("/", response_class=HTMLResponse)
    async def checks_list(request: Request, me: Principal = as_viewer) -> HTMLResponse:
        args = {k: request.query_params.get(k, "") for k in FILTERS}
        try:
            page = max(1, int(request.query_params.get("page", "1")))
        except ValueError:
            page = 1
        where = parse_filter(args)
        result = store.browse.checks(where, page=page)
        kept = {k: v for k, v in args.items() if v}

        def page_link(n: int) -> str:
            return "/?" + urlencode({**kept, "page": n})

        return views.render(
            request,
            "checks.html",
            f=where,
            args=args,
            result=result,
            choices=store.browse.choices(),
            page_link=page_link,
        )

    @routes.get("/check/{check_id}", response_class=HTMLResponse)
    async def check_page(
        request: Request, check_id: str, me: Principal = as_viewer
    ) -> HTMLResponse:
        try:
            check = store.checks.get(check_id)
        except NotFoundError as exc:
            return views.render(
                request, "error.html", code=404, title="No such check", message=str(exc)
            )
        return views.render(request, "check.html", **check_context(store.db, check))

    return routes


def check_context(db: Any, check: Check) -> dict[str, Any]:
    """Return what the check page shows, grouped per claim."""
    items = {i.claim_number: i for i in check.correction.items}
    graphs = {g.claim_id: g for g in check.graphs}
    verdicts = {v.claim_id: v for v in check.verdict.claims}
    by_claim: dict[str, list[Evidence]] = defaultdict(list)
    for e in check.evidence:
        by_claim[e.claim_id].append(e)
    quotes: dict[str, str] = {}
    ref_docs = {r.number: r.document_id for r in check.correction.references}
    for item in check.correction.items:
        if item.quote is None:
            continue
        doc = ref_docs.get(item.quote.reference)
        for e in check.evidence:
            if e.document.id == doc and item.quote.text in e.passage.text:
                quotes[e.id] = item.quote.text
    claims = []
    for claim in check.claims:
        groups: dict[str, list[Evidence]] = defaultdict(list)
        for e in by_claim.get(claim.id, []):
            groups[e.stance.value].append(e)
        claims.append(
            {
                "claim": claim,
                "verdict": verdicts.get(claim.id),
                "item": items.get(claim.position + 1),
                "graph": graphs.get(claim.id),
                "narratives": [{"stance": s, "evidence": g} for s, g in groups.items()],
            }
        )
    requests = [
        dict(zip(("platform", "workspace_id", "channel_id", "created_at"), r, strict=True))
        for r in db.execute(
            "SELECT platform, workspace_id, channel_id, created_at FROM platform_requests "
            "WHERE check_id = ?",
            [check.id],
        ).fetchall()
    ]
    for r in requests:
        r["created_at"] = datetime.fromisoformat(r["created_at"])
    replies = [
        dict(
            zip(
                ("platform", "target_id", "kind", "status", "platform_reply_id", "error"),
                r,
                strict=True,
            )
        )
        for r in db.execute(
            "SELECT platform, target_id, kind, status, platform_reply_id, error FROM replies "
            "WHERE check_id = ?",
            [check.id],
        ).fetchall()
    ]
    return {
        "check": check,
        "claims": [c for c in claims if c["verdict"] is not None],
        "quotes": quotes,
        "requests": requests,
        "replies": replies,
        "total_seconds": sum(t.seconds for t in check.timings),
        "calls": sum(u.calls for u in check.usage),
        "tokens_in": sum(u.input_tokens for u in check.usage),
        "tokens_out": sum(u.output_tokens for u in check.usage),
        "cost": sum(u.cost_usd for u in check.usage),
    }
