"""A reply is posted at most once, whatever retries, redeliveries or crashes happen."""

from __future__ import annotations

import pytest

from bots.runtime.delivery.replies import ReplyKey, ReplyRejectedError, send_once
from storage import Store


class Platform:
    """A stand-in platform API that records what it posted and can fail on demand."""

    def __init__(self) -> None:
        self.posted: list[str] = []
        self.fail_next: Exception | None = None

    async def post(self, text: str) -> str:
        if self.fail_next is not None:
            error, self.fail_next = self.fail_next, None
            raise error
        self.posted.append(text)
        return f"msg-{len(self.posted)}"


KEY = ReplyKey("slack", "C1/1700000000.1")


async def test_redelivered_events_send_one_reply(store: Store) -> None:
    platform = Platform()
    first = await send_once(store, KEY, lambda: platform.post("correction"))
    again = await send_once(store, KEY, lambda: platform.post("correction"))
    assert first is not None and first.status == "sent" and first.platform_reply_id == "msg-1"
    assert again is None and platform.posted == ["correction"]


async def test_a_rejected_reply_may_be_tried_again(store: Store) -> None:
    platform = Platform()
    platform.fail_next = ReplyRejectedError("rate limited before posting")
    with pytest.raises(ReplyRejectedError):
        await send_once(store, KEY, lambda: platform.post("correction"))
    retried = await send_once(store, KEY, lambda: platform.post("correction"))
    assert retried is not None and retried.status == "sent" and platform.posted == ["correction"]


async def test_a_crash_during_the_call_never_leads_to_a_second_reply(store: Store) -> None:
    platform = Platform()
    platform.fail_next = ConnectionResetError("connection lost after sending")
    with pytest.raises(ConnectionResetError):
        await send_once(store, KEY, lambda: platform.post("correction"))
    # The job is retried (or the worker restarted): the reply stays pending, nothing is re-sent.
    assert await send_once(store, KEY, lambda: platform.post("correction")) is None
    pending = store.replies.find(KEY.platform, KEY.target_id, KEY.kind)
    assert pending is not None and pending.status == "pending" and platform.posted == []


async def test_a_pending_reply_of_a_crashed_job_is_settled_with_the_platform(store: Store) -> None:
    platform = Platform()
    platform.fail_next = ConnectionResetError("the worker died mid-call")
    with pytest.raises(ConnectionResetError):
        await send_once(store, KEY, lambda: platform.post("c"), job_id="j1")

    async def nothing_there() -> str | None:
        return None

    # The same job, run again: the platform has no such message, so it is sent now, once.
    sent = await send_once(
        store, KEY, lambda: platform.post("c"), job_id="j1", reconcile=nothing_there
    )
    assert sent is not None and sent.status == "sent" and platform.posted == ["c"]
    again = await send_once(
        store, KEY, lambda: platform.post("c"), job_id="j1", reconcile=nothing_there
    )
    assert again is None and platform.posted == ["c"]


async def test_a_pending_reply_the_platform_has_is_marked_sent_not_repeated(store: Store) -> None:
    platform = Platform()
    platform.fail_next = ConnectionResetError("the answer was lost, the message was posted")
    with pytest.raises(ConnectionResetError):
        await send_once(store, KEY, lambda: platform.post("c"), job_id="j1")

    async def found() -> str | None:
        return "msg-on-platform"

    # Another job (a second event) never settles this one's reply; the same job does.
    other = await send_once(store, KEY, lambda: platform.post("c"), job_id="j2", reconcile=found)
    assert other is None
    settled = await send_once(store, KEY, lambda: platform.post("c"), job_id="j1", reconcile=found)
    assert settled is not None and settled.status == "sent"
    assert settled.platform_reply_id == "msg-on-platform" and platform.posted == []
