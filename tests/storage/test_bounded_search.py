"""A time-bounded full-text search gives the answer of the joined SQL query, whether it is
filtered from FTS5's best matches in memory or falls back to the join."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from pipeline.records.domain import Document, document_id_for
from storage import Store

T0 = datetime(2020, 1, 1, tzinfo=UTC)


def _fill(store: Store, n: int = 120) -> None:
    rng = np.random.default_rng(3)
    for i in range(n):
        url = f"https://example.org/{i}"
        published = None if i % 7 == 0 else T0 + timedelta(days=i)
        # "alpha" repeated a different number of times, in texts of different lengths: distinct
        # bm25 scores, so the order has no ties to break.
        text = " ".join(["alpha"] * (1 + i % 5) + ["filler"] * (3 + i))
        doc = Document(
            id=document_id_for(url),
            url=url,
            domain="example.org",
            title=f"Doc {i}",
            text=text,
            published_at=published,
        )
        vec = rng.normal(size=384).astype(np.float32)
        store.documents.upsert(doc, [(text, vec / np.linalg.norm(vec))], content_hash=f"h{i}")


def _oracle(
    store: Store, limit: int, before: datetime | None, undated: bool
) -> list[tuple[int, float]]:
    """Every match, joined to its document's date in Python, filtered, ranked."""
    rows = store.documents.db.execute(
        "SELECT passages_fts.rowid, bm25(passages_fts), documents.published_at FROM passages_fts "
        "JOIN passages ON passages.id = passages_fts.rowid "
        "JOIN documents ON documents.id = passages.document_id WHERE passages_fts MATCH ?",
        ['"alpha"'],
    ).fetchall()

    def keep(published: str | None) -> bool:
        if undated:
            return published is None
        assert before is not None
        return published is not None and datetime.fromisoformat(published) < before

    kept = sorted(((int(r[0]), float(r[1])) for r in rows if keep(r[2])), key=lambda h: h[1])
    return kept[:limit]


@pytest.mark.parametrize(
    ("days", "undated", "fast"),
    [
        (200, False, True),  # the bound keeps nearly everything: filtered in memory
        (10, False, False),  # it drops most matches: the joined query answers
        (0, True, False),  # undated only (1 in 7): too few in the best 4 x limit
    ],
)
def test_bounded_search_equals_the_joined_query(
    store: Store, days: int, undated: bool, fast: bool
) -> None:
    _fill(store)
    before = None if undated else T0 + timedelta(days=days)
    limit = 10
    fast_answer = store.documents._search_text_bounded(
        '"alpha"', limit=limit, before=before, undated=undated
    )
    assert (fast_answer is not None) is fast
    got = store.documents.search_text('"alpha"', limit=limit, before=before, undated_only=undated)
    assert got == _oracle(store, limit, before, undated)
    assert len(got) == (limit if days != 10 else 8)  # days 1-9, day 7 undated


def test_all_matches_seen_is_exact_even_when_few_pass(store: Store) -> None:
    _fill(store, n=12)  # fewer matches than 4 x limit: FTS5 returned all of them
    before = T0 + timedelta(days=3)
    assert store.documents._search_text_bounded(
        '"alpha"', limit=10, before=before, undated=False
    ) == _oracle(store, 10, before, False)


def test_a_naive_bound_is_taken_as_utc(store: Store) -> None:
    _fill(store, n=12)
    aware = store.documents.search_text('"alpha"', limit=5, before=T0 + timedelta(days=6))
    naive = store.documents.search_text(
        '"alpha"', limit=5, before=(T0 + timedelta(days=6)).replace(tzinfo=None)
    )
    assert aware == naive and aware


def test_a_document_written_after_the_vectors_were_read_is_not_missed(store: Store) -> None:
    _fill(store, n=12)
    store.documents.vectors()
    late = dataclasses.replace(
        Document(
            id=document_id_for("https://example.org/late"),
            url="https://example.org/late",
            domain="example.org",
            title="Late",
            text="alpha alpha alpha alpha alpha alpha",
            published_at=T0,
        )
    )
    vec = np.ones(384, dtype=np.float32) / np.sqrt(384)
    store.documents.upsert(late, [(late.text, vec)], content_hash="late")
    got = store.documents.search_text('"alpha"', limit=3, before=T0 + timedelta(days=1))
    assert got == _oracle(store, 3, T0 + timedelta(days=1), False)
