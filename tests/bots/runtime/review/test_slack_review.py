"""The review channel on Slack, end to end: the real slack-bolt / slack_sdk against the stand-in
Slack, `factbot serve`'s API with its worker pool (check, reply and `review:post` jobs), the real
ReviewQueue. A proposal's card is posted with buttons; clicks are delivered signed, as Slack
delivers them, twice and by two reviewers; assertions are on what the library sent."""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from bots.app.root import App
from bots.runtime.platform.contract import Destination
from bots.runtime.review.proposals import Proposal, ReviewQueue
from bots.settings import ReviewSettings, SlackSettings
from tests.bots.platforms.slack.test_end_to_end import PARENT, SECRET, corpus_app, idle, serving
from tests.support.fake_slack import FakeSlack, block_problem
from tests.support.review_checks import SOURCE, stored_check

__all__ = ["corpus_app"]  # the Slack end-to-end tests' App (deployments: tests/conftest.py)

REVIEW = "CREV"
REVIEWERS = ["UREV1", "UREV2"]


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack(signing_secret=SECRET) as fake:
        fake.add_team("T1", token="xoxb-one")
        fake.add_message("T1", "C1", ts=PARENT, user="U2", text="5G spreads the coronavirus.")
        fake.teams["T1"].channels[REVIEW] = []
        yield fake


def make_app(slack: FakeSlack, corpus_app: Callable[..., App]) -> App:
    settings = SlackSettings(bot_token="xoxb-one", signing_secret=SECRET, api_base=slack.api_base)
    app = corpus_app(settings)
    review = ReviewSettings(platform="slack", channel_id=REVIEW, reviewers=REVIEWERS)
    app.settings = app.settings.model_copy(update={"review": review})
    return app


def propose(app: App, key: str = "monitor:slack:1") -> Proposal:
    stored_check(app.store, f"check-{key}")
    destination = Destination(
        "slack", "T1", "C1", message_id=PARENT, thread_id=PARENT, public={"event_key": key}
    )
    queue = ReviewQueue(app.store, app.settings, clock=app.clock)
    return queue.propose(
        check_id=f"check-{key}", destination=destination, reason="a trending post", key=key
    )


async def until(predicate: Callable[[], Any], seconds: float = 20.0) -> None:
    async with asyncio.timeout(seconds):
        while not predicate():  # noqa: ASYNC110 - polls what the stand-in recorded
            await asyncio.sleep(0.02)


def card_of(slack: FakeSlack) -> dict[str, Any]:
    """Return a copy of the review card as it is now (the stand-in edits its own in place)."""
    [card] = slack.posted("T1", REVIEW)
    return copy.deepcopy(card)


def click(
    slack: FakeSlack, card: dict[str, Any], action: str, user: str, hook: str
) -> dict[str, Any]:
    [button] = [
        b
        for block in card["blocks"]
        if block["type"] == "actions"
        for b in block["elements"]
        if b["action_id"] == f"factbot_review_{action}"
    ]
    return {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "team_id": "T1"},
        "api_app_id": "A0FACTBOT",
        "token": "x",
        "container": {"type": "message", "message_ts": card["ts"], "channel_id": REVIEW},
        "trigger_id": f"trig-{hook}",
        "team": {"id": "T1", "domain": "t1"},
        "channel": {"id": REVIEW, "name": "review"},
        "message": card,
        "response_url": slack.response_url(hook),
        "actions": [
            {
                "action_id": button["action_id"],
                "block_id": "factbot_review",
                "text": button["text"],
                "value": button["value"],
                "type": "button",
                "action_ts": "1700000500.000001",
            }
        ],
    }


def submission(view: dict[str, Any], text: str, user: str = "UREV1") -> dict[str, Any]:
    state = {"values": {"text": {"text": {"type": "plain_text_input", "value": text}}}}
    return {
        "type": "view_submission",
        "team": {"id": "T1", "domain": "t1"},
        "user": {"id": user, "team_id": "T1"},
        "api_app_id": "A0FACTBOT",
        "token": "x",
        "trigger_id": "trig-submit",
        "view": {**view, "state": state},
    }


