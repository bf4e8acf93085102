"""The review channel on Discord, end to end: the real discord.py against the stand-in (gateway
interactions, REST posts and edits), the real ReviewQueue, worker pools running `review:post`
and reply jobs. Assertions are on what discord.py sent."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from bots.runtime.platform.contract import Destination
from bots.runtime.review.proposals import Proposal, ReviewQueue
from bots.runtime.service import build_pool, stop_when_idle
from bots.settings import ReviewSettings
from tests.bots.platforms.discord.conftest import (
    BOB,
    CHANNEL,
    GUILD,
    Bot,
    start_bot,
    stop_bot,
    until,
)
from tests.support import discord_payloads as p
from tests.support.fake_discord import FakeDiscord, Recorded
from tests.support.review_checks import SOURCE, stored_check

REVIEW = p.snowflake(25)
TARGET = p.snowflake(41)
CAROL = p.user(p.snowflake(33), "carol")  # a reviewer by role
MALLORY = p.user(p.snowflake(34), "mallory")  # not a reviewer
ROLE = p.snowflake(60)


@pytest.fixture
async def review_bot(indexed: Path, embedder: Any, discord: FakeDiscord) -> Any:
    discord.channels[REVIEW] = {**p.text_channel(REVIEW, "review"), "guild_id": GUILD}
    guild = discord.guilds[GUILD]
    guild["channels"].append(p.text_channel(REVIEW, "review"))
    guild["roles"].append({**guild["roles"][0], "id": ROLE, "name": "fact-checkers"})
    review = ReviewSettings(
        platform="discord", channel_id=REVIEW, reviewers=[BOB["id"]], reviewer_roles=[ROLE]
    )
    started = await start_bot(indexed, embedder, discord, groups={"review": review})
    yield started
    await stop_bot(started)


async def drain(bot: Bot) -> None:
    """Run check, reply and review:post jobs until none is left."""
    senders = bot.app.senders()
    pool = build_pool(bot.app, concurrency=1, senders=senders, handlers=bot.app.job_handlers())
    stop = asyncio.Event()
    await asyncio.gather(pool.run(stop), stop_when_idle(bot.app.store, stop, poll=0.05))
    for sender in senders.values():
        await sender.close()  # type: ignore[attr-defined]


def propose(bot: Bot, key: str = "monitor:discord:1") -> Proposal:
    stored_check(bot.app.store, f"check-{key}")
    destination = Destination(
        "discord", GUILD, CHANNEL, message_id=TARGET, public={"event_key": key, "threads": "0"}
    )
    queue = ReviewQueue(bot.app.store, bot.app.settings)
    return queue.propose(
        check_id=f"check-{key}", destination=destination, reason="a trending post", key=key
    )


def card_message(discord: FakeDiscord) -> dict[str, Any]:
    [card] = [m for m in discord.messages.values() if m["channel_id"] == REVIEW]
    return json.loads(json.dumps(card))


async def interact(bot: Bot, payload: dict[str, Any]) -> Recorded:
    """Deliver an interaction; return factbot's callback (its answer within 3 seconds)."""
    pattern = f"/interactions/{payload['id']}/*/callback"
    before = len(bot.discord.sent("POST", pattern))
    await bot.discord.dispatch("INTERACTION_CREATE", payload)
    await until(lambda: len(bot.discord.sent("POST", pattern)) > before)
    return bot.discord.sent("POST", pattern)[-1]


def click(card: dict[str, Any], action: str, iid: int, user: dict[str, Any], **kw: Any) -> Any:
    proposal_id = card["components"][0]["components"][0]["custom_id"].rsplit(":", 1)[1]
    return p.component_interaction(
        p.snowflake(iid),
        card,
        f"factbot:review:{action}:{proposal_id}",
        guild_id=GUILD,
        channel={**p.text_channel(REVIEW, "review")},
        requester=user,
        **kw,
    )


def replies(discord: FakeDiscord) -> list[Recorded]:
    return [r for r in discord.posted_messages() if r.path == f"/channels/{CHANNEL}/messages"]


