"""A mention that arrives while PostgreSQL restarts waits in the API and is stored once.

Slack has its 200 before the adapter's intake runs and never delivers an acknowledged event
again, so an intake that failed on the restarting database would lose the mention (what the
first `make deploy-test` runs found). The real Slack adapter (slack-bolt, `factbot serve`'s API
on loopback) takes a signed mention from the stand-in Slack while the test's PostgreSQL server
is stopped; the server comes back a few seconds later and the mention is stored, checked and
answered exactly once, a redelivery of it included.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from bots.app.root import App
from bots.settings import JobSettings, Settings, SlackSettings
from tests.support.fake_slack import FakeSlack
from tests.support.platform_app import idle, serving
from tests.support.postgres import PostgresServer

CLAIM = "5G networks spread the coronavirus."
PARENT = "1700000000.000100"
SECRET = "restart-signing-secret"
WAITS = "slack request waits for the database"


def mention(event_id: str = "EvRestart") -> dict[str, Any]:
    return {
        "token": "x",
        "team_id": "T1",
        "api_app_id": "A0FACTBOT",
        "type": "event_callback",
        "event_id": event_id,
        "event_time": 1700000100,
        "event": {
            "type": "app_mention",
            "user": "U1",
            "channel": "C1",
            "ts": "1700000100.000200",
            "thread_ts": PARENT,
            "text": "<@UBOT> is this true?",
            "event_ts": "1700000100.000200",
        },
    }


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack(signing_secret=SECRET) as fake:
        fake.add_team("T1", token="xoxb-one")
        fake.add_message("T1", "C1", ts=PARENT, user="U2", text=CLAIM)
        yield fake


async def _until(predicate: Any, seconds: float) -> None:
    async with asyncio.timeout(seconds):
        while not predicate():  # noqa: ASYNC110 - polls the log another thread writes
            await asyncio.sleep(0.05)


async def test_a_mention_during_a_database_restart_is_stored_and_answered_once(
    tmp_path: Path,
    embedder: Any,
    slack: FakeSlack,
    postgres_server: PostgresServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    url = postgres_server.migrated_database()
    jobs = JobSettings(poll_seconds=0.02, heartbeat_seconds=5.0, backoff_initial=0, backoff_max=0)
    settings = Settings(
        data_dir=tmp_path / "data",
        database_url=SecretStr(url),
        jobs=jobs,
        slack=SlackSettings(bot_token="xoxb-one", signing_secret=SECRET, api_base=slack.api_base),
    )
    app = App(settings, embedder=embedder)
    try:
        async with serving(app) as base:
            events = base + "/slack/events"
            await asyncio.to_thread(postgres_server.stop)  # every connection is cut
            try:
                with caplog.at_level(logging.WARNING, logger="bots.platforms.slack._app"):
                    status, _ = await slack.deliver_event(events, mention())
                    assert status == 200  # acknowledged: Slack will not deliver it again
                    # The intake waits (one try a second) instead of failing the mention.
                    await _until(lambda: caplog.text.count(WAITS) >= 2, 30)
                    assert slack.calls("chat.postMessage") == []
            finally:
                await asyncio.to_thread(postgres_server.start)
            await idle(app, requests=1, seconds=60)
            # Slack redelivers what it thinks was lost: still one request, one reply.
            status, _ = await slack.deliver_event(events, mention(), retry_num=1)
            assert status == 200
            await idle(app, requests=1, seconds=60)
        db = app.store.db
        assert db.execute("SELECT COUNT(*) FROM platform_requests").fetchone()[0] == 1
        checks = db.execute("SELECT status, COUNT(*) FROM jobs WHERE kind = 'check' GROUP BY 1")
        assert checks.fetchall() == [("done", 1)]
        [reply] = slack.calls("chat.postMessage")
        assert reply.body["channel"] == "C1" and reply.body["thread_ts"] == PARENT
        assert "slack request failed" not in caplog.text
    finally:
        app.close()
