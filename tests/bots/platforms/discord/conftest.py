"""A factbot with its Discord adapter on, against the stand-in Discord, over a small index.

Everything on factbot's side is real: the App (a tiny ingested corpus, no language model), the
`PlatformService`, the adapter's discord.py client on the stand-in's gateway, and a worker pool
running check and reply jobs with the adapter's sender, in each deployment (`deployment`:
SQLite, PostgreSQL, or PostgreSQL with the saq queue engine and its relay). `Bot.drain()` runs
the pool until no job is left; tests then assert on the requests discord.py sent to the
stand-in.

Every test here runs with factbot's logs at DEBUG (`debug_log`, autouse) and fails when asyncio
logged a task's exception nobody retrieved: an error path that ends in a traceback nobody sees.
"""

from __future__ import annotations

import asyncio
import gc
import io
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bots.app.root import App
from bots.platforms.discord import DiscordAdapter
from bots.settings import DiscordSettings, JobSettings, Settings
from tests.support import discord_payloads as p
from tests.support.fake_discord import FakeDiscord
from tests.support.jobs import drain
from tests.support.logscan import debug_logs

GUILD = "10"
CHANNEL = p.snowflake(20)
CLAIM = "5G networks spread the coronavirus."
ALICE = p.user(p.snowflake(30), "alice")
BOB = p.user(p.snowflake(31), "bob")
UNRETRIEVED = "exception was never retrieved"  # asyncio's words for a task's lost exception


@pytest.fixture(autouse=True)
def debug_log() -> Iterator[io.StringIO]:
    """Yield the DEBUG logs of the test; fail it if a task's exception was never retrieved.

    What lived before the test is frozen out of the collection (the worker's models and
    modules: a full collection over them took ~0.5 s a test); what the test made is collected.
    """
    gc.freeze()
    try:
        with debug_logs() as logs:
            yield logs
            gc.collect()  # asyncio reports an unretrieved exception when its task is collected
    finally:
        gc.unfreeze()
    assert UNRETRIEVED not in logs.getvalue(), logs.getvalue()[-3000:]


@dataclass
class Bot:
    """The running listener, its App and the stand-in."""

    app: App
    adapter: DiscordAdapter
    discord: FakeDiscord
    stop: asyncio.Event
    listener: asyncio.Task[None]

    async def drain(self) -> None:
        """Run a worker pool (check and reply jobs) until the queue is empty."""
        await drain(self.app)

    async def interact(
        self, command: dict[str, Any], *, interaction_id: str, **options: Any
    ) -> None:
        """Deliver an interaction and wait until factbot has answered it (deferred and edited)."""
        channel = options.pop("channel", self.discord.channels[CHANNEL])
        payload = p.interaction(
            interaction_id, command, guild_id=GUILD, channel=channel, requester=BOB, **options
        )
        before = len(self.discord.requests)
        await self.discord.dispatch("INTERACTION_CREATE", payload)
        await until(lambda: _answered(self.discord, before, f"token-{interaction_id}"))


def _answered(discord: FakeDiscord, since: int, token: str) -> bool:
    return any(
        token in r.path and r.method in ("PATCH", "DELETE") for r in discord.requests[since:]
    )


async def until(predicate: Any, seconds: float = 10.0) -> None:
    """Wait until predicate() is true."""
    async with asyncio.timeout(seconds):
        while not predicate():  # noqa: ASYNC110 - polls what the stand-in recorded
            await asyncio.sleep(0.01)


def target_message(message_id: str, text: str = CLAIM, **options: Any) -> dict[str, Any]:
    """Return a message by alice in the channel."""
    return p.message(message_id, CHANNEL, ALICE, text, guild_id=GUILD, **options)


@pytest.fixture
def indexed(tmp_path: Path, corpus_in: Callable[[Path], Path]) -> Path:
    """Return a data folder whose database holds the small test corpus."""
    return corpus_in(tmp_path / "data")


@pytest.fixture
async def discord() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as fake:
        fake.add_guild(GUILD, [p.text_channel(CHANNEL)])
        yield fake


async def start_bot(
    folder: Path,
    embedder: Any,
    discord: FakeDiscord,
    groups: dict[str, Any] | None = None,
    **options: Any,
) -> Bot:
    """Start factbot's Discord listener on the stand-in (options: DiscordSettings fields)."""
    values: dict[str, Any] = {
        "token": discord.token,
        "api_base": discord.api_base,
        "gateway_url": discord.gateway_url,
        "guild_ready_timeout": 0.05,
    }
    group = DiscordSettings(**(values | options))
    jobs = JobSettings(poll_seconds=0.02, heartbeat_seconds=5.0, backoff_initial=0, backoff_max=0)
    settings = Settings(data_dir=folder, jobs=jobs, discord=group, **(groups or {}))
    app = App(settings, embedder=embedder)
    adapter = app.adapters["discord"]
    assert isinstance(adapter, DiscordAdapter)
    stop = asyncio.Event()
    listener = asyncio.create_task(adapter.listen(stop))
    await until(
        lambda: listener.done() or (adapter.client is not None and adapter.client.is_ready())
    )
    if listener.done():
        listener.result()
    return Bot(app, adapter, discord, stop, listener)


async def stop_bot(bot: Bot) -> None:
    """Stop the listener and close the App."""
    bot.stop.set()
    await asyncio.wait_for(bot.listener, 10)
    bot.app.close()


@pytest.fixture
async def bot(
    indexed: Path, embedder: Any, discord: FakeDiscord, deployment: dict[str, Any]
) -> AsyncIterator[Bot]:
    """factbot on the stand-in, in each deployment (SQLite; PostgreSQL; PostgreSQL + saq)."""
    started = await start_bot(indexed, embedder, discord, deployment)
    yield started
    await stop_bot(started)