def said(slack: FakeSlack, hook: str) -> list[str]:
    return [str(c.body["text"]) for c in slack.calls("response_url") if c.path.endswith(hook)]


def thread_replies(slack: FakeSlack) -> list[dict[str, Any]]:
    return [m for m in slack.posted("T1", "C1") if m.get("thread_ts") == PARENT]


async def test_approve_clicked_twice_and_by_two_reviewers_posts_once_in_the_thread(
    slack: FakeSlack, corpus_app: Callable[..., App]
) -> None:
    app = make_app(slack, corpus_app)
    proposal = propose(app)
    async with serving(app) as base:
        url = base + "/slack/events"
        await until(lambda: slack.posted("T1", REVIEW))
        card = card_of(slack)
        assert block_problem(card["blocks"]) is None
        shown = json.dumps(card["blocks"])
        assert "Approve" in shown and "Reject" in shown and "Edit" in shown
        assert SOURCE in shown and "a trending post" in shown
        assert card["metadata"]["event_type"] == "factbot_review"
        first = click(slack, card, "approve", "UREV1", "a1")
        statuses = [(await slack.deliver_interaction(url, first))[0]]
        statuses.append((await slack.deliver_interaction(url, first, retry_num=1))[0])
        second = click(slack, card, "approve", "UREV2", "a2")
        statuses.append((await slack.deliver_interaction(url, second))[0])
        assert statuses == [200, 200, 200]
        await until(
            lambda: thread_replies(slack) and len(said(slack, "a1") + said(slack, "a2")) >= 2
        )
        await idle(app, requests=0)
    [reply] = thread_replies(slack)
    assert reply["blocks"][0]["text"]["text"] == "Fact-check: false"
    assert SOURCE in json.dumps(reply["blocks"])
    late = said(slack, "a1") + said(slack, "a2")
    assert len(late) == 2 and all("already approved by slack:u_" in t for t in late)
    card = card_of(slack)
    assert not [b for b in card["blocks"] if b["type"] == "actions"]  # the buttons are gone
    context = json.dumps(card["blocks"][-1])
    assert "Approved by slack:u_" in context and "UREV1" not in context
    stored = ReviewQueue(app.store, app.settings).get(proposal.id)
    assert stored.status == "posted" and stored.decision is not None
    assert "Posted." in context


async def test_edit_opens_a_modal_refuses_an_unretrieved_url_then_posts_the_edit(
    slack: FakeSlack, corpus_app: Callable[..., App]
) -> None:
    app = make_app(slack, corpus_app)
    proposal = propose(app)
    async with serving(app) as base:
        url = base + "/slack/events"
        await until(lambda: slack.posted("T1", REVIEW))
        await slack.deliver_interaction(url, click(slack, card_of(slack), "edit", "UREV2", "e1"))
        await until(lambda: slack.views)
        [view] = slack.views
        assert view["blocks"][0]["element"]["initial_value"] == proposal.text
        assert slack.calls("views.open")[0].body["trigger_id"] == "trig-e1"
        bad = "False. The real story: https://evil.example/5g"
        status, body = await slack.deliver_interaction(url, submission(view, bad))
        assert status == 200
        errors = json.loads(body)
        assert errors["response_action"] == "errors"
        assert "https://evil.example/5g" in errors["errors"]["text"]
        assert "did not retrieve" in errors["errors"]["text"]
        await idle(app, requests=0)
        assert thread_replies(slack) == []
        assert ReviewQueue(app.store, app.settings).get(proposal.id).status == "pending"
        good = f"False: 5G cannot carry viruses. Source: {SOURCE}"
        status, body = await slack.deliver_interaction(url, submission(view, good))
        assert (status, body) == (200, "")
        await until(lambda: thread_replies(slack))
        await idle(app, requests=0)
    [reply] = thread_replies(slack)
    assert good in reply["text"]
    decision = ReviewQueue(app.store, app.settings).get(proposal.id).decision
    assert decision is not None and decision.action == "edit" and decision.text == good


