"""The e5 embedder brings its own cosine thresholds; an operator's own value still wins."""

from __future__ import annotations

import pytest

from bots.settings import Settings
from pipeline.embedding.calibration import CALIBRATIONS


def test_the_minilm_defaults_stay_for_the_default_backend() -> None:
    settings = Settings()
    assert settings.embedding.backend == "onnx"
    assert settings.retrieval.relevance_threshold == 0.60
    assert settings.verifier.relevance == 0.2


def test_e5_takes_its_measured_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FACTBOT_GRAPH__ENABLED", raising=False)  # the suite turns graphs off
    e5 = CALIBRATIONS["e5"]
    settings = Settings(embedding={"backend": "e5"})
    assert settings.retrieval.relevance_threshold == e5.relevance
    assert settings.retrieval.review_match_threshold == e5.review_match
    assert settings.verifier.relevance == e5.verifier_relevance
    assert settings.reuse.near_duplicate_threshold == e5.near_duplicate
    assert settings.graph.enabled is e5.graph
    # The class-level defaults were copied, not changed, for the next Settings.
    assert Settings().retrieval.relevance_threshold == 0.60


def test_a_threshold_the_operator_set_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTBOT_EMBEDDING__BACKEND", "e5")
    monkeypatch.setenv("FACTBOT_RETRIEVAL__RELEVANCE_THRESHOLD", "0.9")
    monkeypatch.setenv("FACTBOT_GRAPH__ENABLED", "true")
    settings = Settings()
    assert settings.retrieval.relevance_threshold == 0.9
    assert settings.graph.enabled
    assert settings.verifier.relevance == CALIBRATIONS["e5"].verifier_relevance


def test_an_unknown_backend_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match="e5"):
        Settings(embedding={"backend": "laser"})
