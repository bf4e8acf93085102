"""Retries with exponential backoff for every HTTP peer (search providers, model endpoints).

The loop is tenacity's (`tenacity.AsyncRetrying`): `retried(policy, send, on_retry=...)` awaits
`send()` until it returns, a non-retryable error escapes it, or the attempts are spent. `send`
decides what is worth another request by raising `Retryable`, which carries the error to raise
once the attempts are spent and the wait the server asked for (`pipeline.util.retry_after`).

Waits: the server's wait when it named one, capped at `max_wait` (a caller that must not wait
that long refuses to retry before raising `Retryable`); otherwise `backoff`, doubled each time,
capped at `max_wait`, scaled by a random factor in [1 - jitter, 1] so that clients turned away
together do not come back together. The sleep is injectable, so tests read the waits instead of
sleeping them.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt
from tenacity.wait import wait_base, wait_exponential

T = TypeVar("T")
Sleep = Callable[[float], Awaitable[None]]


class Retryable(Exception):  # noqa: N818 (a signal between send and the loop, not an error)
    """A failure worth another request; `final` is what to raise once the attempts are spent."""

    def __init__(
        self,
        final: Exception,
        *,
        reason: str,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(reason)
        self.final = final
        self.reason = reason
        self.status = status
        self.retry_after = retry_after


@dataclass(frozen=True)
class Backoff:
    """How often and how long to wait when a peer is busy, failing or unreachable."""

    attempts: int = 4  # requests per call, the first included
    backoff: float = 0.5  # the first wait; doubled each time
    max_wait: float = 20.0  # no single wait is longer, whatever Retry-After asks
    jitter: float = 0.0  # each backoff is scaled by a random factor in [1 - jitter, 1]
    sleep: Sleep = asyncio.sleep


OnRetry = Callable[[Retryable, float], None]


async def retried(policy: Backoff, send: Callable[[], Awaitable[T]], *, on_retry: OnRetry) -> T:
    """Return what send() returns, retrying each Retryable it raises under policy.

    `on_retry(failure, delay)` runs before each wait; it may raise to stop retrying.
    """
    attempts = AsyncRetrying(
        stop=stop_after_attempt(max(1, policy.attempts)),
        retry=retry_if_exception_type(Retryable),
        wait=_Wait(policy),
        sleep=policy.sleep,
        before_sleep=_before_sleep(on_retry),
        reraise=True,
    )
    try:
        async for attempt in attempts:
            with attempt:
                return await send()
    except Retryable as spent:
        raise spent.final from None
    raise AssertionError("unreachable")  # tenacity returns the result or raises


class _Wait(wait_base):
    """The server's wait when it named one, else jittered exponential backoff; both capped."""

    def __init__(self, policy: Backoff) -> None:
        self._max = policy.max_wait
        self._jitter = min(max(policy.jitter, 0.0), 1.0)
        self._exponential = wait_exponential(multiplier=policy.backoff, max=policy.max_wait)

    def __call__(self, retry_state: RetryCallState) -> float:
        failure = _failure(retry_state)
        if failure is not None and failure.retry_after is not None:
            return max(0.0, min(failure.retry_after, self._max))
        delay = float(self._exponential(retry_state))
        if self._jitter:
            delay *= random.uniform(1.0 - self._jitter, 1.0)
        return delay


def _before_sleep(on_retry: OnRetry) -> Callable[[RetryCallState], None]:
    def before_sleep(retry_state: RetryCallState) -> None:
        failure = _failure(retry_state)
        if failure is not None:
            on_retry(failure, float(retry_state.upcoming_sleep))

    return before_sleep


def _failure(retry_state: RetryCallState) -> Retryable | None:
    outcome = retry_state.outcome
    failure = outcome.exception() if outcome is not None and outcome.failed else None
    return failure if isinstance(failure, Retryable) else None
