"""Command sync only when the definitions change; the client's routing leaks into no other."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import discord as discordpy
from discord import app_commands

from bots.platforms.discord._bot import FactbotClient, commands_hash_key
from bots.runtime.platform.contract import PlatformContext
from bots.settings import DiscordSettings, Settings
from pipeline.util.clock import SYSTEM
from storage import Store
from tests.bots.platforms.discord.conftest import start_bot, stop_bot
from tests.support.fake_discord import FakeDiscord, zstandard


async def test_two_starts_sync_once(indexed: Path, embedder: Any, discord: FakeDiscord) -> None:
    for _ in range(2):
        bot = await start_bot(indexed, embedder, discord)
        await stop_bot(bot)
    assert discord.command_syncs == 1
    [sync] = discord.sent("PUT", "/applications/100/commands")
    names = sorted((c["name"], c["type"]) for c in sync.json)
    assert names == [("Fact-check this message", 3), ("factbot", 1), ("factcheck", 1)]
    assert len(discord.connections) == 2


async def test_a_changed_definition_syncs_again(tmp_path: Path, discord: FakeDiscord) -> None:
    group = DiscordSettings(token=discord.token, api_base=discord.api_base)  # type: ignore[arg-type]
    settings = Settings(data_dir=tmp_path, discord=group)
    with Store.open(tmp_path / "s.db") as store:
        context = PlatformContext(settings, store, None, SYSTEM)

        async def start(extra: app_commands.Command[Any, Any, Any] | None = None) -> None:
            client = FactbotClient(context, group)
            if extra is not None:
                client.tree.add_command(extra)
            async with client:
                await client.login(discord.token)

        await start()
        await start()
        assert discord.command_syncs == 1
        first = store.state.get(commands_hash_key(100))

        async def about(interaction: discordpy.Interaction) -> None:
            """Say what factbot is."""

        await start(
            app_commands.Command(name="about", description="What factbot is", callback=about)
        )
        assert discord.command_syncs == 2
        assert store.state.get(commands_hash_key(100)) not in (None, first)
    # /gateway/bot gave the gateway URL (none was configured); the library's globals are intact.
    assert discord.sent("GET", "/gateway/bot")
    assert discordpy.http.Route.BASE == "https://discord.com/api/v10"
    assert str(discordpy.gateway.DiscordWebSocket.DEFAULT_GATEWAY) == "wss://gateway.discord.gg/"


async def test_the_gateway_comes_from_discord_when_unset(
    indexed: Path, embedder: Any, discord: FakeDiscord
) -> None:
    bot = await start_bot(indexed, embedder, discord, gateway_url=None)
    await stop_bot(bot)
    assert discord.sent("GET", "/gateway/bot")
    # discord.py asks for zstd-stream when zstandard is importable (atproto installs it).
    expected = "zlib-stream" if zstandard is None else "zstd-stream"
    assert discord.connections[0]["compress"] == expected
    assert discord.connections[0]["v"] == "10"
