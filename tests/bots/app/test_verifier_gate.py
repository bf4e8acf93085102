"""The verifier reads passages down to its own relevance gate; the model judges keep theirs."""

from __future__ import annotations

from pathlib import Path

from bots.app.root import App
from bots.settings import RetrievalSettings, Settings, VerifierSettings


def test_each_judge_gets_its_own_relevance_gate(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        retrieval=RetrievalSettings(relevance_threshold=0.6),
        verifier=VerifierSettings(judge="verifier", relevance=0.25),
    )
    app = App(settings)
    assert app.checks.check_config().relevance_threshold == 0.25  # the configured judge
    assert app.checks.check_config("verifier").relevance_threshold == 0.25
    assert app.checks.check_config("model").relevance_threshold == 0.6
    assert app.checks.check_config("hybrid").relevance_threshold == 0.6


def test_the_verifier_thresholds_and_costs_come_from_settings() -> None:
    vs = VerifierSettings(support=0.7, refute=0.4, mixed=0.8, veto=0.3, cost_false_as_accurate=9)
    t = vs.thresholds()
    assert (t.support, t.refute, t.mixed, t.veto) == (0.7, 0.4, 0.8, 0.3)
    assert vs.costs().false_as_accurate == 9
