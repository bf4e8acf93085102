"""How many threads the embedder gets: one beside the local model server, else as configured."""

from __future__ import annotations

from pathlib import Path

import pytest

from bots.app.root import App
from bots.settings import EmbeddingSettings, ModelSettings, Settings
from pipeline.llm.models import DEFAULT_MODEL, verified
from tests.conftest import REPO

MODELS = REPO / ".models"


def _app(tmp_path: Path, mode: str, threads: int | None = None) -> App:
    return App(
        Settings(
            data_dir=tmp_path,
            model=ModelSettings(mode=mode, models_dir=MODELS),  # type: ignore[arg-type]
            embedding=EmbeddingSettings(threads=threads),
        )
    )


def test_no_local_model_leaves_torch_its_default(tmp_path: Path) -> None:
    assert _app(tmp_path, "none").embedder.threads is None


def test_a_setting_wins(tmp_path: Path) -> None:
    assert _app(tmp_path, "none", threads=3).embedder.threads == 3


@pytest.mark.skipif(
    verified(DEFAULT_MODEL, MODELS) is None, reason="the local model is not pulled (make model)"
)
def test_one_thread_beside_the_local_model(tmp_path: Path) -> None:
    app = _app(tmp_path, "local")
    assert app.model_choice == "local"
    assert app.embedder.threads == 1
    assert _app(tmp_path, "local", threads=2).embedder.threads == 2
