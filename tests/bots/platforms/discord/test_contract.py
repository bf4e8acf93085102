"""What Discord's public contract asks beyond the happy path, against the stand-in's refusals.

Each test drives the real discord.py against the stand-in, which refuses as Discord does: a
second callback to one interaction (40060), a callback after the 3 seconds (10062), a second
thread on one message (160004). factbot must never provoke the first and third, must answer
after the second, and must say who it is (`DiscordBot ($url, $version)`) on every request.
"""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

from tests.bots.platforms.discord.conftest import (
    BOB,
    CHANNEL,
    CLAIM,
    GUILD,
    Bot,
    start_bot,
    stop_bot,
    target_message,
    until,
)
from tests.support import discord_payloads as p
from tests.support.fake_discord import FakeDiscord

MESSAGE = p.snowflake(40)
OTHER = p.snowflake(44)
# Discord's required form, "DiscordBot ($url, $versionNumber)", at the start of the header.
USER_AGENT = re.compile(r"^DiscordBot \((https?://[^\s,()]+), (\d+(\.\d+)*[^\s,()]*)\)")


def _requests(bot: Bot) -> list[Any]:
    rows = bot.app.store.db.execute("SELECT event_key FROM platform_requests").fetchall()
    return [bot.app.store.platform.find("discord", row[0]) for row in rows]


def _calls_of(discord: FakeDiscord, interaction_id: str) -> list[str]:
    """Return the callbacks and webhook calls made for one interaction, as 'METHOD path'."""
    token = f"token-{interaction_id}"
    return [
        f"{r.method} {r.path}"
        for r in discord.requests
        if f"/interactions/{interaction_id}/" in r.path or f"/{token}" in r.path
    ]


async def _deliver(discord: FakeDiscord, interaction_id: str, command: dict[str, Any]) -> None:
    payload = p.interaction(
        interaction_id, command, guild_id=GUILD, channel=discord.channels[CHANNEL], requester=BOB
    )
    await discord.dispatch("INTERACTION_CREATE", payload)


async def test_a_redelivered_interaction_gets_no_second_callback_and_no_apology(
    bot: Bot, discord: FakeDiscord, debug_log: io.StringIO
) -> None:
    first = p.snowflake(51)
    command = p.context_menu(target_message(MESSAGE))
    await bot.interact(command, interaction_id=first)
    for _ in range(2):  # the same INTERACTION_CREATE again, as replayed after a resume
        await _deliver(discord, first, command)
    # A later interaction, answered: the gateway handed factbot the replays before it.
    await bot.interact(p.context_menu(target_message(OTHER)), interaction_id=p.snowflake(52))
    await bot.drain()

    assert len(discord.sent("POST", f"/interactions/{first}/*/callback")) == 1
    edits = [r.json["content"] for r in discord.sent("PATCH", f"/webhooks/100/token-{first}/*")]
    assert edits[0].startswith("Checking this message.")
    assert not any("Sorry" in text for text in edits)
    assert len(discord.sent("POST", f"/channels/{MESSAGE}/messages")) == 1
    assert len(_requests(bot)) == 2
    logs = debug_log.getvalue()
    assert "Traceback" not in logs and "already been acknowledged" not in logs


