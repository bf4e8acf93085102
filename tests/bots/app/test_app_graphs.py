"""The App wires graph verification into its checks when the graph settings switch it on.

The conftest switches graphs off (FACTBOT_GRAPH__ENABLED=false) for every test whose subject
they are not; this one gives its own GraphSettings, as an operator's default does.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from bots.app.root import App
from bots.settings import GraphSettings, Settings
from pipeline.evidence.ingest import Ingester
from pipeline.graph.verify import GraphVerifier
from pipeline.inputs.posts import post_from_text
from tests.conftest import FIXTURES

# spaCy loads here: with the other graph tests on one worker, it loads once.
pytestmark = pytest.mark.xdist_group("spacy")

CLAIM = "5G networks spread the coronavirus in Wuhan in 2019."


def _check(data_dir: Path, embedder: Any, graph: GraphSettings | None) -> Any:
    settings = Settings(data_dir=data_dir, **({"graph": graph} if graph else {}))
    app = App(settings, embedder=embedder)
    try:
        corpus = str(FIXTURES / "corpus.jsonl")
        asyncio.run(Ingester(app.store.documents, embedder).ingest([corpus]))
        check = asyncio.run(app.check(post_from_text(CLAIM, max_chars=10_000)))
        return app.resources.graphs, check
    finally:
        app.close()


def test_graph_settings_on_put_claim_graphs_in_the_check(data_dir: Path, embedder: Any) -> None:
    verifier, check = _check(data_dir, embedder, GraphSettings(enabled=True))
    assert isinstance(verifier, GraphVerifier)
    assert check.evidence, "the corpus has evidence on 5G"
    assert [g.claim_id for g in check.graphs] == [c.id for c in check.claims]
    assert any(t.stage == "graphs" for t in check.timings)


def test_the_suites_default_leaves_graphs_out(data_dir: Path, embedder: Any) -> None:
    verifier, check = _check(data_dir, embedder, None)
    assert verifier is None
    assert check.graphs == () and not any(t.stage == "graphs" for t in check.timings)