async def test_approve_clicked_twice_and_by_two_reviewers_posts_once(
    review_bot: Bot, discord: FakeDiscord
) -> None:
    proposal = propose(review_bot)
    await drain(review_bot)
    card = card_message(discord)
    [row] = card["components"]
    assert [b["label"] for b in row["components"]] == ["Approve", "Edit", "Reject"]
    assert SOURCE in json.dumps(card["embeds"]) and "a trending post" in json.dumps(card["embeds"])
    first = click(card, "approve", 70, BOB)
    answer = await interact(review_bot, first)
    assert answer.json["type"] == 7  # the card itself is updated
    assert answer.json["data"]["components"] == []
    assert "Approved by discord:u" in json.dumps(answer.json["data"]["embeds"])  # "_" escaped
    await discord.dispatch("INTERACTION_CREATE", first)  # the same click, redelivered
    other = await interact(review_bot, click(card, "approve", 71, CAROL, roles=[ROLE]))
    assert other.json["type"] == 4 and other.json["data"]["flags"] == 64
    assert "already approved by discord:u_" in other.json["data"]["content"]
    # The redelivery got no second callback (Discord would refuse it: 40060).
    assert len(discord.sent("POST", f"/interactions/{first['id']}/*/callback")) == 1
    await drain(review_bot)
    [reply] = replies(discord)
    assert reply.json["message_reference"]["message_id"] == TARGET
    assert SOURCE in json.dumps(reply.json["embeds"])
    assert ReviewQueue(review_bot.app.store, review_bot.app.settings).get(proposal.id).status == (
        "posted"
    )
    edited = discord.sent("PATCH", f"/channels/{REVIEW}/messages/*")
    assert edited and "Posted." in json.dumps(edited[-1].json["embeds"])
    assert edited[-1].json["components"] == []


async def test_edit_opens_a_modal_refuses_an_unretrieved_url_and_posts_the_edit(
    review_bot: Bot, discord: FakeDiscord
) -> None:
    proposal = propose(review_bot)
    await drain(review_bot)
    card = card_message(discord)
    modal = await interact(review_bot, click(card, "edit", 72, CAROL, roles=[ROLE]))
    assert modal.json["type"] == 9
    [row] = modal.json["data"]["components"]
    field = row.get("component") or row["components"][0]
    assert field["value"] == proposal.text and field["custom_id"] == "text"
    custom_id = modal.json["data"]["custom_id"]

    def submit(iid: int, text: str) -> Any:
        return p.modal_submit(
            p.snowflake(iid),
            custom_id,
            {"text": text},
            guild_id=GUILD,
            channel=p.text_channel(REVIEW, "review"),
            requester=CAROL,
            message=card,
            roles=[ROLE],
        )

    refused = await interact(review_bot, submit(73, "Wrong. See https://evil.example/5g"))
    assert refused.json["type"] == 4 and refused.json["data"]["flags"] == 64
    assert "https://evil.example/5g" in refused.json["data"]["content"]
    assert "did not retrieve" in refused.json["data"]["content"]
    await drain(review_bot)
    assert replies(discord) == []
    good = f"Wrong: 5G cannot carry viruses. Source: {SOURCE}"
    accepted = await interact(review_bot, submit(74, good))
    assert accepted.json["type"] == 7
    assert "Approved with edits by" in json.dumps(accepted.json["data"]["embeds"])
    await drain(review_bot)
    [reply] = replies(discord)
    assert reply.json["content"] == good


async def test_reject_is_recorded_and_an_unauthorised_click_is_refused(
    review_bot: Bot, discord: FakeDiscord
) -> None:
    proposal = propose(review_bot)
    await drain(review_bot)
    card = card_message(discord)
    refused = await interact(review_bot, click(card, "approve", 75, MALLORY))
    assert refused.json["type"] == 4 and refused.json["data"]["flags"] == 64
    assert "not one of this factbot's reviewers" in refused.json["data"]["content"]
    queue = ReviewQueue(review_bot.app.store, review_bot.app.settings)
    assert queue.get(proposal.id).status == "pending"
    rejected = await interact(review_bot, click(card, "reject", 76, BOB))
    assert rejected.json["type"] == 7
    assert "Rejected by" in json.dumps(rejected.json["data"]["embeds"])
    await drain(review_bot)
    assert replies(discord) == []
    decision = queue.get(proposal.id).decision
    assert decision is not None and decision.action == "reject"
    assert decision.reviewer == queue.reviewer("discord", BOB["id"])
