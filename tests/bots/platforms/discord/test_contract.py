"""What Discord's public contract asks beyond the happy path, against the stand-in's refusals.

Each test drives the real discord.py against the stand-in, which refuses as Discord does: a
second callback to one interaction (40060), a callback after the 3 seconds (10062), a second
thread on one message (160004). factbot must never provoke the first and third, must answer
after the second, and must say who it is (`DiscordBot ($url, $version)`) on every request.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.bots.platforms.discord.conftest import (
    BOB,
    CHANNEL,
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
