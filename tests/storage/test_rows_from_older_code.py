"""JSON that factbot wrote before the records codec (commit 63135ff) still loads, to the field.

`data/rows_63135ff.json` holds the JSON columns of `rich_check()` as the hand-written codecs of
63135ff stored them (ids made deterministic), one search-cache result and one reverse image
match; the codec must read them back as the same records and write the same objects.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

import tests.bots.dashboard.factory as factory
from pipeline.image.reverse.interface import MatchKind, ReverseMatch
from pipeline.records.codec import from_plain, to_plain
from pipeline.records.domain import (
    Check,
    ClaimGraph,
    ClaimReview,
    GraphConflict,
    Injection,
    Label,
    ModelUsage,
)
from pipeline.records.search_status import LiveSearch, ProviderStatus, SearchStatus
from pipeline.search.base import SearchResult
from storage import Store
from tests.bots.dashboard.factory import image_report, make_check, with_details

OLD = json.loads((Path(__file__).parent / "data" / "rows_63135ff.json").read_text("utf-8"))


def rich_check() -> Check:
    """Return a check with details, usage, injections, graphs and a search status."""
    check = with_details(
        make_check(text="Un café — 5G <b>", created_at=datetime(2026, 1, 1, tzinfo=UTC))
    )
    return dataclasses.replace(
        check,
        images=image_report(),
        usage=(ModelUsage("judge", 2, 900, 120, 0.0021, 1.4, failures=1, timeouts=1),),
        injections=(
            Injection(
                "page", "role-marker", "zero-width", "ignore previous", "https://x.org", "d1"
            ),
        ),
        graphs=(
            ClaimGraph(
                "c1",
                0.5,
                ("a -b-> c",),
                (GraphConflict("date", "2024", "2012", "e1", "a different year"),),
                ("n",),
                ("e1",),
            ),
        ),
        search=SearchStatus(
            LiveSearch.PARTIAL,
            (
                ProviderStatus("brave", True, "", 0.2),
                ProviderStatus("bing", False, "HTTP 503", 1.5),
            ),
            12,
            "",
            (ProviderStatus("tineye", True),),
        ),
        before=datetime(2024, 1, 2, tzinfo=UTC),
    )


# Fields added to a record since 63135ff, with a default that older rows load as: written
# rows carry them at their default, which is all that may differ.
ADDED = {
    "quotes": {"strength": None},
    "correction_items": {"language": "en"},
    "search_status": {"fact_checks": None, "leads": []},
}


def _without_added(column: str, value: object) -> object:
    added = ADDED.get(column, {})
    if isinstance(value, dict):  # a key added since, at its default, here and in its items
        return {
            k: _without_added(column, v) if k == "items" else v
            for k, v in value.items()
            if k not in added or v != added[k]
        }
    if not isinstance(value, list):
        return value
    return [
        {k: v for k, v in item.items() if k not in added or v != added[k]}
        if isinstance(item, dict)
        else item
        for item in value
    ]


def test_a_check_stored_by_older_code_loads_unchanged(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = itertools.count(1)
    monkeypatch.setattr(factory, "new_id", lambda: f"id{next(ids)}")
    check = rich_check()
    store.checks.save(check)
    written = dict(next(store.db.query("SELECT * FROM checks WHERE id = ?", [check.id])))
    old = OLD["checks"]
    for column, text in old.items():  # the same objects, key for key (spacing and order aside)
        assert _without_added(column, json.loads(written[column])) == json.loads(text), column
    assignments = ", ".join(f"{column} = ?" for column in old)
    store.db.execute(f"UPDATE checks SET {assignments} WHERE id = ?", [*old.values(), check.id])
    assert store.checks.get(check.id) == check


def test_search_cache_entries_stored_by_older_code_load_unchanged() -> None:
    result = SearchResult(
        "https://a.org/x",
        "T",
        "s",
        "brave",
        1,
        datetime(2024, 3, 1, 12, tzinfo=UTC),
        "A",
        ClaimReview(
            "c", "False", Label.FALSE, "R", "https://r.org", datetime(2024, 3, 2, tzinfo=UTC)
        ),
        "a.org",
    )
    assert from_plain(SearchResult, OLD["search_result"]) == result
    assert to_plain(result) == OLD["search_result"]
    match = ReverseMatch(
        "https://p.org",
        "P",
        None,
        "tineye",
        2,
        MatchKind.EXACT,
        None,
        datetime(2020, 1, 1, tzinfo=UTC),
        "P site",
        0.9,
    )
    assert from_plain(ReverseMatch, OLD["reverse_match"]) == match
    assert to_plain(match) == OLD["reverse_match"]
