"""Watched channels as monitor sources: the real slack_sdk and discord.py against the stand-ins,
paging from a kept cursor, what a candidate carries, and 429/403 ending a fetch cleanly."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bots.platforms.discord._sender import DiscordSender
from bots.platforms.discord._sources import DiscordChannelSource
from bots.platforms.slack._sender import SlackSender
from bots.platforms.slack._sources import SlackChannelSource
from bots.runtime.monitor.candidates import SourceUnavailableError
from bots.settings import DiscordSettings, SlackSettings
from tests.support import discord_payloads as p
from tests.support.clock import FakeClock
from tests.support.fake_discord import FakeDiscord
from tests.support.fake_slack import FakeSlack

CLAIM = "5G networks spread the coronavirus."


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as fake:
        fake.add_team("T1", token="xoxb-one")
        fake.members["C1"] = 40
        for n in range(1, 451):
            fake.add_message(
                "T1", "C1", ts=f"{1_700_000_000 + n}.000100", user=f"U{n % 7}", text=f"post {n}"
            )
        yield fake


def slack_source(slack: FakeSlack, channel: str = "C1") -> SlackChannelSource:
    settings = SlackSettings(bot_token="xoxb-one", signing_secret="s", api_base=slack.api_base)
    return SlackChannelSource(SlackSender(settings), channel)


async def test_a_slack_channel_is_read_in_pages_from_its_cursor_oldest_first(
    slack: FakeSlack,
) -> None:
    source = slack_source(slack)
    assert source.name == "slack:channel:C1"
    first = await source.fetch(None, 5)  # no cursor: only the newest five
    assert [c.post.text for c in first.candidates] == [f"post {n}" for n in range(446, 451)]
    assert first.cursor == "1700000450.000100"
    assert len(slack.calls("conversations.history")) == 1
    backlog = await source.fetch("0", 300)  # from the start: 450 messages in pages of 200
    texts = [c.post.text for c in backlog.candidates]
    assert texts == [f"post {n}" for n in range(1, 301)]
    assert backlog.cursor == "1700000300.000100"
    rest = await source.fetch(backlog.cursor, 300)
    assert [c.post.text for c in rest.candidates] == [f"post {n}" for n in range(301, 451)]
    assert (await source.fetch(rest.cursor, 300)).candidates == []
    calls = slack.calls("conversations.history")
    assert {c.body["oldest"] for c in calls[1:]} >= {"0", "1700000300.000100"}
    assert all(int(c.body["limit"]) <= 200 for c in calls)
    candidate = rest.candidates[0]
    assert candidate.post.platform_id == "T1:C1:1700000301.000100"
    assert candidate.thread_key == "T1:C1:1700000301.000100"
    assert candidate.followers == 40 and candidate.destination.thread_id == "1700000301.000100"
    assert candidate.destination.private == {}
    assert slack.calls("conversations.info")[0].body["include_num_members"] in ("1", "true", True)


async def test_slack_reactions_replies_mentions_and_bots(slack: FakeSlack) -> None:
    slack.add_message(
        "T1",
        "C1",
        ts="1700001000.000100",
        user="U9",
        text=f"<@UBOT> {CLAIM}",
        reactions=[{"name": "fire", "count": 4}, {"name": "eyes", "count": 2}],
        reply_count=3,
    )
    slack.add_message("T1", "C1", ts="1700001001.000100", bot_id="B2", text=CLAIM)
    slack.add_message(
        "T1", "C1", ts="1700001002.000100", subtype="channel_join", user="U1", text="joined"
    )
    batch = await slack_source(slack).fetch("1700000999", 10)
    [candidate] = batch.candidates
    assert candidate.engagement == 9 and candidate.mentions_bot
    assert candidate.author.user_id == "U9" and not candidate.author.is_bot
    assert candidate.post.text.endswith(CLAIM)
    assert batch.cursor == "1700001002.000100"  # skipped messages still move the cursor


async def test_slack_rate_limits_and_refusals_make_the_source_unavailable(
    slack: FakeSlack,
) -> None:
    slack.script("conversations.history", status=429, retry_after=0, times=3)
    with pytest.raises(SourceUnavailableError, match="ratelimited"):
        await slack_source(slack).fetch(None, 5)
    with pytest.raises(SourceUnavailableError, match="channel_not_found"):
        await slack_source(slack, "C404").fetch(None, 5)


GUILD = "10"
CHANNEL = p.snowflake(20)
ALICE = p.user(p.snowflake(30), "alice")


@pytest.fixture
async def discord() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as fake:
        fake.add_guild(GUILD, [p.text_channel(CHANNEL)])
        fake.member_counts[GUILD] = 1200
        for n in range(1, 131):
            message = p.message(p.snowflake(1000 + n), CHANNEL, ALICE, f"post {n}", guild_id=GUILD)
            fake.add_message(message)
        yield fake


def discord_source(discord: FakeDiscord) -> DiscordChannelSource:
    settings = DiscordSettings(token=discord.token, api_base=discord.api_base)
    return DiscordChannelSource(DiscordSender(settings, clock=FakeClock()), CHANNEL)


async def test_a_discord_channel_is_read_after_its_cursor_in_pages(discord: FakeDiscord) -> None:
    source = discord_source(discord)
    try:
        first = await source.fetch(None, 3)
        assert [c.post.text for c in first.candidates] == ["post 128", "post 129", "post 130"]
        backlog = await source.fetch(p.snowflake(1000), 120)  # two pages: 100 + 20
        assert [c.post.text for c in backlog.candidates] == [f"post {n}" for n in range(1, 121)]
        assert backlog.cursor == p.snowflake(1120)
        pages = discord.sent("GET", f"/channels/{CHANNEL}/messages")
        assert [r.query.get("limit") for r in pages] == ["3", "100", "20"]
        bot = p.user("901", "otherbot", bot=True)
        me = discord.bot
        liked = p.message(
            p.snowflake(2000), CHANNEL, ALICE, "5G spreads it", guild_id=GUILD, mentions=[me]
        )
        liked["reactions"] = [{"count": 7, "emoji": {"id": None, "name": "x"}, "me": False}]
        discord.add_message(liked)
        discord.add_message(p.message(p.snowflake(2001), CHANNEL, bot, "beep", guild_id=GUILD))
        discord.add_message(p.message(p.snowflake(2002), CHANNEL, me, "factbot", guild_id=GUILD))
        newer = await source.fetch(p.snowflake(1130), 50)
        [candidate] = newer.candidates
        assert candidate.engagement == 7 and candidate.mentions_bot
        assert candidate.followers == 1200 and candidate.author.user_id == ALICE["id"]
        assert candidate.destination.message_id == p.snowflake(2000)
        assert candidate.destination.public["threads"] == "1"
        assert newer.cursor == p.snowflake(2002)
    finally:
        await source.sender.close()


async def test_discord_403_and_429_make_the_source_unavailable(discord: FakeDiscord) -> None:
    source = discord_source(discord)
    try:
        discord.script("GET", f"/channels/{CHANNEL}/messages", 403)
        with pytest.raises(SourceUnavailableError, match="403"):
            await source.fetch(None, 5)
        discord.script("GET", f"/channels/{CHANNEL}/messages", 429, retry_after=3600)
        with pytest.raises(SourceUnavailableError) as raised:
            await source.fetch(None, 5)
        assert raised.value.retry_after == pytest.approx(3600)
        assert len((await source.fetch(None, 5)).candidates) == 5  # it recovers next time
    finally:
        await source.sender.close()
