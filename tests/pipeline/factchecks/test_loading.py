"""Loading the fact-check index: a real SQLite store, feeds read for real, a counting embedder."""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pipeline.embedding.embedder import Role, Vectors
from pipeline.errors import FeedError
from pipeline.factchecks.loading import (
    ImportCounts,
    embed_missing,
    fact_check_hash,
    import_fact_checks,
    legacy_fact_check_hash,
)
from pipeline.factchecks.reviewfeeds import read_feed, read_feed_file
from pipeline.records.factchecks import FactCheck
from storage import Store


class CountingEmbedder:
    """An embedder (the seam) that counts what it is asked and returns hashed unit vectors."""

    def __init__(self, name: str = "fake", dim: int = 8, *, keep: bool = True) -> None:
        self.name = name
        self.dim = dim
        self.keep = keep  # keep the texts asked (off where a test measures memory)
        self.texts: list[str] = []
        self.roles: set[Role] = set()
        self.calls = 0

    def embed_sync(self, texts: Sequence[str], *, role: Role = "passage") -> Vectors:
        self.calls += 1
        self.texts.extend(texts if self.keep else ())
        self.roles.add(role)
        rows = []
        for text in texts:
            seed = int.from_bytes(hashlib.sha256(f"{self.name}{text}".encode()).digest()[:4])
            v = np.random.default_rng(seed).normal(size=self.dim)
            rows.append(v / np.linalg.norm(v))
        return np.asarray(rows, dtype=np.float32).reshape(len(texts), self.dim)

    async def embed(self, texts: Sequence[str], *, role: Role = "passage") -> Vectors:
        return self.embed_sync(texts, role=role)


def review(n: int, **extra: Any) -> dict[str, Any]:
    return {
        "@type": "ClaimReview",
        "url": f"https://checker.example/{n}",
        "claimReviewed": f"Claim number {n}",
        "author": {"name": "Checker"},
        "inLanguage": "en",
        "reviewRating": {"alternateName": "False"},
        **extra,
    }


def feed(reviews: list[Any]) -> io.BytesIO:
    return io.BytesIO(json.dumps({"dataFeedElement": reviews}).encode())


async def load(
    store: Store, reviews: list[Any], *embedders: CountingEmbedder, **kw: Any
) -> ImportCounts:
    return await import_fact_checks(
        read_feed(feed(reviews)), index=store.fact_checks, embedders=embedders, **kw
    )


async def test_import_then_reimport_embeds_nothing(store: Store) -> None:
    minilm, e5 = CountingEmbedder("minilm"), CountingEmbedder("e5", dim=4)
    reviews = [review(n) for n in range(5)] + [{"@type": "ClaimReview", "url": "https://x.example"}]
    seen: list[int] = []

    first = await load(
        store, reviews, minilm, e5, batch_size=2, progress=lambda c: seen.append(c.read)
    )

    assert (first.added, first.updated, first.unchanged) == (5, 0, 0)
    assert first.skipped == {"no claimReviewed": 1}
    assert first.summary() == "5 added, 0 updated, 0 unchanged, 1 skipped (no claimReviewed: 1)"
    assert seen == [2, 4, 6]  # after each full batch, then at the end
    assert len(minilm.texts) == len(e5.texts) == 5 and minilm.roles == {"query"}
    assert store.fact_checks.fact_check_matrix("minilm").matrix.shape == (5, 8)
    assert store.fact_checks.fact_check_matrix("e5").matrix.shape == (5, 4)

    again = await load(store, reviews, minilm, e5, batch_size=2)

    assert (again.added, again.updated, again.unchanged, again.embedded) == (0, 0, 5, 0)
    assert len(minilm.texts) == len(e5.texts) == 5  # not called again


async def test_a_changed_review_is_updated_and_reembedded(store: Store) -> None:
    embedder = CountingEmbedder()
    await load(store, [review(1), review(2)], embedder)

    counts = await load(
        store, [review(1), review(2, reviewRating={"alternateName": "True"})], embedder
    )

    assert (counts.added, counts.updated, counts.unchanged) == (0, 1, 1)
    assert embedder.texts == ["Claim number 1", "Claim number 2", "Claim number 2"]
    stored = store.fact_checks.fact_check_by_url("https://checker.example/2")
    assert stored is not None and stored[1].rating == "True"


