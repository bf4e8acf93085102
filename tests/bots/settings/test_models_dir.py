"""`factbot` in the checkout's venv finds the local model where `make model` put it."""

from __future__ import annotations

from pathlib import Path

import pytest

from bots.settings import ModelSettings, Settings
from tests.conftest import REPO


def test_factbot_from_the_checkout_reads_the_folder_make_fills(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `make run` / `make model` pass this variable; an activated venv does not.
    monkeypatch.delenv("FACTBOT_MODEL__MODELS_DIR", raising=False)
    monkeypatch.chdir(tmp_path)  # from any directory, and no .env file to help
    assert "FACTBOT_MODEL__MODELS_DIR ?= $(CURDIR)/.models" in (REPO / "Makefile").read_text()
    assert Settings(data_dir=tmp_path / "data").models_dir == REPO / ".models"


def test_a_configured_folder_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTBOT_MODEL__MODELS_DIR", str(tmp_path / "env"))
    assert Settings(data_dir=tmp_path).models_dir == tmp_path / "env"
    given = Settings(data_dir=tmp_path, model=ModelSettings(models_dir=tmp_path / "given"))
    assert given.models_dir == tmp_path / "given"
