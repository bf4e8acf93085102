"""How many threads the embedder and the stance model get, and whether the local model server
starts: one thread each beside a server that checks call, else as configured."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from bots.app.model_choice import Choice, judge_for, uses_model
from bots.app.root import App
from bots.settings import EmbeddingSettings, ModelSettings, Settings, VerifierSettings
from pipeline.llm.models import DEFAULT_MODEL, verified
from tests.conftest import REPO

MODELS = REPO / ".models"
local_model = pytest.mark.skipif(
    verified(DEFAULT_MODEL, MODELS) is None, reason="the local model is not pulled (make model)"
)


def _settings(tmp_path: Path, mode: str, threads: int | None = None, **verifier: Any) -> Settings:
    return Settings(
        data_dir=tmp_path,
        model=ModelSettings(mode=mode, models_dir=MODELS),  # type: ignore[arg-type]
        embedding=EmbeddingSettings(threads=threads),
        verifier=VerifierSettings(**verifier),
    )


def _app(tmp_path: Path, mode: str, threads: int | None = None, **verifier: Any) -> App:
    return App(_settings(tmp_path, mode, threads, **verifier))


def test_no_local_model_leaves_torch_its_default(tmp_path: Path) -> None:
    assert _app(tmp_path, "none").embedder.threads is None


def test_a_setting_wins(tmp_path: Path) -> None:
    assert _app(tmp_path, "none", threads=3).embedder.threads == 3


@pytest.mark.parametrize(
    ("choice", "judge", "claims", "judged_by", "calls_model"),
    [
        ("local", "auto", "heuristic", "verifier", False),  # the local default
        ("local", "verifier", "heuristic", "verifier", False),
        ("local", "auto", "model", "verifier", True),  # the model splits posts into claims
        ("local", "model", "heuristic", "model", True),
        ("local", "hybrid", "heuristic", "hybrid", True),
        ("endpoint", "auto", "heuristic", "model", True),
        ("endpoint", "verifier", "heuristic", "verifier", False),
        ("none", "model", "model", "verifier", False),  # nothing to call: the verifier judges
        ("none", "auto", "heuristic", "verifier", False),
    ],
)
def test_which_settings_call_the_model(
    tmp_path: Path, choice: Choice, judge: str, claims: str, judged_by: str, calls_model: bool
) -> None:
    settings = _settings(tmp_path, "none", judge=judge, claims=claims)
    assert judge_for(settings, choice) == judged_by
    assert uses_model(settings, choice) is calls_model


@local_model
def test_one_thread_each_beside_a_local_model_that_checks_call(tmp_path: Path) -> None:
    app = _app(tmp_path, "local", judge="model")
    assert app.model_choice == "local" and app.resources.runs_local_model
    assert app.embedder.threads == 1
    assert app.resources.verifier.stance.threads == 1
    assert _app(tmp_path, "local", threads=2, judge="model").embedder.threads == 2


@local_model
def test_the_local_default_neither_starts_the_server_nor_gives_up_cores(
    tmp_path: Path, embedder: Any
) -> None:
    # Pulled and installed, but the verifier judges heuristic claims: no check calls the model.
    app = App(_settings(tmp_path, "local"), embedder=embedder)
    try:
        assert app.model_choice == "local" and not app.resources.runs_local_model
        assert app.resources.verifier.stance.threads is None
        asyncio.run(app.start(warm=True))
        assert app.resources.local_model.pid is None
    finally:
        app.close()
    assert _app(tmp_path, "local").embedder.threads is None
