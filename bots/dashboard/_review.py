"""The review queue page: proposed corrections, approve / edit / reject, exactly once.

Every action goes through `bots.runtime.review.proposals.ReviewQueue`, the same actions the Slack
and Discord buttons call: the first decision wins (whoever clicks, in whichever tab), an edited text
is checked again for links factbot did not retrieve, and later clicks are told who decided and when.
The reviewer recorded is the signed-in user's name.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Form, Request
from fastapi.responses import HTMLResponse, Response

from bots.dashboard._access import Access, Principal
from bots.dashboard._deps import needs
from bots.dashboard._views import Views
from bots.runtime.review.proposals import (
    AlreadyDecidedError,
    EditRefusedError,
    Proposal,
    ReviewError,
    ReviewQueue,
)
from pipeline.errors import NotFoundError
from pipeline.records.domain import Check

SHOWN = ("pending", "approved", "posted", "rejected", "failed", "expired")


DONE = {"approve": "Approved", "edit": "Approved with your edit", "reject": "Rejected"}


def router(access: Access, views: Views) -> APIRouter:
    """Return the review routes."""
    routes = APIRouter()
    as_viewer = Depends(needs(access, "viewer"))
    as_reviewer = Depends(needs(access, "reviewer"))
    app = access.app
    queue = ReviewQueue(app.store, app.settings, clock=app.clock)

    def card(proposal: Proposal) -> dict[str, object]:
        check: Check | None
        try:
            check = app.store.checks.get(proposal.check_id)
        except NotFoundError:
            check = None
        return {"p": proposal, "check": check}

    def page(request: Request, status: str, *, code: int = 200, message: str = "") -> Response:
        shown = status if status in SHOWN else "pending"
        proposals = (
            queue.pending(limit=100) if shown == "pending" else queue.list(status=shown, limit=100)
        )
        return views.render(
            request,
            "review.html",
            code=code,
            cards=[card(p) for p in proposals],
            status=shown,
            counts=app.store.review.counts(),
            message=message,
        )

    @routes.get("/review", response_class=HTMLResponse)
    async def review(
        request: Request, status: str = "pending", me: Principal = as_viewer
    ) -> Response:
        """The human review queue: proposed corrections by status (pending by default)."""
        return await app.store.call(page, request, status)

    async def decide(
        request: Request, proposal_id: str, action: str, me: Principal, **kw: str
    ) -> Response:
        # Decided, and the page rendered, in a storage thread: it is the review queue's writes.
        return await app.store.call(decided, request, proposal_id, action, me, kw)

    def decided(
        request: Request, proposal_id: str, action: str, me: Principal, kw: dict[str, str]
    ) -> Response:
        code, message = 200, ""
        try:
            if action == "reject":
                decision = queue.reject(proposal_id, reviewer=me.name, reason=kw.get("reason", ""))
            else:
                decision = queue.approve(proposal_id, reviewer=me.name, text=kw.get("text"))
            message = DONE[decision.action] + ": recorded once."
        except EditRefusedError as exc:
            code, message = 422, str(exc)
        except AlreadyDecidedError as exc:
            code, message = 409, f"Not changed: {exc}."
        except NotFoundError as exc:
            code, message = 404, str(exc)
        except ReviewError as exc:
            code, message = 409, str(exc)
        if request.headers.get("hx-request"):
            try:
                proposal = queue.get(proposal_id)
            except NotFoundError:
                return Response(message, status_code=code)
            return views.render(
                request, "_proposal.html", code=code, c=card(proposal), message=message
            )
        return page(request, "pending", code=code, message=message)

    @routes.post("/review/{proposal_id}/approve", response_class=HTMLResponse)
    async def approve(request: Request, proposal_id: str, me: Principal = as_reviewer) -> Response:
        """Approve a proposed correction: it is posted once."""
        return await decide(request, proposal_id, "approve", me)

    @routes.post("/review/{proposal_id}/edit", response_class=HTMLResponse)
    async def edit(
        request: Request,
        proposal_id: str,
        text: str = Form(max_length=10_000),
        me: Principal = as_reviewer,
    ) -> Response:
        """Approve a proposed correction with an edited text: that text is posted once."""
        return await decide(request, proposal_id, "edit", me, text=text)

    @routes.post("/review/{proposal_id}/reject", response_class=HTMLResponse)
    async def reject(
        request: Request,
        proposal_id: str,
        reason: str = Form(default="", max_length=500),
        me: Principal = as_reviewer,
    ) -> Response:
        """Reject a proposed correction: nothing is posted."""
        return await decide(request, proposal_id, "reject", me, reason=reason)

    return routes
