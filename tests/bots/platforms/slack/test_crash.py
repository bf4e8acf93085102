"""A worker killed with SIGKILL in the middle of posting a reply: after a restart, one reply.

The real `factbot worker` process posts to the stand-in Slack, which holds the chat.postMessage
call open; the test kills the worker while it waits. Either Slack had already posted the
message (`after`) or it had not; the next worker takes the reply job over once its lease
expires, asks Slack (the reply's metadata in the thread) and posts only what is missing.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from bots.app.root import App
from bots.runtime.platform.contract import Actor, CheckRequest, Destination
from bots.runtime.platform.intake import PlatformService
from bots.settings import Settings
from pipeline.evidence.ingest import Ingester
from pipeline.records.domain import Post
from tests.conftest import FIXTURES
from tests.support.children import factbot_env
from tests.support.fake_slack import FakeSlack

FACTBOT = str(Path(sys.executable).with_name("factbot"))
PARENT = "1700000000.000100"
CLAIM = "5G networks spread the coronavirus."

pytestmark = pytest.mark.slow


def _env(data: Path, slack: FakeSlack) -> dict[str, str]:
    return factbot_env(
        data,
        FACTBOT_SEARCH__ENABLED="false",  # the subprocess has no network guard
        FACTBOT_SLACK__BOT_TOKEN="xoxb-one",
        FACTBOT_SLACK__SIGNING_SECRET="s",
        FACTBOT_SLACK__API_BASE=slack.api_base,
    )


async def _until(predicate: Any, seconds: float = 120.0) -> None:
    async with asyncio.timeout(seconds):
        while not predicate():  # noqa: ASYNC110 - polls another process's effects
            await asyncio.sleep(0.05)


@pytest.mark.parametrize("posted", [True, False], ids=["slack-had-posted", "slack-had-not"])
async def test_a_worker_killed_mid_reply_leaves_exactly_one_reply(
    tmp_path: Path, embedder: Any, posted: bool
) -> None:
    data = tmp_path / "data"
    app = App(Settings(data_dir=data), embedder=embedder)
    await Ingester(app.store.documents, embedder).ingest([str(FIXTURES / "corpus.jsonl")])
    async with FakeSlack() as slack:
        slack.add_team("T1", token="xoxb-one")
        slack.add_message("T1", "C1", ts=PARENT, user="U2", text=CLAIM)
        slack.script("chat.postMessage", stall=60, after=posted)
        request = CheckRequest(
            post=Post("p1", "slack", f"T1:C1:{PARENT}", CLAIM),
            requester=Actor("slack", "U1"),
            author=Actor("slack", "U2"),
            destination=Destination("slack", "T1", "C1", message_id=PARENT, thread_id=PARENT),
            event_key="Ev1",
        )
        intake = await PlatformService(app.store, app.settings).intake(request)
        assert intake.status == "accepted"
        env = _env(data, slack)
        first = await asyncio.create_subprocess_exec(FACTBOT, "worker", env=env)
        try:
            await _until(lambda: slack.calls("chat.postMessage"))
        finally:
            first.send_signal(signal.SIGKILL)
            await first.wait()
        reply = app.store.replies.find("slack", "Ev1", "answer")
        assert reply is not None and reply.status == "pending"  # killed mid-call
        assert len(slack.posted("T1", "C1")) == int(posted)
        second = await asyncio.create_subprocess_exec(FACTBOT, "worker", "--until-idle", env=env)
        assert await asyncio.wait_for(second.wait(), 120) == 0
    replies = [m for m in slack.posted("T1", "C1") if m.get("thread_ts") == PARENT]
    assert len(replies) == 1
    settled = app.store.replies.find("slack", "Ev1", "answer")
    assert settled is not None and settled.status == "sent"
    assert len(slack.calls("chat.postMessage")) == (1 if posted else 2)
    app.close()