async def test_a_new_embedder_is_filled_in_by_the_pass_not_the_import(store: Store) -> None:
    await load(store, [review(1)], CountingEmbedder("minilm"))
    e5 = CountingEmbedder("e5")
    counts = await load(store, [review(1)], CountingEmbedder("minilm"), e5)
    assert counts.unchanged == 1 and e5.texts == []  # the models are not in the hash

    filled = await embed_missing(store.fact_checks, e5)
    assert (filled.missing, filled.embedded) == (1, 1) and e5.texts == ["Claim number 1"]
    assert (await embed_missing(store.fact_checks, e5)).embedded == 0


class FailingEmbedder(CountingEmbedder):
    """Fails its call number `fail_on` (a process stopped mid-pass), else counts as its parent."""

    def __init__(self, name: str, fail_on: int) -> None:
        super().__init__(name, dim=4)
        self.fail_on = fail_on

    def embed_sync(self, texts: Sequence[str], *, role: Role = "passage") -> Vectors:
        if self.calls + 1 == self.fail_on:
            self.calls += 1
            raise RuntimeError("stopped")
        return super().embed_sync(texts, role=role)


async def test_a_deferred_model_is_filled_in_batch_by_batch(store: Store) -> None:
    minilm = CountingEmbedder("minilm")
    imported = await load(store, [review(n) for n in range(5)], minilm)  # `--defer e5`
    index = store.fact_checks
    assert imported.added == 5 and index.count_missing_vectors("e5") == 5
    key = index.fact_check_key()
    seen: list[int] = []

    e5 = CountingEmbedder("e5", dim=4)
    counts = await embed_missing(
        index, e5, batch_size=2, progress=lambda c: seen.append(c.embedded)
    )

    assert (counts.missing, counts.embedded, counts.stale) == (5, 5, 0)
    assert seen == [2, 4, 5] and e5.calls == 3 and e5.roles == {"query"}
    assert counts.summary().startswith("e5: 5 of 5 missing embedded in ")
    assert index.fact_check_matrix("e5").matrix.shape == (5, 4)
    assert index.count_missing_vectors("e5") == 0
    assert index.fact_check_key() != key  # published: a matcher's next snapshot reads them
    # What the pass stored is what the import would have: the review's text, as a query.
    _, texts = index.fact_check_texts()
    assert np.allclose(index.fact_check_matrix("e5").matrix, e5.embed_sync(texts, role="query"))

    again = await load(store, [review(n) for n in range(5)], minilm)
    assert (again.unchanged, again.embedded) == (5, 0)
    assert index.fact_check_matrix("e5").matrix.shape == (5, 4)  # kept: the reviews are unchanged


async def test_an_interrupted_pass_resumes_where_it_stopped(store: Store) -> None:
    await load(store, [review(n) for n in range(7)], CountingEmbedder("minilm"))
    index = store.fact_checks
    key = index.fact_check_key()
    e5 = FailingEmbedder("e5", fail_on=3)

    with pytest.raises(RuntimeError, match="stopped"):
        await embed_missing(index, e5, batch_size=2, publish_seconds=3600)

    assert index.count_missing_vectors("e5") == 3  # two batches were stored...
    assert index.fact_check_key() != key  # ...and published, though the pass failed
    done = list(e5.texts)
    resumed = CountingEmbedder("e5", dim=4)
    counts = await embed_missing(index, resumed, batch_size=2)
    assert (counts.missing, counts.embedded) == (3, 3)
    assert not set(resumed.texts) & set(done)  # the finished batches are not embedded again
    assert sorted(done + resumed.texts) == sorted(f"Claim number {n}" for n in range(7))


async def test_a_changed_review_loses_its_deferred_vector_until_the_next_pass(
    store: Store,
) -> None:
    minilm, e5 = CountingEmbedder("minilm"), CountingEmbedder("e5", dim=4)
    await load(store, [review(1), review(2)], minilm, e5)
    counts = await load(store, [review(1), review(2, claimReviewed="A new claim")], minilm)
    assert (counts.unchanged, counts.updated) == (1, 1)
    index = store.fact_checks
    assert index.count_missing_vectors("e5") == 1  # its old text's vector is gone
    filled = await embed_missing(index, e5)
    assert filled.embedded == 1 and e5.texts[-1] == "A new claim"


