"""Community Notes storage: one note per post, status updates, API costs in the budget."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from storage import Store
from storage.x_notes import (
    NOTE_KIND,
    ApiCosts,
    XNote,
    XNotesRepo,
    enqueue_note,
    enqueue_notes_status,
    notes_summary,
)
from tests.support.clock import FakeClock


def _note(post_id: str, **fields: object) -> XNote:
    base: dict[str, object] = {
        "id": f"n{post_id}",
        "post_id": post_id,
        "check_id": "c1",
        "job_id": None,
        "text": "Not so. https://a.example",
        "classification": "not_misleading",
        "misleading_tags": ("factual_error",),
        "trustworthy_sources": True,
        "urls": ("https://a.example",),
        "url_validity": "high",
        "claim_opinion": "medium",
        "harassment_abuse": "high",
        "score_detail": {"chars": 30},
        "test_mode": True,
        "status": "scored",
        "api_note_id": None,
        "claim_opinion_score": None,
        "rating_status": None,
        "evaluation": {},
        "error": None,
        "created_at": None,
        "updated_at": None,
    }
    base.update(fields)
    return XNote(**base)  # type: ignore[arg-type]


def test_one_note_per_post_and_its_later_status(store: Store) -> None:
    repo = XNotesRepo(store.db)
    first = repo.add(_note("1000"))
    again = repo.add(_note("1000", id="other", text="a second note"))
    assert again.id == first.id and again.text == first.text
    repo.update(first.id, status="submitted", api_note_id="77", claim_opinion_score=0.4)
    assert repo.set_status(
        "1000", rating="helpful", evaluation={"UrlValidity": "high"}, api_note_id="77"
    )
    assert not repo.set_status(
        "1000", rating="helpful", evaluation={"UrlValidity": "high"}, api_note_id="77"
    )  # nothing changed
    stored = repo.for_post("1000")
    assert stored is not None
    assert (stored.status, stored.rating_status, stored.claim_opinion_score) == (
        "submitted",
        "helpful",
        0.4,
    )
    assert stored.evaluation == {"UrlValidity": "high"} and stored.score_detail == {"chars": 30}
    with pytest.raises(ValueError, match="rating must be one of"):
        repo.set_status("1000", rating="great", evaluation={}, api_note_id="77")
    with pytest.raises(ValueError, match="cannot update"):
        repo.update(first.id, text="changed")
    assert notes_summary(repo).helpful == 1


def test_api_costs_count_in_the_platforms_budget(
    tmp_path: Path, open_store: Callable[..., Store]
) -> None:
    clock = FakeClock(datetime(2026, 3, 10, tzinfo=UTC))
    with open_store(tmp_path / "x.db", clock=clock) as store:
        costs = ApiCosts(store.db, clock=clock)
        costs.record("x", "read", 4, 0.02, ref="mentions")
        costs.record("x", "post_url", 1, 0.20, ref="9001")
        costs.record("x", "read", 0, 0.0)  # nothing billed, nothing stored
        count, spent = store.platform.usage_since("x", "", datetime(2026, 3, 1, tzinfo=UTC))
        assert count == 0 and spent == pytest.approx(0.22)
        _, later = store.platform.usage_since("x", "", datetime(2026, 4, 1, tzinfo=UTC))
        assert later == 0.0
        assert store.platform.usage_since("slack", "", datetime(2026, 3, 1, tzinfo=UTC))[1] == 0
        assert costs.totals("x") == {"post_url": (1, 0.20), "read": (4, 0.02)}


def test_note_jobs_are_deduplicated_per_post(store: Store) -> None:
    job, created = enqueue_note(store.jobs, check_id="c", check_job=None, post_id="5", key="k")
    assert created and job.kind == NOTE_KIND and job.dedupe_key == "x:note:5"
    _, again = enqueue_note(store.jobs, check_id="c2", check_job=None, post_id="5", key="k2")
    assert not again
    with pytest.raises(ValueError, match="numeric"):
        enqueue_note(store.jobs, check_id="c", check_job=None, post_id="abc", key="k")
    _, run = enqueue_notes_status(store.jobs, key="2026-03-10T10")
    _, same = enqueue_notes_status(store.jobs, key="2026-03-10T10")
    assert run and not same
