"""The review page over the real ReviewQueue: approve once, edits re-checked, who and when."""

from __future__ import annotations

from fastapi.testclient import TestClient

from bots.app.root import App
from bots.runtime.platform.contract import Destination
from bots.runtime.review.proposals import ReviewQueue
from tests.bots.dashboard.conftest import csrf_of, sign_in
from tests.bots.dashboard.factory import make_check, store_checks


def propose(app: App, key: str = "monitor:slack:1") -> str:
    """Store a check and propose its correction; return the proposal id."""
    (check,) = store_checks(app.store, [make_check(platform="slack")])
    destination = Destination("slack", "W1", "C1", message_id="m1", thread_id="m1")
    proposal = ReviewQueue(app.store, app.settings).propose(
        check_id=check.id, destination=destination, reason="X needs a person", key=key
    )
    return proposal.id


def test_approve_is_recorded_once_with_who_and_when(app: App, client: TestClient) -> None:
    proposal_id = propose(app)
    sign_in(client, "rita")
    page = client.get("/review")
    assert "X needs a person" in page.text and "Approve" in page.text
    token = csrf_of(page.text)
    first = client.post(f"/review/{proposal_id}/approve", data={"csrf": token})
    assert first.status_code == 200 and "recorded once" in first.text
    second = client.post(f"/review/{proposal_id}/approve", data={"csrf": token})
    assert second.status_code == 409 and "already approved by rita" in second.text
    replies = [j for j in app.store.jobs.list() if j.kind == "reply:slack"]
    assert len(replies) == 1  # one reply job, whoever clicks how often
    decided = client.get("/review?status=approved")
    assert "Approved by <strong>rita</strong>" in decided.text


def test_an_edit_with_an_unretrieved_link_is_refused_clearly(app: App, client: TestClient) -> None:
    proposal_id = propose(app)
    sign_in(client, "rita")
    token = csrf_of(client.get("/review").text)
    refused = client.post(
        f"/review/{proposal_id}/edit",
        data={"csrf": token, "text": "False. See https://made-up.example/proof"},
        headers={"HX-Request": "true"},
    )
    assert refused.status_code == 422
    assert "did not retrieve" in refused.text and "made-up.example" in refused.text
    assert app.store.review.decision(proposal_id) is None  # nothing decided, nothing posted
    edited = client.post(
        f"/review/{proposal_id}/edit",
        data={"csrf": token, "text": "This is false: https://health.example.org/5g"},
        headers={"HX-Request": "true"},
    )
    assert edited.status_code == 200 and "Approved with your edit" in edited.text
    decision = app.store.review.decision(proposal_id)
    assert decision is not None and decision.action == "edit" and decision.reviewer == "rita"


def test_reject_and_roles(app: App, client: TestClient) -> None:
    proposal_id = propose(app)
    sign_in(client, "vera")  # a viewer sees the queue but has no buttons and cannot decide
    page = client.get("/review")
    assert "X needs a person" in page.text and "/approve" not in page.text
    token = csrf_of(page.text)
    assert client.post(f"/review/{proposal_id}/reject", data={"csrf": token}).status_code == 403
    client.post("/signout", data={"csrf": token})
    sign_in(client, "ada")
    token = csrf_of(client.get("/review").text)
    done = client.post(f"/review/{proposal_id}/reject", data={"csrf": token, "reason": "wrong"})
    assert done.status_code == 200 and "Rejected" in done.text
    assert "/approve" not in client.get("/review").text
    assert client.post("/review/nope/approve", data={"csrf": token}).status_code == 404


def test_reviewed_filter_and_agreement(app: App, client: TestClient) -> None:
    proposal_id = propose(app)
    (other,) = store_checks(app.store, [make_check()])
    ReviewQueue(app.store, app.settings).approve(proposal_id, reviewer="rita")
    sign_in(client, "vera")
    reviewed = client.get("/?reviewed=yes").text
    assert other.id not in reviewed and "/check/" in reviewed
    assert other.id in client.get("/?reviewed=no").text
    figures = client.get("/overview/data.json").json()
    assert figures["agreement"] == {"approved": 1, "edited": 0, "rejected": 0}
