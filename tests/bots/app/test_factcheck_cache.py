"""A check's Google Fact Check Tools answer ends up in the fact-check index, imported off the
loop; a full queue drops and counts. The API is a local stand-in (real HTTP on loopback)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from bots.app.factcheck_cache import FactCheckCache
from bots.app.root import App
from bots.settings import FactCheckSettings, LanguageIdSettings, SearchSettings, Settings
from pipeline.records.domain import Label, Post, new_id
from pipeline.records.factchecks import FactCheck
from storage import Store
from tests.pipeline.search.fakeapi import FakeAPI, Reply, fixture, serve_api

REUTERS = "https://www.reuters.com/article/uk-factcheck-nasa-darkness-idUSKBN2861U3"


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    with serve_api() as fake:
        yield fake


@pytest.fixture
async def app(data_dir: Path, embedder: Any, api: FakeAPI) -> AsyncIterator[App]:
    search = SearchSettings(
        providers=["factcheck"],
        factcheck_api_key=SecretStr("fc-key"),
        base_urls={"factcheck": api.base},
        pages_per_claim=0,  # the answer is what is under test, not the pages behind it
        fact_check_sites=[],
    )
    settings = Settings(
        data_dir=data_dir,
        search=search,
        factchecks=FactCheckSettings(multilingual=False),
        language_id=LanguageIdSettings(enabled=False),
    )
    async with App(settings, embedder=embedder) as made:
        yield made


async def test_a_google_answer_is_kept_in_the_fact_check_index(app: App, api: FakeAPI) -> None:
    api.queue(Reply(200, fixture("factcheck.json")))  # the probe and the search
    post = Post(
        id=new_id(),
        platform="api",
        platform_id=new_id(),
        text="NASA confirmed the Earth will have six days of darkness in December 2020.",
    )
    await app.run_check(post)
    assert any(seen.path == "/v1alpha1/claims:search" for seen in api.seen)
    cache = app.resources.fact_check_cache
    await cache.drain()
    found = await app.store.call(app.store.fact_checks.fact_check_by_url, REUTERS)
    assert found is not None
    _, review = found
    assert review.publisher == "Reuters" and review.label == Label.FALSE
    assert cache.imported >= 3 and cache.dropped == cache.failed == 0
    matched = await app.resources.fact_checks.match([review.claim_reviewed], limit=1)
    assert matched[0][0].fact_check.url == REUTERS  # embedded: the matcher finds it


async def test_a_full_queue_drops_and_counts(store: Store, embedder: Any) -> None:
    reviews = [
        FactCheck(url=f"https://checks.example.org/{n}", claim_reviewed=f"claim {n}", publisher="X")
        for n in range(5)
    ]
    cache = FactCheckCache(store, lambda: [embedder], capacity=3)
    cache.put(reviews[:2])
    cache.put(reviews[2:])  # one fits
    assert cache.dropped == 2
    await cache.drain()
    assert cache.imported == 3 and not cache.pending
    assert store.fact_checks.fact_check_stats().total == 3
