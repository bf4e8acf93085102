"""The sender posts through the real slack_sdk to the stand-in: threads, retries, refusals."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import pytest

from bots.platforms.slack._sender import SlackSender
from bots.runtime.delivery.replies import ReplyRejectedError
from bots.runtime.platform.contract import Answer, Destination
from bots.settings import SlackSettings
from tests.support.fake_slack import FakeSlack

THREAD = "1700000000.000100"


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as fake:
        fake.add_team("T1", token="xoxb-one")
        fake.add_message("T1", "C1", ts=THREAD, user="U2", text="the moon is cheese")
        yield fake


def _sender(slack: FakeSlack, **kw: object) -> SlackSender:
    settings = SlackSettings(bot_token="xoxb-one", signing_secret="s", api_base=slack.api_base)
    return SlackSender(settings, **kw)  # type: ignore[arg-type]


def _dest(**private: str) -> Destination:
    return Destination(
        platform="slack",
        workspace_id="T1",
        channel_id="C1",
        message_id=THREAD,
        thread_id=THREAD,
        public={"event_key": "Ev1"},
        private=private,
    )


async def test_a_public_answer_is_a_thread_reply_without_unfurls(slack: FakeSlack) -> None:
    sender = _sender(slack)
    rendered = sender.render(Answer(kind="failure", message="Sorry, the check failed."), _dest())
    ts = await sender.send(_dest(), rendered)
    [call] = slack.calls("chat.postMessage")
    assert call.token == "xoxb-one"
    assert call.body["thread_ts"] == THREAD and call.body["channel"] == "C1"
    assert call.body["unfurl_links"] is False and call.body["unfurl_media"] is False
    assert call.body["metadata"] == {"event_type": "factbot_reply", "event_payload": {"key": "Ev1"}}
    assert call.body["text"] == "Sorry, the check failed."
    assert ts == slack.posted("T1", "C1")[0]["ts"]


async def test_429_is_retried_after_retry_after(slack: FakeSlack) -> None:
    slack.script("chat.postMessage", status=429, retry_after=1)
    sender = _sender(slack)
    start = time.monotonic()
    await sender.send(_dest(), sender.render(Answer(kind="notice", message="hi"), _dest()))
    first, second = slack.calls("chat.postMessage")
    assert second.at - first.at >= 1.0
    assert time.monotonic() - start >= 1.0
    assert len(slack.posted("T1", "C1")) == 1


@pytest.mark.parametrize(
    "error",
    ["not_in_channel", "channel_not_found", "is_archived", "msg_too_long", "invalid_blocks"],
)
async def test_slack_errors_are_surely_not_posted(slack: FakeSlack, error: str) -> None:
    slack.script("chat.postMessage", error=error)
    sender = _sender(slack)
    with pytest.raises(ReplyRejectedError, match=error):
        await sender.send(_dest(), sender.render(Answer(kind="notice", message="hi"), _dest()))


async def test_a_connection_lost_after_sending_is_not_a_rejection(slack: FakeSlack) -> None:
    slack.script("chat.postMessage", hang_up=True)
    sender = _sender(slack)
    with pytest.raises(Exception) as raised:
        await sender.send(_dest(), sender.render(Answer(kind="notice", message="hi"), _dest()))
    assert not isinstance(raised.value, ReplyRejectedError)
    assert len(slack.calls("chat.postMessage")) == 1  # and it was not retried


async def test_a_connection_that_never_opened_is_a_rejection() -> None:
    async with FakeSlack() as fake:
        settings = SlackSettings(bot_token="xoxb-one", signing_secret="s", api_base=fake.api_base)
    # The server is gone: the connection is refused before anything was sent.
    sender = SlackSender(settings)
    with pytest.raises(ReplyRejectedError, match="could not connect"):
        await sender.send(_dest(), sender.render(Answer(kind="notice", message="hi"), _dest()))


async def test_a_private_answer_uses_the_response_url_else_an_ephemeral(slack: FakeSlack) -> None:
    sender = _sender(slack)
    answer = Answer(kind="refusal", message="Not now.", private=True)
    url = slack.response_url("r1")
    await sender.send(_dest(user_id="U1", response_url=url), sender.render(answer, _dest()))
    [hook] = slack.calls("response_url")
    assert hook.body["response_type"] == "ephemeral" and hook.body["text"] == "Not now."
    await sender.send(_dest(user_id="U1"), sender.render(answer, _dest()))
    [eph] = slack.calls("chat.postEphemeral")
    assert eph.body["user"] == "U1" and eph.body["thread_ts"] == THREAD
    assert slack.calls("chat.postMessage") == []


async def test_the_token_comes_from_the_installation_of_the_workspace(slack: FakeSlack) -> None:
    slack.add_team("T2", token="xoxb-two")
    slack.add_message("T2", "C1", ts=THREAD, text="x")

    async def installed(team: str) -> str | None:
        return {"T2": "xoxb-two"}.get(team)

    settings = SlackSettings(
        client_id="1.2", client_secret="c", signing_secret="s", api_base=slack.api_base
    )
    sender = SlackSender(settings, installed=installed)
    dest = Destination(platform="slack", workspace_id="T2", channel_id="C1", thread_id=THREAD)
    await sender.send(dest, sender.render(Answer(kind="notice", message="hi"), dest))
    assert slack.calls("chat.postMessage")[0].token == "xoxb-two"
    unknown = Destination(platform="slack", workspace_id="T9", channel_id="C1")
    with pytest.raises(ReplyRejectedError, match="not installed"):
        await sender.send(unknown, sender.render(Answer(kind="notice", message="hi"), unknown))


async def test_find_sent_finds_a_reply_posted_before_the_connection_dropped(
    slack: FakeSlack,
) -> None:
    sender = _sender(slack)
    dest = Destination(
        platform="slack",
        workspace_id="T1",
        channel_id="C1",
        message_id=THREAD,
        thread_id=THREAD,
        public={"event_key": "Ev1", "reply_key": "factbot:slack:Ev1:answer"},
    )
    assert await sender.find_sent(dest) is None
    slack.script("chat.postMessage", hang_up=True, after=True)  # Slack posted, then hung up
    with pytest.raises(Exception) as raised:
        await sender.send(dest, sender.render(Answer(kind="notice", message="hi"), dest))
    assert not isinstance(raised.value, ReplyRejectedError)
    [posted] = slack.posted("T1", "C1")
    assert posted["metadata"]["event_payload"] == {"key": "factbot:slack:Ev1:answer"}
    assert await sender.find_sent(dest) == posted["ts"]
    other = Destination(
        platform="slack",
        workspace_id="T1",
        channel_id="C1",
        thread_id=THREAD,
        public={"reply_key": "factbot:slack:Ev2:answer"},
    )
    assert await sender.find_sent(other) is None
    # Outside a thread (a /factcheck text reply) the channel's latest messages are read.
    top = Destination(
        platform="slack",
        workspace_id="T1",
        channel_id="C1",
        public={"reply_key": "factbot:slack:tr9:answer"},
    )
    ts = await sender.send(top, sender.render(Answer(kind="notice", message="hi"), top))
    assert await sender.find_sent(top) == ts
