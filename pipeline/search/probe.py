"""A reachability probe of the search providers, so an offline machine fails fast.

Before a check searches, every provider's host is asked once (`HEAD {base_url}/`, no redirects,
a short connect and total timeout). Any HTTP answer means the host is reachable (a 404 or a
405 included: the search request has its own error handling); a network error or a timeout
means it is not, and the check skips that provider instead of paying a timeout and retries
for each of its searches. Answers are cached for `ttl` seconds per URL, reachable or not, so a
machine without a network costs one short probe per provider per `ttl`, not one per check.

Failure policy: `check` never raises; an unreachable provider is a `ProviderStatus` with
`reachable=False` and the reason.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import httpx

from pipeline.records.search_status import ProviderStatus

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProbeTarget:
    """A provider and the URL that tells whether its host answers."""

    provider: str
    url: str


class SearchProbe:
    """Probes provider hosts with short timeouts and remembers the answers for a short time."""

    def __init__(
        self,
        *,
        ttl: float = 60.0,
        timeout: float = 3.0,
        connect_timeout: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl = ttl
        self.timeout = httpx.Timeout(timeout, connect=min(connect_timeout, timeout))
        self.clock = clock
        self._known: dict[str, tuple[float, ProviderStatus]] = {}

    async def check(
        self, targets: Sequence[ProbeTarget], http: httpx.AsyncClient
    ) -> tuple[ProviderStatus, ...]:
        """Return each target's reachability, probing at once those not known within ttl."""
        return tuple(await asyncio.gather(*(self._one(t, http) for t in targets)))

    def forget(self) -> None:
        """Drop every remembered answer (the next check probes again)."""
        self._known.clear()

    async def _one(self, target: ProbeTarget, http: httpx.AsyncClient) -> ProviderStatus:
        now = self.clock()
        known = self._known.get(target.url)
        if known is not None and now - known[0] < self.ttl:
            # Remembered: this check spends no time on it.
            return ProviderStatus(target.provider, known[1].reachable, known[1].reason, 0.0)
        started = time.perf_counter()
        try:
            response = await http.head(target.url, timeout=self.timeout, follow_redirects=False)
            status = ProviderStatus(target.provider, True, "", _took(started))
            log.debug(
                "search provider probed",
                extra={"provider": target.provider, "status": response.status_code},
            )
        except httpx.TimeoutException as exc:
            reason = f"no answer within {self.timeout.read:g} s ({type(exc).__name__})"
            status = ProviderStatus(target.provider, False, reason, _took(started))
        except httpx.HTTPError as exc:
            reason = f"network error: {type(exc).__name__}: {exc}".rstrip(": ")
            status = ProviderStatus(target.provider, False, reason, _took(started))
        if not status.reachable:
            log.warning(
                "search provider unreachable",
                extra={"provider": target.provider, "reason": status.reason},
            )
        self._known[target.url] = (self.clock(), status)
        return status


def _took(started: float) -> float:
    return round(time.perf_counter() - started, 4)