async def test_reject_is_recorded_and_an_unauthorised_click_is_refused_privately(
    slack: FakeSlack, corpus_app: Callable[..., App]
) -> None:
    app = make_app(slack, corpus_app)
    proposal = propose(app)
    async with serving(app) as base:
        url = base + "/slack/events"
        await until(lambda: slack.posted("T1", REVIEW))
        card = card_of(slack)
        await slack.deliver_interaction(url, click(slack, card, "approve", "UNOBODY", "n1"))
        await until(lambda: said(slack, "n1"))
        assert "not one of this factbot's reviewers" in said(slack, "n1")[0]
        hook = next(c for c in slack.calls("response_url") if c.path.endswith("n1"))
        assert hook.body["response_type"] == "ephemeral"
        queue = ReviewQueue(app.store, app.settings)
        assert queue.get(proposal.id).status == "pending"
        tampered = click(slack, card, "approve", "UREV1", "t1")
        tampered["actions"][0]["value"] = "no-such-proposal"
        await slack.deliver_interaction(url, tampered)
        await until(lambda: said(slack, "t1"))
        assert said(slack, "t1") == ["Not done: no proposal 'no-such-proposal'."]
        await slack.deliver_interaction(url, click(slack, card, "reject", "UREV2", "r1"))
        await until(lambda: queue.get(proposal.id).status == "rejected")
        await idle(app, requests=0)
        await until(lambda: "Rejected by" in json.dumps(card_of(slack)["blocks"]))
    stored = queue.get(proposal.id)
    assert stored.decision is not None and stored.decision.action == "reject"
    assert stored.decision.reviewer == queue.reviewer("slack", "UREV2")
    assert thread_replies(slack) == []


async def test_a_card_for_a_spanish_post_says_so_and_shows_the_spanish_reply_as_posted(
    slack: FakeSlack, corpus_app: Callable[..., App]
) -> None:
    app = make_app(slack, corpus_app)
    key = "monitor:slack:es"
    stored_check(
        app.store,
        f"check-{key}",
        text="Las redes 5G propagan el coronavirus.",
        language="es",
        headline="Esta publicación es falsa: el 5G no propaga el coronavirus.",
        explanation="Los virus no viajan por ondas de radio ni por redes móviles.",
    )
    destination = Destination(
        "slack", "T1", "C1", message_id=PARENT, thread_id=PARENT, public={"event_key": key}
    )
    queue = ReviewQueue(app.store, app.settings, clock=app.clock)
    queue.propose(check_id=f"check-{key}", destination=destination, reason="trending", key=key)
    async with serving(app) as base:
        await until(lambda: slack.posted("T1", REVIEW))
        card = card_of(slack)
        assert block_problem(card["blocks"]) is None
        texts = [b["text"]["text"] for b in card["blocks"] if b["type"] == "section"]
        # The labels are English, for the moderators; the language is named.
        assert "*Language:* Spanish (es); the reply is in Spanish, as shown below." in texts
        [proposed] = [t for t in texts if t.startswith("Esta publicación es falsa")]
        assert "Afirmación 1" in proposed  # the catalogue's words, as the reply says them
        approve = click(slack, card, "approve", "UREV1", "es1")
        await slack.deliver_interaction(base + "/slack/events", approve)
        await until(lambda: thread_replies(slack))
        await idle(app, requests=0)
    [reply] = thread_replies(slack)
    posted = json.dumps(reply["blocks"], ensure_ascii=False)
    assert "Esta publicación es falsa" in posted and "Afirmación 1" in posted
