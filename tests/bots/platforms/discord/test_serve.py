"""`factbot serve` with Discord configured: its listener, its workers and its sender, together."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx

from bots.app.root import App
from bots.settings import DiscordSettings, JobSettings, Settings
from tests.bots.api.test_api import serving
from tests.bots.platforms.discord.conftest import BOB, CHANNEL, GUILD, target_message, until
from tests.support import discord_payloads as p
from tests.support.fake_discord import FakeDiscord


async def test_serve_answers_a_context_menu_request(
    indexed: Path, embedder: Any, discord: FakeDiscord
) -> None:
    group = DiscordSettings(
        token=discord.token,  # type: ignore[arg-type]
        api_base=discord.api_base,
        gateway_url=discord.gateway_url,
        guild_ready_timeout=0.05,
    )
    jobs = JobSettings(poll_seconds=0.02, heartbeat_seconds=5.0, backoff_initial=0, backoff_max=0)
    app = App(Settings(data_dir=indexed, jobs=jobs, discord=group), embedder=embedder)
    server = serving(app, workers=1)  # uvicorn in its own thread; the stand-in runs here
    base = await asyncio.to_thread(server.__enter__)
    try:
        await until(lambda: discord.identified.is_set(), 30)
        ready = await asyncio.to_thread(httpx.get, f"{base}/readyz")
        assert "discord" in ready.text
        message = target_message(p.snowflake(40))
        interaction = p.interaction(
            p.snowflake(50),
            p.context_menu(message),
            guild_id=GUILD,
            channel=discord.channels[CHANNEL],
            requester=BOB,
        )
        await discord.dispatch("INTERACTION_CREATE", interaction)
        await until(lambda: discord.posted_messages(), 60)
        [reply] = discord.posted_messages()
        assert reply.path == f"/channels/{p.snowflake(40)}/messages"
        assert reply.json["embeds"][0]["fields"]
    finally:
        await asyncio.to_thread(server.__exit__, None, None, None)
        app.close()
