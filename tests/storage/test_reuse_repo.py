"""The fingerprint table: idempotent adds, exact look-ups, incremental vector loads, pruning."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import numpy.typing as npt

from storage import Store
from storage.reuse import Fingerprint

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _vec(seed: int) -> npt.NDArray[np.float32]:
    v = np.random.default_rng(seed).normal(size=384).astype(np.float32)
    return v / np.linalg.norm(v)


def _fp(n: int, *, created: datetime = T0, model: str = "m", **changes: object) -> Fingerprint:
    fields: dict[str, object] = {
        "check_id": f"check{n}",
        "platform": "x",
        "platform_id": f"post{n}",
        "text_hash": f"text{n}",
        "claims_hash": f"claims{n}",
        "numbers": frozenset({"2020", str(n)}),
        "before": None,
        "bound_at": created,
        "created_at": created,
        "model": model,
        "embedding": _vec(n),
    }
    fields.update(changes)
    return Fingerprint(**fields)  # type: ignore[arg-type]


def test_migration_creates_the_table_and_its_indexes(store: Store) -> None:
    if store.engine == "sqlite":
        assert "m010_reuse_fingerprints" in store.applied_migrations()
        sql = (
            "SELECT name FROM sqlite_master WHERE type = 'index' "
            "AND tbl_name = 'reuse_fingerprints'"
        )
    else:
        assert "p001_schema" in store.applied_migrations()
        sql = "SELECT indexname FROM pg_indexes WHERE tablename = 'reuse_fingerprints'"
    indexes = {row[0] for row in store.db.execute(sql)}
    assert {"reuse_post", "reuse_text", "reuse_claims", "reuse_created"} <= indexes


def test_adding_a_check_twice_keeps_one_fingerprint(store: Store) -> None:
    assert store.reuse.add(_fp(1)) is True
    assert store.reuse.add(_fp(1, text_hash="changed")) is False
    assert store.reuse.count() == 1
    assert store.reuse.add_all([_fp(1), _fp(2), _fp(3)]) == 2
    assert store.reuse.count() == 3


def test_get_round_trips_every_field(store: Store) -> None:
    before = datetime(2019, 3, 1, 12, tzinfo=UTC)
    stored = _fp(7, before=before, bound_at=before, claims_hash=None)
    store.reuse.add(stored)
    loaded = store.reuse.get("check7")
    assert loaded is not None
    assert loaded.embedding is not None and stored.embedding is not None
    assert np.array_equal(loaded.embedding, stored.embedding)
    assert (loaded.before, loaded.bound_at, loaded.claims_hash) == (before, before, None)
    assert loaded.numbers == frozenset({"2020", "7"})
    assert store.reuse.get("nope") is None


def test_exact_matches_post_text_or_claims_within_the_window(store: Store) -> None:
    store.reuse.add_all(
        [
            _fp(1, created=T0),
            _fp(2, created=T0 + timedelta(hours=1)),
            _fp(3, created=T0 - timedelta(days=3)),  # too old for the window below
        ]
    )
    since = T0 - timedelta(hours=1)

    def ids(**keys: object) -> list[str]:
        found = store.reuse.exact(since=since, **keys)  # type: ignore[arg-type]
        return [fp.check_id for fp in found]

    assert ids(post=("x", "post1"), text_hash=None, claims_hash=None) == ["check1"]
    assert ids(post=None, text_hash="text2", claims_hash=None) == ["check2"]
    assert ids(post=None, text_hash="text1", claims_hash="claims2") == ["check2", "check1"]
    assert ids(post=("x", "post3"), text_hash="text3", claims_hash="claims3") == []
    assert ids(post=("y", "post1"), text_hash="other", claims_hash=None) == []
    assert ids(post=None, text_hash=None, claims_hash=None) == []


def test_vectors_after_loads_only_new_recent_rows_of_one_model(store: Store) -> None:
    store.reuse.add_all(
        [
            _fp(1),
            _fp(2, model="other"),
            _fp(3, embedding=None),
            _fp(4, created=T0 - timedelta(days=2)),
        ]
    )
    since = T0 - timedelta(days=1)
    first = store.reuse.vectors_after(0, since=since, model="m")
    assert first.check_ids == ("check1",)
    assert first.matrix.shape == (1, 384)
    assert first.created[0] == T0.timestamp()
    assert first.numbers == (frozenset({"2020", "1"}),)
    store.reuse.add(_fp(5))
    later = store.reuse.vectors_after(int(first.seq[-1]), since=since, model="m")
    assert later.check_ids == ("check5",)
    nothing = store.reuse.vectors_after(int(later.seq[-1]), since=since, model="m")
    assert nothing.check_ids == () and nothing.matrix.shape == (0, 0)


def test_prune_deletes_only_old_fingerprints(store: Store) -> None:
    store.reuse.add_all([_fp(1), _fp(2, created=T0 - timedelta(days=2))])
    assert store.reuse.prune(before=T0 - timedelta(days=1)) == 1
    assert store.reuse.get("check1") is not None and store.reuse.get("check2") is None
