"""A whole check on the real local model (Qwen2.5 1.5B through llama.cpp): slow, CI runs it."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from bots.app.root import App
from bots.settings import ModelSettings, RetrievalSettings, Settings, VerifierSettings
from pipeline.evidence.ingest import Ingester
from pipeline.inputs.posts import post_from_text
from pipeline.llm.local import local_model_available
from tests.conftest import FIXTURES, REPO

MODELS = Path(os.environ.get("FACTBOT_MODEL__MODELS_DIR") or REPO / ".models")

pytestmark = [
    pytest.mark.slow,
    # The local model server takes the machine's cores: one local-model test at a time.
    pytest.mark.xdist_group("local_model"),
    pytest.mark.timeout(900),
    pytest.mark.skipif(
        local_model_available(MODELS) is None,
        reason=f"no local model in {MODELS}: run `make model` (llama-cpp-python + models pull)",
    ),
]


def test_a_check_runs_end_to_end_on_the_local_model(tmp_path: Path, embedder: Any) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        # one thread: the suite's other worker holds the second core, and two llama.cpp threads
        # waiting on each other beside it took 307 s where one alone takes ~70 s
        model=ModelSettings(mode="local", models_dir=MODELS, refine_rounds=0, local_threads=1),
        # the local default's judge is the verifier; this test is about the model path
        verifier=VerifierSettings(judge="model"),
        # two passages, not five: every stage still runs on the real model, with fewer prompts
        retrieval=RetrievalSettings(max_evidence=2),
    )
    app = App(settings, embedder=embedder)
    asyncio.run(Ingester(app.store.documents, embedder).ingest([str(FIXTURES / "corpus.jsonl")]))
    try:
        post = post_from_text(
            "Drinking bleach protects you against COVID-19, doctors confirm.", max_chars=10_000
        )
        check = asyncio.run(app.check(post))
        server = app.resources.local_model._server
        assert server is not None and server.n_threads == 1  # FACTBOT_MODEL__LOCAL_THREADS
    finally:
        app.close()
    assert check.judge.startswith("model:")
    assert check.correction.text.startswith("This post is")
    assert sum(u.calls for u in check.usage) >= 2  # claims + extraction/judge on the real model
    stored = {e.document.id: e.document.url for e in check.evidence}
    for ref in check.correction.references:
        assert stored[ref.document_id] == ref.url
    print("\n" + check.correction.text)
    print({u.stage: (u.calls, u.input_tokens, u.output_tokens, u.seconds) for u in check.usage})
