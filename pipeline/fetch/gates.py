"""Bounded concurrency for the fetcher: a global limit and a limit per host.

A request takes a slot of its host first and a global slot second, so requests queued behind a
busy host never sit on global slots that requests to other hosts could use. A host's semaphore
lives only while some request holds or waits for it, so the table is never larger than the
work in flight.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass


@dataclass
class _HostGate:
    semaphore: asyncio.Semaphore
    users: int = 0  # requests holding or waiting for the semaphore
    active: int = 0  # requests holding it


class HostGates:
    """At most `total` requests at once, and at most `per_host` to any one host."""

    def __init__(self, *, per_host: int, total: int) -> None:
        if per_host < 1 or total < 1:
            raise ValueError(f"limits must be at least 1 (per_host={per_host}, total={total})")
        self.per_host = per_host
        self.total = total
        self._global = asyncio.Semaphore(total)
        self._hosts: dict[str, _HostGate] = {}
        self._active = 0
        self.peak = 0  # the most requests ever in flight at once
        self.peak_per_host = 0  # the most requests ever in flight to one host

    @property
    def hosts(self) -> int:
        """Return how many hosts have requests in flight or waiting."""
        return len(self._hosts)

    @asynccontextmanager
    async def slot(self, host: str) -> AsyncIterator[None]:
        """Hold one of host's slots and one global slot for the duration of the block."""
        key = host.lower()
        gate = self._hosts.get(key)
        if gate is None:
            gate = self._hosts[key] = _HostGate(asyncio.Semaphore(self.per_host))
        gate.users += 1
        try:
            async with gate.semaphore, self._global:
                gate.active += 1
                self._active += 1
                self.peak = max(self.peak, self._active)
                self.peak_per_host = max(self.peak_per_host, gate.active)
                try:
                    yield
                finally:
                    gate.active -= 1
                    self._active -= 1
        finally:
            gate.users -= 1
            if gate.users == 0:
                del self._hosts[key]  # idle: the next request to this host starts afresh
