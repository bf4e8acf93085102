"""Every provider against the same scripted failures: empty, 429, 5xx, garbage and a bad key."""

from __future__ import annotations

import json

import httpx
import pytest

from pipeline.errors import SearchError
from pipeline.search.base import SearchProvider, SearchQuery
from pipeline.search.http import ProviderClient
from tests.pipeline.search.conftest import Sleeps
from tests.pipeline.search.fakeapi import FakeAPI, Reply, fixture
from tests.pipeline.search.providers_table import SPECS, Spec

QUERY = SearchQuery("nasa six days of darkness", limit=5)

pytestmark = pytest.mark.parametrize("spec", SPECS, ids=[spec.name for spec in SPECS])


def _provider(spec: Spec, api: FakeAPI, http: httpx.AsyncClient, sleeps: Sleeps) -> SearchProvider:
    client = ProviderClient(
        spec.name, http, max_retries=2, backoff=0.5, max_retry_wait=5.0, sleep=sleeps
    )
    return spec.build(client, api.base)


def _normal(spec: Spec) -> Reply:
    return Reply(200, fixture(spec.fixture), spec.content_type)


async def test_empty_answer_gives_no_results(
    spec: Spec, api: FakeAPI, http: httpx.AsyncClient, sleeps: Sleeps
) -> None:
    api.queue(Reply(200, spec.empty, spec.content_type))
    assert await _provider(spec, api, http, sleeps).search(QUERY) == []
    assert len(api.seen) == 1


async def test_429_waits_as_told_then_succeeds(
    spec: Spec, api: FakeAPI, http: httpx.AsyncClient, sleeps: Sleeps
) -> None:
    api.queue(Reply(429, '{"error": "rate limited"}', headers={"Retry-After": "1"}), _normal(spec))
    results = await _provider(spec, api, http, sleeps).search(QUERY)
    assert results and [r.rank for r in results] == list(range(1, len(results) + 1))
    assert sleeps == [1.0]
    assert len(api.seen) == 2


async def test_429_asking_for_too_long_a_wait_fails_at_once(
    spec: Spec, api: FakeAPI, http: httpx.AsyncClient, sleeps: Sleeps
) -> None:
    api.queue(Reply(429, "slow down", headers={"Retry-After": "120"}), _normal(spec))
    with pytest.raises(SearchError) as caught:
        await _provider(spec, api, http, sleeps).search(QUERY)
    assert (caught.value.status, caught.value.retry_after) == (429, 120.0)
    assert sleeps == [] and len(api.seen) == 1


async def test_500_is_retried_with_backoff(
    spec: Spec, api: FakeAPI, http: httpx.AsyncClient, sleeps: Sleeps
) -> None:
    api.queue(Reply(500, "oops"), Reply(503, "busy"), _normal(spec))
    assert await _provider(spec, api, http, sleeps).search(QUERY)
    assert sleeps == [0.5, 1.0]


async def test_persistent_500_raises_search_error(
    spec: Spec, api: FakeAPI, http: httpx.AsyncClient, sleeps: Sleeps
) -> None:
    api.queue(Reply(500, "internal error"))
    with pytest.raises(SearchError) as caught:
        await _provider(spec, api, http, sleeps).search(QUERY)
    assert caught.value.provider == spec.name and caught.value.status == 500
    assert len(api.seen) == 3


async def test_malformed_answer_raises_search_error(
    spec: Spec, api: FakeAPI, http: httpx.AsyncClient, sleeps: Sleeps
) -> None:
    api.queue(Reply(200, spec.malformed, spec.content_type))
    with pytest.raises(SearchError) as caught:
        await _provider(spec, api, http, sleeps).search(QUERY)
    assert caught.value.provider == spec.name and caught.value.status in (None, 200)


async def test_refused_key_raises_without_revealing_it(
    spec: Spec, api: FakeAPI, http: httpx.AsyncClient, sleeps: Sleeps
) -> None:
    # A server that echoes the key it refused must not get it into our message.
    echoed = json.dumps({"error": {"code": 401, "message": f"API key {spec.key} is invalid"}})
    api.queue(Reply(401, echoed))
    with pytest.raises(SearchError) as caught:
        await _provider(spec, api, http, sleeps).search(QUERY)
    assert caught.value.status == 401 and len(api.seen) == 1
    if spec.key is not None:
        assert spec.key not in str(caught.value) and spec.key not in repr(caught.value.args)
        assert "***" in str(caught.value)