async def test_every_request_to_discord_says_discordbot_url_and_version(
    indexed: Path, embedder: Any, discord: FakeDiscord
) -> None:
    bot = await start_bot(indexed, embedder, discord, message_content=True)
    try:
        await bot.interact(p.context_menu(target_message(MESSAGE)), interaction_id=p.snowflake(53))
        await bot.interact(p.slash("factcheck", []), interaction_id=p.snowflake(54))
        target = target_message(OTHER)
        discord.add_message(target)
        mention = p.message(
            p.snowflake(60),
            CHANNEL,
            BOB,
            f"<@{discord.bot['id']}> true?",
            guild_id=GUILD,
            mentions=[discord.bot],
            reference=target,
        )
        del mention["referenced_message"]  # factbot fetches the message replied to
        await discord.dispatch("MESSAGE_CREATE", mention)
        await until(lambda: len(_requests(bot)) == 2)
        await bot.drain()
    finally:
        await stop_bot(bot)

    routes = {
        f"{r.method} {re.sub(r'token-[0-9]+|[0-9]{6,}', '{}', r.path)}" for r in discord.requests
    }
    assert routes >= {
        "GET /users/@me",  # the listener's and the sender's log-ins
        "PUT /applications/100/commands",
        "POST /interactions/{}/{}/callback",
        "PATCH /webhooks/100/{}/messages/@original",
        "GET /channels/{}/messages/{}",
        "POST /channels/{}/messages/{}/threads",
        "POST /channels/{}/messages",
    }, routes
    unnamed = [
        (r.method, r.path, r.headers.get("user-agent"))
        for r in discord.requests
        if not USER_AGENT.match(r.headers.get("user-agent", ""))
    ]
    assert unnamed == []
    assert discord.gateway_headers
    assert all(USER_AGENT.match(h.get("user-agent", "")) for h in discord.gateway_headers)


async def test_a_second_check_of_a_message_posts_in_its_thread_without_starting_one(
    bot: Bot, discord: FakeDiscord
) -> None:
    await bot.interact(p.context_menu(target_message(MESSAGE)), interaction_id=p.snowflake(55))
    await bot.drain()
    await bot.interact(p.context_menu(target_message(MESSAGE)), interaction_id=p.snowflake(56))
    await bot.drain()
    assert len(discord.sent("POST", "/channels/*/threads")) == 1  # never refused with 160004
    replies = discord.posted_messages()
    assert replies and {r.path for r in replies} == {f"/channels/{MESSAGE}/messages"}
    pointer = discord.sent("PATCH", f"/webhooks/100/token-{p.snowflake(56)}/*")[-1]
    assert pointer.json["content"] == f"Checked. The answer is in <#{MESSAGE}>."


async def test_a_thread_people_started_on_the_message_is_used(
    bot: Bot, discord: FakeDiscord
) -> None:
    discord.channels[MESSAGE] = p.thread(MESSAGE, GUILD, CHANNEL, "talk about it")
    await bot.interact(p.context_menu(target_message(MESSAGE)), interaction_id=p.snowflake(57))
    await bot.drain()
    assert discord.sent("POST", "/channels/*/threads") == []
    [reply] = discord.posted_messages()
    assert reply.path == f"/channels/{MESSAGE}/messages"


async def test_a_callback_refused_as_too_late_still_answers_in_a_thread_on_the_message(
    bot: Bot, discord: FakeDiscord, debug_log: io.StringIO
) -> None:
    late = p.snowflake(58)
    discord.expire(late)  # the gateway was slow: Discord's 3 seconds are gone
    await _deliver(discord, late, p.context_menu(target_message(MESSAGE)))
    await until(lambda: _requests(bot))
    await bot.drain()

    assert _calls_of(discord, late) == [f"POST /interactions/{late}/token-{late}/callback"]
    [reply] = discord.posted_messages()
    assert reply.path == f"/channels/{MESSAGE}/messages"  # in the thread started on it
    assert reply.json["embeds"] and CLAIM in discord.channels[MESSAGE]["name"]
    logs = debug_log.getvalue()
    assert len(re.findall(r"interaction expired before it was acknowledged", logs)) == 1
    assert "Traceback" not in logs


async def test_factcheck_text_refused_as_too_late_is_answered_in_the_channel(
    bot: Bot, discord: FakeDiscord, debug_log: io.StringIO
) -> None:
    late = p.snowflake(59)
    discord.expire(late)
    await _deliver(
        discord, late, p.slash("factcheck", [{"name": "text", "type": 3, "value": CLAIM}])
    )
    await until(lambda: _requests(bot))
    await bot.drain()
    assert _calls_of(discord, late) == [f"POST /interactions/{late}/token-{late}/callback"]
    [reply] = discord.posted_messages()
    assert reply.path == f"/channels/{CHANNEL}/messages"
    assert "Traceback" not in debug_log.getvalue()
