"""The AVeriTeC harness: loading, scoring, and both modes through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bots.cli.main import main
from bots.evaluation.averitec import EvalClaim, Outcome, load_averitec
from bots.evaluation.score import score
from pipeline.records.domain import Label


def _outcome(gold: Label, predicted: Label, refs: int = 1, gold_refs: int = 1) -> Outcome:
    claim = EvalClaim(index=0, text="c", gold=gold, documents=())
    return Outcome(
        claim,
        predicted,
        0.1,
        refs,
        True,
        evidence_documents=2,
        own_evidence_documents=1,
        cited_gold=gold_refs,
    )


def test_scores_follow_the_definitions() -> None:
    outcomes = [
        _outcome(Label.FALSE, Label.FALSE),
        _outcome(Label.FALSE, Label.UNVERIFIABLE),
        _outcome(Label.ACCURATE, Label.FALSE),
        _outcome(Label.UNVERIFIABLE, Label.UNVERIFIABLE, refs=2, gold_refs=0),
    ]
    report = score(outcomes)
    assert report["accuracy"] == 0.5
    assert report["per_label"]["false"] == {
        "precision": 0.5,
        "recall": 0.5,
        "f1": 0.5,
        "support": 2,
    }
    assert report["per_label"]["unverifiable"]["precision"] == 0.5
    assert report["confusion"]["accurate"]["false"] == 1
    assert report["macro_f1"] == round((0.5 + 0 + 0 + 2 / 3) / 4, 4)
    assert report["cited_gold_share"] == round(3 / 5, 4)
    assert report["own_evidence_precision"] == 0.5
    assert report["accurate_called_false"] == 1 and report["false_called_accurate"] == 0
    assert report["gold_labels"] == {"accurate": 1, "false": 2, "misleading": 0, "unverifiable": 1}
    low, high = report["accuracy_ci95"]
    assert 0.0 <= low <= report["accuracy"] <= high <= 1.0


def test_loading_maps_labels_and_builds_documents(shared_data: Path) -> None:
    claims = load_averitec(shared_data / "eval" / "averitec" / "dev.json", limit=20)
    assert len(claims) == 20
    assert claims[0].gold is Label.FALSE  # "Refuted"
    assert all(d.url.startswith("http") and d.text for c in claims for d in c.documents)
    # Wayback captures are attributed to the publisher they preserve.
    assert not any(d.domain == "archive.org" for c in claims for d in c.documents)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["gold", "retrieval"])
def test_eval_runs_in_both_modes(
    mode: str, shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTBOT_DATA_DIR", str(tmp_path / "data"))
    report_path = tmp_path / "report.json"
    result = CliRunner().invoke(
        main,
        [
            "eval",
            "averitec",
            "--no-progress",
            "--limit",
            "12",
            "--mode",
            mode,
            "--data",
            str(shared_data / "eval" / "averitec" / "dev.json"),
            "--report",
            str(report_path),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    report = json.loads(report_path.read_text())
    assert report["claims"] == 12 and report["mode"] == mode
    assert isinstance(report["references"], int) and report["references"] >= 0
    if mode == "gold":  # only the claim's own evidence is indexed
        # each reference checked against the retrieved documents: all of them the claim's own
        assert report["references"] > 0
        assert report["cited_gold_share"] == 1.0
    # (retrieval: the verifier decides none of these 12 claims, so none is cited; the one it
    # decided before the bearing rule was a gold-unverifiable claim wrongly called accurate)
    assert set(report["confusion"]) == {"accurate", "false", "misleading", "unverifiable"}


def test_eval_with_a_model_counts_calls_and_tokens(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.pipeline.llm.fake_openai import Seen, serve_openai

    def router(seen: Seen) -> object:
        if seen.stage == "claims":
            return {
                "checkable": True,
                "reason": "",
                "claims": [{"text": "A claim.", "queries": ["q"]}],
            }
        if seen.stage == "extraction":
            return {"quotes": []}
        return {"claims": []}

    monkeypatch.setenv("FACTBOT_DATA_DIR", str(tmp_path / "data"))
    with serve_openai(router=router) as fake:
        monkeypatch.setenv("FACTBOT_MODEL__BASE_URL", fake.base_url)
        monkeypatch.setenv("FACTBOT_MODEL__MODE", "endpoint")
        report_path = tmp_path / "report.json"
        result = CliRunner().invoke(
            main,
            [
                "eval",
                "averitec",
                "--no-progress",
                "--limit",
                "3",
                "--mode",
                "gold",
                "--model",
                "--data",
                str(shared_data / "eval" / "averitec" / "dev.json"),
                "--report",
                str(report_path),
            ],
            catch_exceptions=False,
        )
    assert result.exit_code == 0, result.output
    report = json.loads(report_path.read_text())
    assert report["judge"].startswith("model:")
    assert report["model_calls_per_claim"] >= 1
    assert report["input_tokens_per_claim"] > 0
    assert report["decided_by"] and report["sample"]["labels"]


def test_eval_of_the_verifier_can_take_its_claims_from_a_model(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.pipeline.llm.fake_openai import Seen, serve_openai

    def router(seen: Seen) -> object:
        user = "\n".join(m["content"] for m in seen.messages if m["role"] == "user")
        post = user.split(">\n", 1)[1].rsplit("\n</post>", 1)[0]  # the claim, as the post
        return {"checkable": True, "reason": "", "claims": [{"text": post, "queries": [post]}]}

    monkeypatch.setenv("FACTBOT_DATA_DIR", str(tmp_path / "data"))
    data = str(shared_data / "eval" / "averitec" / "dev.json")
    with serve_openai(router=router) as fake:
        monkeypatch.setenv("FACTBOT_MODEL__BASE_URL", fake.base_url)
        monkeypatch.setenv("FACTBOT_MODEL__MODE", "endpoint")
        report_path = tmp_path / "report.json"
        args = ["eval", "averitec", "--no-progress", "--limit", "3", "--data", data]
        result = CliRunner().invoke(
            main,
            [*args, "--judge", "verifier", "--claims", "model", "--report", str(report_path)],
            catch_exceptions=False,
        )
        stages = {s.stage for s in fake.completions}
        wrong = CliRunner().invoke(main, [*args, "--judge", "model", "--claims", "heuristic"])
    assert result.exit_code == 0, result.output
    report = json.loads(report_path.read_text())
    assert report["judge"] == "verifier"
    assert report["model_calls_per_claim"] == 1  # the claims call; the stance model decides
    assert stages == {"claims"}
    assert wrong.exit_code == 2 and "--claims is for --judge verifier" in wrong.output