async def test_duplicate_urls_keep_the_last_and_are_counted(store: Store) -> None:
    reviews = [
        review(1, headline="first"),
        review(2),
        review(1, headline="second"),  # same batch
        review(3),
        review(4),
        review(1, headline="last"),  # a later batch
    ]
    counts = await load(store, reviews, CountingEmbedder(), batch_size=3)

    assert (counts.added, counts.updated, counts.duplicates) == (4, 0, 2)
    stored = store.fact_checks.fact_check_by_url("https://checker.example/1")
    assert stored is not None and stored[1].headline == "last"
    assert store.fact_checks.fact_check_stats().total == 4


async def test_a_truncated_feed_keeps_what_came_before(store: Store) -> None:
    whole = json.dumps({"dataFeedElement": [review(n) for n in range(6)]}).encode()
    cut = io.BytesIO(whole[: whole.index(b"https://checker.example/4")])

    with pytest.raises(FeedError):
        await import_fact_checks(
            read_feed(cut), index=store.fact_checks, embedders=[CountingEmbedder()], batch_size=2
        )

    assert store.fact_checks.fact_check_stats().total == 4  # two full batches were stored


def test_the_hash_covers_the_fields_not_the_models() -> None:
    fc = FactCheck(url="https://a.example", claim_reviewed="c", publisher="p")
    assert fact_check_hash(fc) == fact_check_hash(fc)
    assert fact_check_hash(fc) != legacy_fact_check_hash(fc, ["minilm"])
    assert legacy_fact_check_hash(fc, ["a", "b"]) == legacy_fact_check_hash(fc, ["b", "a"])
    assert fact_check_hash(fc) != fact_check_hash(
        FactCheck(url="https://a.example", claim_reviewed="c", publisher="p", headline="h")
    )


@pytest.mark.slow
async def test_a_large_feed_imports_in_bounded_memory(store: Store, tmp_path: Path) -> None:
    path = tmp_path / "large.json"
    n = 20_000  # under tracemalloc a review takes ~0.6 ms to read and store
    with path.open("w", encoding="utf-8") as out:
        out.write('{"@type": "DataFeed", "dataFeedElement": [')
        for i in range(n):
            out.write(
                ("," if i else "") + json.dumps({"item": review(i, headline=f"Headline {i} " * 30)})
            )
        out.write("]}")
    size = path.stat().st_size
    embedder = CountingEmbedder(dim=2, keep=False)

    tracemalloc.start()
    try:
        counts = await import_fact_checks(
            read_feed_file(path), index=store.fact_checks, embedders=[embedder], batch_size=100
        )
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert counts.added == n and counts.skipped == {}
    assert embedder.calls == n // 100
    # The feed is never held: what grows is the run's URL hashes (~70 bytes a review, 1.4 MB
    # here) beside one batch.
    assert peak < size / 2, f"peak {peak} bytes for a {size}-byte feed"


async def test_the_language_is_identified_only_for_new_and_changed_reviews(store: Store) -> None:
    asked: list[str] = []

    def identify(text: str) -> str | None:
        asked.append(text)
        return "es"

    reviews = [review(n, inLanguage=None) for n in range(3)] + [review(9)]
    first = await load(store, reviews, CountingEmbedder("minilm"), identify=identify)
    assert first.added == 4 and len(asked) == 3  # the one that names its language is not asked
    languages = sorted(
        str(r.language) for r in store.fact_checks.get_fact_checks(range(10)).values()
    )
    assert languages == ["en", "es", "es", "es"]

    again = await load(store, reviews, CountingEmbedder("minilm"), identify=identify)
    assert again.unchanged == 4 and len(asked) == 3  # unchanged: never read again


async def test_an_index_of_old_hashes_is_not_embedded_again(store: Store) -> None:
    from storage.factchecks import rehash_fact_checks

    reviews = [
        review(1, datePublished="October 22, 2019"),
        review(2, inLanguage=None, itemReviewed={"datePublished": "2019-10-20T08:00:00-05:00"}),
    ]
    # As an import before the hash dropped the models stored them (its identifier said "es").
    old = [fc for fc in read_feed(feed(reviews)) if isinstance(fc, FactCheck)]
    store.fact_checks.upsert_fact_checks(
        [
            (
                fc if fc.language else dataclasses.replace(fc, language="es"),
                legacy_fact_check_hash(fc, ["minilm"]),
                {"minilm": np.ones(8, dtype=np.float32)},
            )
            for fc in old
        ]
    )
    assert rehash_fact_checks(store.db) == 2  # what migration m032 (p009) does

    minilm = CountingEmbedder("minilm")
    counts = await load(store, reviews, minilm)
    assert (counts.unchanged, counts.embedded) == (2, 0) and minilm.texts == []
