"""A search gives the same checks in the same order whether it is counted or capped."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pipeline.records.domain import Label
from storage import Store
from storage.browse import CheckFilter
from tests.bots.dashboard.factory import make_check


def _fill(store: Store) -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    # Stored out of time order, so storage order (rowid) is not the answer.
    for n in (5, 1, 7, 3, 9, 0, 8, 2, 6, 4):
        words = "moon landing" if n % 3 else "river flood"
        store.checks.save(
            make_check(
                text=f"Post {n} about the {words}.",
                claim=f"claim {n} {words}",
                label=Label.FALSE if n % 2 else Label.ACCURATE,
                platform="slack" if n < 5 else "api",
                created_at=start + timedelta(hours=n),
            )
        )


def _texts(store: Store, where: CheckFilter, **kw: int) -> list[str]:
    return [r.text for r in store.browse.checks(where, **kw).rows]


def test_a_capped_search_pages_newest_first_like_a_counted_one(store: Store) -> None:
    _fill(store)
    moon = CheckFilter(query="moon")
    exact = store.browse.checks(moon, size=3)
    assert (exact.total, exact.capped, exact.pages) == (6, False, 2)
    broad = store.browse.checks(moon, size=3, cap=4)
    assert (broad.total, broad.capped, broad.pages) == (4, True, 2)
    assert [r.text for r in broad.rows] == [r.text for r in exact.rows]
    assert _texts(store, moon, size=3, page=2, cap=4) == _texts(store, moon, size=3, page=2)
    assert _texts(store, moon, size=3) == [
        "Post 8 about the moon landing.",
        "Post 7 about the moon landing.",
        "Post 5 about the moon landing.",
    ]


def test_filters_with_a_broad_search_are_counted_when_few_remain(store: Store) -> None:
    _fill(store)
    for where in (
        CheckFilter(query="moon", verdict="false"),
        CheckFilter(query="moon", platform="slack"),
        CheckFilter(query="moon land", platform="api", verdict="accurate"),
        CheckFilter(query="moon", since=datetime(2026, 1, 1, 4, tzinfo=UTC)),
    ):
        exact = store.browse.checks(where)
        broad = store.browse.checks(where, cap=2)
        assert exact.rows == broad.rows, where
        assert broad.capped is (exact.total > 2)
        assert broad.total == min(exact.total, 2)


def test_a_search_without_matches_or_words_is_an_empty_page_or_the_whole_list(
    store: Store,
) -> None:
    _fill(store)
    nothing = store.browse.checks(CheckFilter(query="zebra"))
    assert (nothing.total, nothing.rows, nothing.capped) == (0, (), False)
    punctuation = store.browse.checks(CheckFilter(query="!!", platform="slack"), cap=1)
    assert punctuation.total == 5 and not punctuation.capped
