"""The fact-check index on both engines: upserts, vectors, the change key, search and stats."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt

from pipeline.ports import FactCheckIndex
from pipeline.records.domain import Label
from pipeline.records.factchecks import FactCheck
from storage import Store


def review(n: int, **changes: object) -> FactCheck:
    fields: dict[str, object] = {
        "url": f"https://checker.example/{n}",
        "claim_reviewed": f"Claim {n}: the bridge cost ten billion dollars",
        "publisher": "PolitiFact" if n % 2 else "Maldita",
        "publisher_site": "politifact.example",
        "headline": f"Headline {n}",
        "claimant": "Jane Senator",
        "claim_date": datetime(2019, 10, 22, tzinfo=UTC),
        "review_date": datetime(2019, 10, 30, 12, tzinfo=UTC),
        "language": "en" if n % 2 else "es",
        "rating": "False",
        "label": Label.FALSE,
        "license": "https://creativecommons.org/licenses/by/4.0/",
    }
    fields.update(changes)
    return FactCheck(**fields)  # type: ignore[arg-type]


def vec(seed: int, dim: int = 4) -> npt.NDArray[np.float32]:
    v = np.random.default_rng(seed).normal(size=dim).astype(np.float32)
    return v / np.linalg.norm(v)


def test_the_repo_is_the_port(store: Store) -> None:
    index: FactCheckIndex = store.fact_checks
    assert index.fact_check_key() == (0, 0, 0)


def test_add_read_back_and_unchanged(store: Store) -> None:
    repo = store.fact_checks
    rows = [(review(n), f"h{n}", {"a": vec(n), "b": vec(n + 10, 3)}) for n in (1, 2)]

    assert repo.upsert_fact_checks(rows) == ["added", "added"]
    assert repo.upsert_fact_checks(rows) == ["unchanged", "unchanged"]
    assert repo.stored_fact_check_hashes(["https://checker.example/1", "https://x.example"]) == {
        "https://checker.example/1": "h1"
    }
    ids, texts = repo.fact_check_texts()
    assert texts == [review(1).matching_text(), review(2).matching_text()]
    got = repo.get_fact_checks(ids.tolist())
    assert [got[int(i)] for i in ids] == [review(1), review(2)]  # every field round-trips
    unlabelled = review(3, label=None, rating=None, claim_date=None, language=None)
    repo.upsert_fact_checks([(unlabelled, "h3", {})])
    assert repo.fact_check_by_url(unlabelled.url) == (int(ids.max()) + 1, unlabelled)


def test_vectors_by_model_and_the_matrix(store: Store) -> None:
    repo = store.fact_checks
    repo.upsert_fact_checks([(review(n), f"h{n}", {"a": vec(n)}) for n in (1, 2, 3)])
    ids, _ = repo.fact_check_texts()

    table = repo.fact_check_matrix("a")
    assert table.ids.tolist() == ids.tolist()
    assert np.allclose(table.matrix, np.stack([vec(1), vec(2), vec(3)]))
    assert repo.fact_check_languages() == [r.language for r in repo.get_fact_checks(ids).values()]
    assert repo.fact_check_matrix("other").matrix.shape == (0, 0)
    found = repo.fact_check_vectors([int(ids[1]), 999], "a")
    assert list(found) == [int(ids[1])] and np.allclose(found[int(ids[1])], vec(2))

    # A changed review: its vectors are replaced, the key and the matrix move.
    key = repo.fact_check_key()
    changed = review(2, headline="A new headline")
    assert repo.upsert_fact_checks([(changed, "h2b", {"a": vec(20)})]) == ["updated"]
    assert repo.fact_check_key() != key
    table = repo.fact_check_matrix("a")
    assert np.allclose(table.matrix[1], vec(20))
    assert repo.get_fact_checks([int(ids[1])])[int(ids[1])] == changed


def test_the_key_moves_on_add_change_and_removal(store: Store) -> None:
    repo = store.fact_checks
    repo.upsert_fact_checks([(review(1), "h1", {"a": vec(1)})])
    first = repo.fact_check_key()
    assert repo.fact_check_matrix("a").matrix.shape == (1, 4)
    repo.upsert_fact_checks([(review(1, rating="True"), "h1b", {"a": vec(2)})])
    second = repo.fact_check_key()
    assert second != first
    assert repo.remove_fact_checks([review(1).url]) == 1
    assert repo.fact_check_key() not in (first, second)
    assert repo.fact_check_matrix("a").matrix.shape == (0, 0)
    assert repo.fact_check_vectors([1], "a") == {}


def test_search_and_stats(store: Store) -> None:
    repo = store.fact_checks
    repo.upsert_fact_checks(
        [
            (review(1), "h1", {}),
            (review(2, claim_reviewed="La vacuna contiene un chip"), "h2", {}),
            (
                review(3, claim_reviewed="Vaccines contain microchips", headline="No chips"),
                "h3",
                {},
            ),
        ]
    )

    assert [fc.url for _, fc in repo.search_fact_checks("bridge billion")] == [review(1).url]
    assert [fc.url for _, fc in repo.search_fact_checks("vacu")] == [review(2).url]
    assert {fc.url for _, fc in repo.search_fact_checks("chip")} == {review(2).url, review(3).url}
    assert repo.search_fact_checks("Maldita")[0][1].publisher == "Maldita"
    assert repo.search_fact_checks('"; DROP TABLE fact_checks; --') == []
    assert repo.search_fact_checks("   ") == []

    stats = repo.fact_check_stats()
    assert stats.total == 3
    assert stats.by_publisher == {"PolitiFact": 2, "Maldita": 1}
    assert stats.by_language == {"en": 2, "es": 1}


def test_a_url_given_twice_in_one_batch_stores_the_last(store: Store) -> None:
    repo = store.fact_checks
    statuses = repo.upsert_fact_checks(
        [(review(1), "h1", {"a": vec(1)}), (review(1, headline="Last"), "h1b", {"a": vec(2)})]
    )
    assert statuses == ["added", "updated"]
    _, stored = repo.fact_check_by_url(review(1).url) or (0, None)
    assert stored is not None and stored.headline == "Last"
    assert repo.fact_check_stats().total == 1


def test_reviews_missing_a_model_are_listed_in_id_order_and_filled(store: Store) -> None:
    repo = store.fact_checks
    repo.upsert_fact_checks(
        [(review(n), f"h{n}", {"a": vec(n)} | ({"b": vec(n + 10)} if n % 3 == 0 else {}))
         for n in range(1, 8)]
    )  # fmt: skip
    ids, _ = repo.fact_check_texts()
    lacking = [(int(i), f"h{n}") for i, n in zip(ids, range(1, 8), strict=True) if n % 3]

    assert repo.count_missing_vectors("b") == 5 and repo.count_missing_vectors("a") == 0
    assert repo.fact_checks_missing_vector("b", limit=3) == lacking[:3]
    assert repo.fact_checks_missing_vector("b", after=lacking[2][0], limit=3) == lacking[3:]
    assert repo.fact_checks_missing_vector("a") == []
    key = repo.fact_check_key()

    first, second = lacking[0][0], lacking[1][0]
    stored = repo.store_fact_check_vectors(
        "b",
        [
            (first, lacking[0][1], vec(100)),
            (second, "an older hash", vec(101)),  # changed since it was listed: not stored
            (int(ids[2]), "h3", vec(102)),  # has one already: kept
            (99_999, "h", vec(103)),  # removed since
        ],
    )
    assert stored == 1
    assert repo.fact_check_key() == key  # not published yet
    assert np.allclose(repo.fact_check_vectors([first], "b")[first], vec(100))
    assert np.allclose(repo.fact_check_vectors([int(ids[2])], "b")[int(ids[2])], vec(13))
    assert second not in repo.fact_check_vectors([second], "b")
    assert repo.count_missing_vectors("b") == 4
    repo.publish_fact_check_vectors()
    moved = repo.fact_check_key()
    assert moved != key
    repo.publish_fact_check_vectors()
    assert repo.fact_check_key() not in (key, moved)


def test_old_hashes_are_rewritten_without_the_models(store: Store) -> None:
    from pipeline.factchecks.loading import fact_check_hash, legacy_fact_check_hash
    from storage.factchecks import rehash_fact_checks

    repo = store.fact_checks
    identified = review(2, language=None)  # the feed named none; the identifier found "es"
    rows = [
        (review(1), legacy_fact_check_hash(review(1), ["b", "a"]), {"a": vec(1), "b": vec(2)}),
        (review(2), legacy_fact_check_hash(identified, ["a"]), {"a": vec(3)}),
        (review(3), legacy_fact_check_hash(review(3), ["a"]), {"a": vec(4), "b": vec(5)}),
        (review(4), "not a hash of it", {}),
    ]
    repo.upsert_fact_checks(rows)
    key = repo.fact_check_key()

    assert rehash_fact_checks(store.db) == 2
    assert repo.stored_fact_check_hashes([r.url for r, _, _ in rows]) == {
        review(1).url: fact_check_hash(review(1)),
        review(2).url: fact_check_hash(identified),
        review(3).url: rows[2][1],  # hashed with other models than its vectors': left
        review(4).url: "not a hash of it",
    }
    assert repo.fact_check_key() == key  # the reviews did not change
    assert [fc.url for _, fc in repo.search_fact_checks("bridge billion")] != []


def test_the_migration_rewrites_old_hashes_on_open(
    tmp_path: Path, open_store: Callable[..., Store]
) -> None:
    from pipeline.factchecks.loading import fact_check_hash, legacy_fact_check_hash

    old = [(review(n), legacy_fact_check_hash(review(n), ["a"]), {"a": vec(n)}) for n in (1, 2)]
    with open_store(tmp_path / "factbot.db") as store:
        store.fact_checks.upsert_fact_checks(old)
        # As a database the migration has not reached yet.
        if store.fact_checks.pg:
            store.db.execute("DELETE FROM factbot_migrations WHERE name = 'p009_fact_check_hashes'")
        else:
            store.db.execute("DELETE FROM _sqlite_migrations WHERE name = 'm032_fact_check_hashes'")

    with open_store(tmp_path / "factbot.db") as store:
        repo = store.fact_checks
        assert repo.stored_fact_check_hashes([review(1).url, review(2).url]) == {
            review(1).url: fact_check_hash(review(1)),
            review(2).url: fact_check_hash(review(2)),
        }
        changed = review(2, claim_reviewed="The tunnel cost nothing")
        repo.upsert_fact_checks([(changed, fact_check_hash(changed), {})])
        assert [fc.url for _, fc in repo.search_fact_checks("tunnel")] == [changed.url]
        assert [fc.url for _, fc in repo.search_fact_checks("bridge")] == [review(1).url]
