"""ProviderClient: Retry-After, budgets, bounded concurrency, network errors and redaction."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest
from pydantic import SecretStr

from pipeline.errors import BudgetExceededError, SearchError
from pipeline.search.http import ProviderClient, request_budgets
from pipeline.util.retry_after import parse_retry_after
from tests.pipeline.search.conftest import Sleeps
from tests.pipeline.search.fakeapi import FakeAPI, Reply

KEY = "sk-live-very-secret-0042"


def _client(
    http: httpx.AsyncClient, sleeps: Sleeps, *, max_retry_wait: float = 30.0
) -> ProviderClient:
    return ProviderClient(
        "demo", http, secrets=(SecretStr(KEY),), sleep=sleeps, max_retry_wait=max_retry_wait
    )


def test_parse_retry_after() -> None:
    now = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after(format_datetime(now + timedelta(seconds=90), usegmt=True), now=now)
    assert parse_retry_after("Wed, 01 May 2024 12:00:30 GMT", now=now) == 30.0
    assert parse_retry_after("Wed, 01 May 2024 11:00:00 GMT", now=now) == 0.0  # in the past
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


async def test_http_date_retry_after_is_honoured(
    api: FakeAPI, http: httpx.AsyncClient, sleeps: Sleeps
) -> None:
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=3), usegmt=True)
    api.queue(Reply(503, "", headers={"Retry-After": later}), Reply(200, "{}"))
    assert await _client(http, sleeps).get_json(f"{api.base}/x") == {}
    assert len(sleeps) == 1 and 1.0 < sleeps[0] <= 3.0


async def test_wait_is_capped_not_slept(
    api: FakeAPI, http: httpx.AsyncClient, sleeps: Sleeps
) -> None:
    api.queue(Reply(503, "", headers={"Retry-After": "31"}))
    with pytest.raises(SearchError, match="retry after 31 s") as caught:
        await _client(http, sleeps, max_retry_wait=30).get_json(f"{api.base}/x")
    assert caught.value.retry_after == 31.0 and sleeps == []


async def test_client_errors_are_not_retried(
    api: FakeAPI, http: httpx.AsyncClient, sleeps: Sleeps
) -> None:
    api.queue(Reply(400, '{"error": "bad parameter q"}'))
    with pytest.raises(SearchError, match="bad parameter q") as caught:
        await _client(http, sleeps).get_json(f"{api.base}/x")
    assert caught.value.status == 400 and len(api.seen) == 1 and sleeps == []


async def test_budget_counts_every_request_and_retry(
    api: FakeAPI, http: httpx.AsyncClient, sleeps: Sleeps
) -> None:
    client = _client(http, sleeps)
    api.queue(Reply(500, ""), Reply(200, "{}"))
    with client.budget(3) as budgets:
        await client.get_json(f"{api.base}/a")  # a 500 and its retry: two requests
        assert budgets["demo"].remaining == 1
        await client.get_json(f"{api.base}/b")
        with pytest.raises(BudgetExceededError, match="budget of 3 requests"):
            await client.get_json(f"{api.base}/c")
    assert len(api.seen) == 3
    await client.get_json(f"{api.base}/d")  # outside any check: unbounded
    with client.budget(1):  # a new check starts afresh
        await client.get_json(f"{api.base}/e")


async def test_budget_runs_out_before_a_retry_is_slept(
    api: FakeAPI, http: httpx.AsyncClient, sleeps: Sleeps
) -> None:
    api.queue(Reply(429, "", headers={"Retry-After": "2"}))
    client = _client(http, sleeps)
    with client.budget(1), pytest.raises(BudgetExceededError):
        await client.get_json(f"{api.base}/a")
    assert sleeps == [] and len(api.seen) == 1


async def test_budget_is_shared_by_tasks_of_one_check(
    api: FakeAPI, http: httpx.AsyncClient, sleeps: Sleeps
) -> None:
    api.queue(Reply(200, "{}"))
    client = _client(http, sleeps)
    with request_budgets({"demo": 4}) as budgets:
        outcomes = await asyncio.gather(
            *(client.get_json(f"{api.base}/{n}") for n in range(6)), return_exceptions=True
        )
    assert sum(isinstance(o, BudgetExceededError) for o in outcomes) == 2
    assert budgets["demo"].remaining == 0 and len(api.seen) == 4


async def test_concurrency_is_bounded(sleeps: Sleeps) -> None:
    active = peak = 0

    async def handler(request: httpx.Request) -> httpx.Response:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await asyncio.sleep(0.01)
        active -= 1
        return httpx.Response(200, json={"ok": True})

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        client = ProviderClient("demo", http, max_concurrency=2, sleep=sleeps)
        await asyncio.gather(*(client.get_json("https://api.test/x") for _ in range(8)))
    assert peak == 2


async def test_network_errors_are_retried_then_reported(sleeps: Sleeps) -> None:
    calls = 0

    def handler(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        raise httpx.ConnectTimeout("timed out", request=request)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        client = ProviderClient("demo", http, max_retries=1, backoff=0.25, sleep=sleeps)
        with pytest.raises(SearchError, match="network error: ConnectTimeout") as caught:
            await client.get_json("https://api.test/x")
    assert calls == 2 and sleeps == [0.25] and caught.value.status is None


async def test_keys_never_reach_logs_or_errors(
    api: FakeAPI, http: httpx.AsyncClient, sleeps: Sleeps, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    api.queue(
        Reply(429, f"slow down {KEY}", headers={"Retry-After": "0"}),
        Reply(401, f'{{"error": "key {KEY} revoked"}}'),
    )
    client = _client(http, sleeps)
    with pytest.raises(SearchError) as caught:
        await client.get_json(f"{api.base}/x", headers={"X-Api-Key": KEY})
    assert KEY not in str(caught.value) and "***" in caught.value.reason
    assert caplog.records  # retries and httpx's request lines were logged ...
    assert all(KEY not in str(record.__dict__) for record in caplog.records)  # ... without it
    assert KEY not in caplog.text


async def test_invalid_json_is_a_search_error(
    api: FakeAPI, http: httpx.AsyncClient, sleeps: Sleeps
) -> None:
    api.queue(Reply(200, b"\xff\xfe not json"))
    with pytest.raises(SearchError, match="not valid JSON"):
        await _client(http, sleeps).get_json(f"{api.base}/x")


async def test_millisecond_waits_and_a_wait_at_the_cap_are_slept(
    api: FakeAPI, http: httpx.AsyncClient, sleeps: Sleeps
) -> None:
    api.queue(
        Reply(429, "", headers={"retry-after-ms": "750"}),
        Reply(503, "", headers={"Retry-After": "30"}),
        Reply(200, "{}"),
    )
    assert await _client(http, sleeps, max_retry_wait=30).get_json(f"{api.base}/x") == {}
    assert sleeps == [0.75, 30.0] and len(api.seen) == 3


async def test_persistent_failures_give_up_after_the_retries(
    api: FakeAPI, http: httpx.AsyncClient, sleeps: Sleeps
) -> None:
    api.queue(Reply(502, "bad gateway"))
    with pytest.raises(SearchError, match=r"gave up after 3 attempts") as caught:
        await _client(http, sleeps).get_json(f"{api.base}/x")
    assert caught.value.status == 502 and sleeps == [0.5, 1.0] and len(api.seen) == 3
