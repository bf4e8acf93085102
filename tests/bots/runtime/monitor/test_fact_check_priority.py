"""A scan takes first the candidates a published fact-check answers, over real storage and the
real matcher (the shipped MiniLM): with one check left in the hourly budget, it goes to them."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bots.runtime.monitor import monitor_handlers
from bots.runtime.monitor.scan import ScanJobs
from bots.settings import MonitorSettings, Settings
from pipeline.factchecks.matching import FactCheckMatcher
from pipeline.records.domain import Label
from pipeline.records.factchecks import FactCheck
from storage import Store
from tests.bots.runtime.monitor.test_routing import candidate
from tests.support.clock import FakeClock

REVIEWED = "Drinking bleach cures COVID-19 in 2020, Trump said."
OTHER = "Pfizer said 5 million people died of measles in 2021."  # scores alike, no fact-check
REVIEW = FactCheck(
    url="https://www.politifact.com/factchecks/2020/apr/24/bleach/",
    claim_reviewed=REVIEWED,
    publisher="PolitiFact",
    review_date=datetime(2020, 4, 24, tzinfo=UTC),
    language="en",
    rating="Pants on Fire",
    label=Label.FALSE,
)


@pytest.fixture
def db(tmp_path: Path, open_store: Callable[..., Store]) -> Store:
    clock = FakeClock(datetime(2026, 3, 2, 12, 0, tzinfo=UTC))
    return open_store(tmp_path / "m.db", clock=clock)


def scan_jobs(store: Store, embedder: Any, *, matcher: bool) -> ScanJobs:
    settings = Settings(
        monitor=MonitorSettings(enabled=True, auto_reply=["slack:C1"], checks_per_hour=1)
    )
    factchecks = FactCheckMatcher(store.fact_checks, [embedder]) if matcher else None
    scan = monitor_handlers(store, settings, {}, factchecks=factchecks, clock=store.clock)[
        "monitor:scan"
    ]
    assert isinstance(scan, ScanJobs)
    return scan


def statuses(store: Store) -> dict[str, str]:
    return {row.post_id: row.status for row in store.monitor.candidates()}


async def test_a_candidate_a_fact_check_answers_takes_the_last_check_of_the_budget(
    db: Store, embedder: Any
) -> None:
    [vector] = embedder.embed_sync([REVIEW.matching_text()], role="query")
    db.fact_checks.upsert_fact_checks([(REVIEW, "h", {embedder.name: vector})])
    scan = scan_jobs(db, embedder, matcher=True)
    taken = await scan.take([candidate(1, text=OTHER), candidate(2, text=REVIEWED, author="U2")])
    assert taken == {"checking": 1, "skipped: budget": 1}
    assert statuses(db) == {"T1:C1:1": "skipped", "T1:C1:2": "checking"}


async def test_without_the_matcher_the_source_order_decides(db: Store, embedder: Any) -> None:
    scan = scan_jobs(db, embedder, matcher=False)
    await scan.take([candidate(1, text=OTHER), candidate(2, text=REVIEWED, author="U2")])
    assert statuses(db) == {"T1:C1:1": "checking", "T1:C1:2": "skipped"}


async def test_an_empty_index_keeps_the_source_order(db: Store, embedder: Any) -> None:
    scan = scan_jobs(db, embedder, matcher=True)
    await scan.take([candidate(1, text=OTHER), candidate(2, text=REVIEWED, author="U2")])
    assert statuses(db) == {"T1:C1:1": "checking", "T1:C1:2": "skipped"}
