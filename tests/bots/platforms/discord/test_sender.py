"""The Discord sender (REST only) against the stand-in: where answers go, once, rate limits."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest

from bots.platforms.discord._sender import DiscordSender
from bots.runtime.delivery.replies import ReplyRejectedError
from bots.runtime.platform.contract import Answer, Destination
from bots.settings import DiscordSettings
from pipeline.records.domain import Correction, CorrectionItem, Label, Reference
from tests.support import discord_payloads as p
from tests.support.clock import FakeClock
from tests.support.fake_discord import FakeDiscord

GUILD, CHANNEL, THREAD, MESSAGE = "10", p.snowflake(20), p.snowflake(21), p.snowflake(40)
START = datetime(2026, 12, 1, 10, tzinfo=UTC)
CORRECTION = Correction(
    label=Label.FALSE,
    headline="This post is false.",
    items=(CorrectionItem(1, "The moon is cheese", Label.FALSE, "It is rock.", (1,)),),
    references=(Reference(1, "d1", "https://nasa.example/moon", "Moon rocks"),),
)


@pytest.fixture
async def discord() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as fake:
        fake.add_guild(GUILD, [p.text_channel(CHANNEL)])
        fake.channels[THREAD] = p.thread(THREAD, GUILD, CHANNEL, "a thread")
        yield fake


@pytest.fixture
async def sender(discord: FakeDiscord) -> AsyncIterator[DiscordSender]:
    settings = DiscordSettings(token=discord.token, api_base=discord.api_base)  # type: ignore[arg-type]
    sending = DiscordSender(settings, clock=FakeClock(START))
    yield sending
    await sending.close()


def _destination(
    *, threads: bool = True, thread_id: str | None = None, token: bool = True
) -> Destination:
    private = {}
    if token:
        private = {
            "interaction_token": "tok",
            "token_expires_at": (START + timedelta(minutes=14)).isoformat(),
        }
    return Destination(
        "discord",
        GUILD,
        CHANNEL,
        message_id=MESSAGE,
        thread_id=thread_id,
        public={"event_key": "77", "threads": "1" if threads else "0", "application_id": "100"},
        private=private,
    )


async def _send(sender: DiscordSender, answer: Answer, destination: Destination) -> str | None:
    return await sender.send(destination, sender.render(answer, destination))


CORRECT = Answer(kind="correction", correction=CORRECTION)


async def test_a_correction_opens_a_thread_on_the_message_and_points_the_requester_to_it(
    discord: FakeDiscord, sender: DiscordSender
) -> None:
    posted = await _send(sender, CORRECT, _destination())

    [thread] = discord.sent("POST", f"/channels/{CHANNEL}/messages/{MESSAGE}/threads")
    assert thread.json["name"] == "Fact-check: False"
    [message] = discord.posted_messages()
    assert message.path == f"/channels/{MESSAGE}/messages"  # the thread has the message's id
    body = message.json
    assert body["allowed_mentions"] == {"parse": []}
    assert body["enforce_nonce"] is True and len(body["nonce"]) <= 25
    assert "message_reference" not in body
    [embed] = body["embeds"]
    assert embed["title"] == "False" and "(https://nasa.example/moon)" in embed["description"]
    assert posted == discord.messages[posted]["id"]
    [edit] = discord.sent("PATCH", "/webhooks/100/tok/messages/@original")
    assert edit.json["content"] == f"Checked. The answer is in <#{MESSAGE}>."
    assert message.headers["authorization"] == f"Bot {discord.token}"


async def test_a_refused_thread_falls_back_to_a_reply(
    discord: FakeDiscord, sender: DiscordSender
) -> None:
    discord.script("POST", "/channels/*/threads", 403)
    await _send(sender, CORRECT, _destination())
    [message] = discord.posted_messages()
    assert message.path == f"/channels/{CHANNEL}/messages"
    assert message.json["message_reference"]["message_id"] == MESSAGE


async def test_no_thread_where_the_channel_has_none(
    discord: FakeDiscord, sender: DiscordSender
) -> None:
    await _send(sender, CORRECT, _destination(threads=False))
    assert discord.sent("POST", "/channels/*/threads") == []
    [message] = discord.posted_messages()
    assert message.json["message_reference"]["message_id"] == MESSAGE
    [edit] = discord.sent("PATCH", "/webhooks/*")
    assert edit.json["content"] == "Checked. The answer is a reply to the message."


async def test_a_message_in_a_thread_is_answered_in_that_thread(
    discord: FakeDiscord, sender: DiscordSender
) -> None:
    await _send(sender, CORRECT, _destination(thread_id=THREAD))
    assert discord.sent("POST", "/channels/*/threads") == []
    [message] = discord.posted_messages()
    assert message.path == f"/channels/{THREAD}/messages"
    assert message.json["message_reference"]["channel_id"] == THREAD


async def test_a_repeated_send_posts_one_message(
    discord: FakeDiscord, sender: DiscordSender
) -> None:
    destination = _destination(threads=False)
    first = await _send(sender, CORRECT, destination)
    second = await _send(sender, CORRECT, destination)
    assert first == second
    assert len(discord.posted_messages()) == 2  # two requests, one message: the nonce matched
    assert sum(1 for m in discord.messages.values() if m["author"]["id"] == discord.bot["id"]) == 1


async def test_429_is_retried_after_retry_after(
    discord: FakeDiscord, sender: DiscordSender
) -> None:
    discord.script("POST", f"/channels/{CHANNEL}/messages", 429, retry_after=0.6)
    started = time.monotonic()
    posted = await _send(sender, CORRECT, _destination(threads=False))
    waited = time.monotonic() - started
    first, second = discord.posted_messages()
    assert first.json == second.json
    assert waited >= 0.6
    assert posted in discord.messages


async def test_an_expired_interaction_token_never_fails_the_reply(
    discord: FakeDiscord, sender: DiscordSender
) -> None:
    discord.script(
        "PATCH", "/webhooks/*", 401, body={"message": "Invalid Webhook Token", "code": 50027}
    )
    assert await _send(sender, CORRECT, _destination(threads=False)) is not None
    sender.clock.advance(15 * 60)  # type: ignore[attr-defined]
    public = {"event_key": "78", "threads": "0", "application_id": "100"}
    other = dataclasses.replace(_destination(threads=False), public=public)
    assert await _send(sender, CORRECT, other) is not None
    assert len(discord.sent("PATCH", "/webhooks/*")) == 1  # the second token was known dead


async def test_a_private_answer_edits_the_private_response(
    discord: FakeDiscord, sender: DiscordSender
) -> None:
    failure = Answer(kind="failure", message="Sorry, the check failed.", private=True)
    await _send(sender, failure, _destination())
    assert discord.posted_messages() == []
    [edit] = discord.sent("PATCH", "/webhooks/100/tok/messages/@original")
    assert edit.json["content"] == "Sorry, the check failed."
    assert edit.json["allowed_mentions"] == {"parse": []}


async def test_a_private_answer_without_a_token_replies_to_the_message(
    discord: FakeDiscord, sender: DiscordSender
) -> None:
    failure = Answer(kind="failure", message="Sorry, the check failed.", private=True)
    await _send(sender, failure, _destination(token=False))
    [message] = discord.posted_messages()
    assert message.json["content"] == "Sorry, the check failed."
    assert message.json["message_reference"]["message_id"] == MESSAGE
    assert discord.sent("POST", "/channels/*/threads") == []


async def test_a_forbidden_channel_is_a_rejection(
    discord: FakeDiscord, sender: DiscordSender
) -> None:
    discord.script("POST", "/channels/*/messages", 403)
    with pytest.raises(ReplyRejectedError):
        await _send(sender, CORRECT, _destination(threads=False))


async def test_a_correction_over_every_limit_is_posted_as_a_valid_embed(
    discord: FakeDiscord, sender: DiscordSender
) -> None:
    nasty = "@everyone <@1> **x** " * 120
    refs = tuple(
        Reference(n, f"d{n}", f"https://site{n}.example/{'p' * 150}", nasty[:300])
        for n in range(1, 41)
    )
    items = tuple(
        CorrectionItem(n, nasty, Label.MISLEADING, nasty * 2, (n, n + 20)) for n in range(1, 21)
    )
    headline = "This post is misleading. " + nasty[:500]
    huge = Correction(Label.MISLEADING, headline, items, nasty, refs)
    answer = Answer(kind="correction", correction=huge, footer="f" * 3000, notes=(nasty,) * 9)
    posted = await _send(sender, answer, _destination(threads=False))
    assert posted in discord.messages  # the stand-in refuses (400) anything over Discord's limits
    [message] = discord.posted_messages()
    [embed] = message.json["embeds"]
    assert 0 < len(embed["fields"]) < 20
    assert "more claims were checked; see the full check." in embed["description"]


async def test_a_long_rate_limit_ends_the_attempt_without_posting(
    discord: FakeDiscord, sender: DiscordSender
) -> None:
    discord.script("POST", f"/channels/{CHANNEL}/messages", 429, retry_after=3600)
    with pytest.raises(ReplyRejectedError, match="wait 3600 s"):
        await _send(sender, CORRECT, _destination(threads=False))
    assert discord.messages == {}


async def test_discord_unreachable_is_a_rejection(discord: FakeDiscord) -> None:
    settings = DiscordSettings(token=discord.token, api_base="http://127.0.0.1:9/api/v10")  # type: ignore[arg-type]
    sending = DiscordSender(settings, clock=FakeClock(START))
    with pytest.raises(ReplyRejectedError, match="log in"):
        await _send(sending, CORRECT, _destination())
    await sending.close()
