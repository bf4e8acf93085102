"""`factbot eval compare`: two runs side by side on the same claims, with paired intervals."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from bots.cli.main import main
from bots.evaluation.averitec import EvalClaim, Outcome
from bots.evaluation.journal import outcome_record
from bots.evaluation.score import compare
from pipeline.records.domain import Label

GOLD = [Label.ACCURATE, Label.FALSE, Label.MISLEADING, Label.UNVERIFIABLE] * 10


def _outcome(index: int, gold: Label, predicted: Label) -> Outcome:
    claim = EvalClaim(index=index, text=f"claim {index}", gold=gold, documents=())
    return Outcome(
        claim=claim, predicted=predicted, seconds=0.1, references=0, found_own_evidence=False
    )


def _journal(path: Path, outcomes: list[Outcome]) -> Path:
    lines = [{"kind": "run", "format": 1}, *(outcome_record(o) for o in outcomes)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_better_run_is_better_within_a_paired_interval() -> None:
    always_false = [_outcome(i, g, Label.FALSE) for i, g in enumerate(GOLD)]
    right = [_outcome(i, g, g) for i, g in enumerate(GOLD)]
    result = compare(always_false, right)
    assert result["claims"] == 40 and result["changed"] == 30
    assert result["macro_f1"]["second"] == 1.0
    low, high = result["macro_f1"]["interval"]
    assert 0 < low <= result["macro_f1"]["difference"] <= high
    assert result["right_only_in_second"] == 30 and result["right_only_in_first"] == 0
    assert result["accurate_to_false"] == {"first": 10, "second": 0}
    # the same run against itself: no difference, and an interval that is a point
    same = compare(right, right)
    assert same["macro_f1"]["difference"] == 0 and same["macro_f1"]["interval"] == [0.0, 0.0]


def test_only_claims_both_runs_hold_are_compared() -> None:
    first = [_outcome(i, g, g) for i, g in enumerate(GOLD)]
    result = compare(first, first[:12])
    assert result["claims"] == 12 and result["only_in_first"] == 28


def test_the_command_compares_journals_and_refuses_other_data(tmp_path: Path) -> None:
    first = _journal(
        tmp_path / "a.jsonl", [_outcome(i, g, Label.FALSE) for i, g in enumerate(GOLD)]
    )
    second = _journal(tmp_path / "b.jsonl", [_outcome(i, g, g) for i, g in enumerate(GOLD)])
    report = tmp_path / "compare.json"
    result = CliRunner().invoke(
        main, ["eval", "compare", str(first), str(second), "--report", str(report)]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(report.read_text())["macro_f1"]["second"] == 1.0
    shifted = [_outcome(i, GOLD[(i + 1) % 40], Label.FALSE) for i in range(40)]
    other = _journal(tmp_path / "c.jsonl", shifted)
    refused = CliRunner().invoke(main, ["eval", "compare", str(first), str(other)])
    assert refused.exit_code == 1 and "not runs on the same data" in refused.output
