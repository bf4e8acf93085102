"""The kv state table: values by key survive reopening the database."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from storage import Store


def test_values_are_kept_replaced_and_deleted(
    tmp_path: Path, open_store: Callable[..., Store]
) -> None:
    path = tmp_path / "state.db"
    with open_store(path) as store:
        assert store.state.get("discord:commands-hash") is None
        store.state.set("discord:commands-hash", "a")
        store.state.set("discord:commands-hash", "b")
        assert store.state.set_if_absent("privacy:key", "k1") == "k1"
        assert store.state.set_if_absent("privacy:key", "k2") == "k1"
    with open_store(path) as store:
        assert store.state.get("discord:commands-hash") == "b"
        store.state.delete("discord:commands-hash")
        assert store.state.get("discord:commands-hash") is None
        assert store.state.get("privacy:key") == "k1"
