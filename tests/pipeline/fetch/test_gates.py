"""Per-host and global concurrency limits, alone and around real requests."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import Counter
from collections.abc import Iterator

import pytest

from pipeline.fetch.fetcher import Fetcher, FetchPolicy
from pipeline.fetch.gates import HostGates
from tests.support.httpserver import LocalServer, Request, Response, serve


async def test_limits_hold_and_idle_hosts_are_forgotten() -> None:
    gates = HostGates(per_host=2, total=3)
    in_flight: Counter[str] = Counter()
    peaks: Counter[str] = Counter()

    async def request(host: str) -> None:
        async with gates.slot(host):
            in_flight[host] += 1
            in_flight["*"] += 1
            for key in (host, "*"):
                peaks[key] = max(peaks[key], in_flight[key])
            await asyncio.sleep(0.01)
            in_flight[host] -= 1
            in_flight["*"] -= 1

    await asyncio.gather(*(request(f"host{i % 2}.test") for i in range(20)))

    assert (peaks["host0.test"], peaks["host1.test"], peaks["*"]) == (2, 2, 3)
    assert (gates.peak, gates.peak_per_host) == (3, 2)
    assert gates.hosts == 0


async def test_a_busy_host_does_not_hold_global_slots() -> None:
    gates = HostGates(per_host=1, total=2)
    finished: list[str] = []

    async def request(host: str, seconds: float) -> None:
        async with gates.slot(host):
            await asyncio.sleep(seconds)
        finished.append(host)

    busy = [request("busy.test", 0.05) for _ in range(5)]
    await asyncio.gather(*busy, request("quiet.test", 0.0))

    assert finished.index("quiet.test") <= 1  # not stuck behind the busy host's queue


async def test_cancelled_waiters_leave_no_gate_behind() -> None:
    gates = HostGates(per_host=1, total=1)
    release = asyncio.Event()

    async def holder() -> None:
        async with gates.slot("a.test"):
            await release.wait()

    async def waiter() -> None:
        async with gates.slot("a.test"):
            pass

    held = asyncio.create_task(holder())
    waiting = asyncio.create_task(waiter())
    await asyncio.sleep(0)
    waiting.cancel()
    release.set()
    await held
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert gates.hosts == 0


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        HostGates(per_host=0, total=4)


class SlowPages:
    """Answers after a delay and records the most requests in flight, overall and per Host."""

    def __init__(self, server: LocalServer, delay: float) -> None:
        self.server = server
        self.port = server.port
        self.delay = delay
        self.lock = threading.Lock()
        self.now: Counter[str] = Counter()
        self.peak: Counter[str] = Counter()
        server.route("/robots.txt", Response(404, b"", "text/html"))
        server.route("/*", self.answer)

    def answer(self, request: Request) -> Response:
        host = request.headers["host"].split(":")[0]
        with self.lock:
            self.now[host] += 1
            self.now["*"] += 1
            for key in (host, "*"):
                self.peak[key] = max(self.peak[key], self.now[key])
        time.sleep(self.delay)
        with self.lock:
            self.now[host] -= 1
            self.now["*"] -= 1
        return Response(200, b"<html><body><p>slow page</p></body></html>", "text/html")


@pytest.fixture
def slow_server() -> Iterator[SlowPages]:
    with serve() as server:
        yield SlowPages(server, delay=0.1)


async def test_the_fetcher_keeps_to_both_limits(slow_server: SlowPages) -> None:
    hosts = [f"site{i}.test" for i in range(3)]

    async def resolve(host: str, port: int) -> list[str]:
        return ["127.0.0.1"]

    policy = FetchPolicy(allowed_networks=("127.0.0.1/32",), per_host=2, max_concurrency=4)
    async with Fetcher(policy, resolver=resolve) as fetcher:
        urls = [f"http://{hosts[i % 3]}:{slow_server.port}/p{i}" for i in range(18)]
        pages = await asyncio.gather(*(fetcher.fetch(u) for u in urls))
        assert fetcher.gates.hosts == 0

    assert len(pages) == 18
    assert max(slow_server.peak[h] for h in hosts) == 2
    assert slow_server.peak["*"] == 4


async def test_waiting_for_a_slot_does_not_count_against_the_timeout(
    slow_server: SlowPages,
) -> None:
    # Five requests one at a time take 0.5 s in all; each takes 0.1 s of the 0.3 s allowed.
    policy = FetchPolicy(allowed_networks=("127.0.0.1/32",), per_host=1, total_timeout=0.3)
    base = f"http://127.0.0.1:{slow_server.port}"
    async with Fetcher(policy) as fetcher:
        pages = await asyncio.gather(*(fetcher.fetch(f"{base}/p{i}") for i in range(5)))
    assert len(pages) == 5
    assert slow_server.peak["127.0.0.1"] == 1
