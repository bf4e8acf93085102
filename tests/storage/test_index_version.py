"""`factbot doctor`'s index version: equal on nodes that ingested the same, else different."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pipeline.evidence.ingest import Ingester
from storage import Store
from storage.health import database_health
from tests.conftest import FIXTURES


def _node(folder: Path, lines: list[str], embedder: Any) -> str:
    """Ingest lines (JSONL documents) into a new node's index; return its doctor version."""
    folder.mkdir()
    corpus = folder / "corpus.jsonl"
    corpus.write_text("".join(lines), encoding="utf-8")
    with Store.open(folder / "factbot.db") as store:
        asyncio.run(Ingester(store.documents, embedder).ingest([str(corpus)]))
    health = database_health(folder / "factbot.db", integrity=False)
    assert health.documents == len(lines)
    return health.index_version


def test_nodes_that_ingested_the_same_show_one_version(tmp_path: Path, embedder: Any) -> None:
    lines = (FIXTURES / "corpus.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    first = _node(tmp_path / "a", lines, embedder)
    assert len(first) == 12
    assert _node(tmp_path / "b", list(reversed(lines)), embedder) == first  # order is no matter
    assert _node(tmp_path / "c", lines[:-1], embedder) != first  # one document fewer
    assert database_health(tmp_path / "none.db").index_version == ""  # no index at all
