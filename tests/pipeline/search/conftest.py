"""Fixtures of the search tests: fake provider APIs, an HTTP client and a recording sleep."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from tests.pipeline.search.fakeapi import FakeAPI, serve_api


class Sleeps(list[float]):
    """An injectable sleep that records the waits instead of waiting."""

    async def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    """A fake provider API on 127.0.0.1."""
    with serve_api() as fake:
        yield fake


@pytest.fixture
def api2() -> Iterator[FakeAPI]:
    """A second fake provider API."""
    with serve_api() as fake:
        yield fake


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    """A plain client (no proxies from the environment)."""
    async with httpx.AsyncClient(trust_env=False) as client:
        yield client


@pytest.fixture
def sleeps() -> Sleeps:
    """Waits asked for by retries, recorded."""
    return Sleeps()
