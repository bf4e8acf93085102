"""The checks list (filters, full-text search, pages) and a check's full page."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse

from bots.dashboard._access import Access, Principal
from bots.dashboard._deps import needs
from bots.dashboard._views import Views
from pipeline.errors import NotFoundError
from pipeline.records.domain import Check, Evidence
from storage import Store
from storage.browse import CheckFilter

FILTERS = ("q", "platform", "verdict", "judge", "language", "reviewed", "since", "until")


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
        language=(args.get("language") or "").strip()[:35] or None,
    )


def router(access: Access, views: Views) -> APIRouter:
    """Return the routes of the checks pages."""
    routes = APIRouter()
    as_viewer = Depends(needs(access, "viewer"))
    store = access.app.store

    @routes.get("/", response_class=HTMLResponse)
    async def checks_list(request: Request, me: Principal = as_viewer) -> HTMLResponse:
        """The checks, newest first, filtered and searched (full text)."""
        args = {k: request.query_params.get(k, "") for k in FILTERS}
        try:
            page = max(1, int(request.query_params.get("page", "1")))
        except ValueError:
            page = 1
        where = parse_filter(args)
        result = await store.call(store.browse.checks, where, page=page)
        kept = {k: v for k, v in args.items() if v}

        def page_link(n: int) -> str:
            return "/?" + urlencode({**kept, "page": n})

        return views.render(
            request,
            "checks.html",
            f=where,
            args=args,
            result=result,
            choices=await store.call(store.browse.choices),
            page_link=page_link,
        )

    @routes.get("/check/{check_id}", response_class=HTMLResponse)
    async def check_page(
        request: Request, check_id: str, me: Principal = as_viewer
    ) -> HTMLResponse:
        """One check as moderators see it: claims, evidence, verdict and replies."""
        try:
            check = await store.call(store.checks.get, check_id)
        except NotFoundError as exc:
            return views.render(
                request, "error.html", code=404, title="No such check", message=str(exc)
            )
        context = await store.call(check_context, store, check)
        return views.render(request, "check.html", **context)

    return routes


def narrative_groups(check: Check, claim_id: str, evidence: list[Evidence]) -> list[dict[str, Any]]:
    """Return a claim's evidence grouped by the narratives the judge read, then the rest.

    Each group has a title, the judge's relation, rationale and facets when it assessed the
    narrative, and its evidence (the representative first). Evidence in no narrative (the
    no-model judge, a check stored before narratives were, or evidence the judge never saw)
    is grouped by its stance.
    """
    by_id = {e.id: e for e in evidence}
    assessed = {a.narrative_id: a for a in check.assessments if a.claim_id == claim_id}
    groups: list[dict[str, Any]] = []
    placed: set[str] = set()
    mine = [n for n in check.narratives if n.claim_id == claim_id]
    for number, narrative in enumerate(mine, 1):
        ids = [narrative.representative_id, *narrative.evidence_ids]
        members = [by_id[i] for i in dict.fromkeys(ids) if i in by_id]
        if not members:
            continue  # its evidence left the check (retention, or the citation check)
        placed.update(e.id for e in members)
        assessment = assessed.get(narrative.id)
        groups.append(
            {
                "title": f"Narrative {number}",
                "relation": assessment.relation.value if assessment else None,
                "rationale": assessment.rationale if assessment else "",
                "facets": [f for f in assessment.facets if f.status != "consistent"]
                if assessment
                else [],
                "evidence": members,
            }
        )
    rest: dict[str, list[Evidence]] = defaultdict(list)
    for e in evidence:
        if e.id not in placed:
            rest[e.stance.value].append(e)
    for stance, members in rest.items():
        title = f"Other evidence: {stance}" if groups else f"Evidence: {stance}"
        groups.append(
            {"title": title, "relation": None, "rationale": "", "facets": [], "evidence": members}
        )
    return groups


def check_context(store: Store, check: Check) -> dict[str, Any]:
    """Return what the check page shows, grouped per claim."""
    items = {i.claim_number: i for i in check.correction.items}
    graphs = {g.claim_id: g for g in check.graphs}
    matched = {m.claim_id: m for m in check.fact_checks}
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
    claims = [
        {
            "claim": claim,
            "verdict": verdicts.get(claim.id),
            "item": items.get(claim.position + 1),
            "graph": graphs.get(claim.id),
            "fact_check": matched.get(claim.id),
            "narratives": narrative_groups(check, claim.id, by_claim.get(claim.id, [])),
        }
        for claim in check.claims
    ]
    requests = [
        {
            "platform": r.platform,
            "workspace_id": r.workspace_id,
            "channel_id": r.channel_id,
            "created_at": datetime.fromisoformat(r.created_at),
        }
        for r in store.platform.for_check(check.id)
    ]
    replies = store.replies.for_check(check.id)
    # The check's job keeps what its request could not take (an image over the size limit).
    notes = store.jobs.check_notes(check.id)
    # A description keeps only the start of an uploaded image's data: URI; the post has it
    # whole until retention removes it, and the page shows it as a thumbnail till then.
    thumbnails: dict[str, str] = {}
    for d in check.images.descriptions:
        if d.url.startswith("data:image/"):
            whole = next((r for r in check.post.image_refs if r.startswith(d.url)), None)
            if whole is not None:
                thumbnails[d.image_id] = whole
    return {
        "check": check,
        "notes": notes,
        "thumbnails": thumbnails,
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
