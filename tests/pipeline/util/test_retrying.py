"""The retry loop: attempts, exponential backoff and its cap, jitter, server waits, stopping."""

from __future__ import annotations

import asyncio

import pytest

from pipeline.util.retrying import Backoff, Retryable, retried


class Sleeps(list[float]):
    """An injectable sleep that records the waits instead of waiting."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


class Flaky:
    """Raises the scripted failures in turn, then returns "ok"; counts its calls."""

    def __init__(self, *failures: Exception) -> None:
        self.failures = list(failures)
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return "ok"


def busy(retry_after: float | None = None) -> Retryable:
    return Retryable(LookupError("spent"), reason="HTTP 503", status=503, retry_after=retry_after)


def no_log(failure: Retryable, delay: float) -> None:
    pass


async def test_backoff_doubles_up_to_the_cap() -> None:
    sleeps = Sleeps()
    send = Flaky(*(busy() for _ in range(5)))
    policy = Backoff(attempts=6, backoff=0.5, max_wait=3.0, sleep=sleeps)
    assert await retried(policy, send, on_retry=no_log) == "ok"
    assert sleeps == [0.5, 1.0, 2.0, 3.0, 3.0]
    assert send.calls == 6


async def test_jitter_scales_each_backoff_down_by_at_most_its_share() -> None:
    sleeps = Sleeps()
    policy = Backoff(attempts=40, backoff=1.0, max_wait=1.0, jitter=0.25, sleep=sleeps)
    await retried(policy, Flaky(*(busy() for _ in range(39))), on_retry=no_log)
    assert all(0.75 <= wait <= 1.0 for wait in sleeps)
    assert len(set(sleeps)) > 1  # random, not a fixed factor


async def test_the_servers_wait_replaces_the_backoff_up_to_the_cap() -> None:
    sleeps = Sleeps()
    send = Flaky(busy(retry_after=1.25), busy(retry_after=60), busy())
    policy = Backoff(attempts=4, backoff=0.5, max_wait=5.0, sleep=sleeps)
    assert await retried(policy, send, on_retry=no_log) == "ok"
    assert sleeps == [1.25, 5.0, 2.0]  # the third backoff, as if the others had been ours


async def test_spent_attempts_raise_the_final_error() -> None:
    sleeps = Sleeps()
    send = Flaky(*(busy() for _ in range(5)))
    with pytest.raises(LookupError, match="spent") as caught:
        await retried(Backoff(attempts=3, backoff=0.1, sleep=sleeps), send, on_retry=no_log)
    assert send.calls == 3 and len(sleeps) == 2
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


@pytest.mark.parametrize("attempts", [0, 1])
async def test_one_attempt_at_least_and_no_wait(attempts: int) -> None:
    sleeps = Sleeps()
    send = Flaky(busy())
    with pytest.raises(LookupError):
        await retried(Backoff(attempts=attempts, sleep=sleeps), send, on_retry=no_log)
    assert send.calls == 1 and sleeps == []


async def test_other_errors_are_not_retried() -> None:
    sleeps = Sleeps()
    send = Flaky(PermissionError("HTTP 401"))
    with pytest.raises(PermissionError):
        await retried(Backoff(sleep=sleeps), send, on_retry=no_log)
    assert send.calls == 1 and sleeps == []


async def test_on_retry_sees_each_failure_and_wait_and_can_stop_the_retries() -> None:
    sleeps = Sleeps()
    seen: list[tuple[str, float]] = []

    def refuse_the_second(failure: Retryable, delay: float) -> None:
        seen.append((failure.reason, delay))
        if len(seen) == 2:
            raise TimeoutError("no time left for another wait")

    send = Flaky(busy(retry_after=0.5), busy(retry_after=0.25), busy())
    with pytest.raises(TimeoutError):
        await retried(Backoff(sleep=sleeps), send, on_retry=refuse_the_second)
    assert seen == [("HTTP 503", 0.5), ("HTTP 503", 0.25)]
    assert sleeps == [0.5] and send.calls == 2


async def test_concurrent_calls_keep_their_own_attempts() -> None:
    sleeps = Sleeps()
    policy = Backoff(attempts=3, backoff=0.1, sleep=sleeps)
    sends = [Flaky(busy(), busy()), Flaky(busy()), Flaky()]
    results = await asyncio.gather(*(retried(policy, s, on_retry=no_log) for s in sends))
    assert results == ["ok"] * 3
    assert [s.calls for s in sends] == [3, 2, 1]
