"""`eval averitec --resume FILE`: a run cut after k claims and resumed reports what an uncut run
reports (no-model judge, gold mode), a line cut by a crash is skipped with a warning and its
claim runs again, and a journal of another run is refused."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bots.cli.main import main
from bots.evaluation.averitec import EvalClaim, Outcome, StageFailures
from bots.evaluation.journal import outcome_from_record, outcome_record, read_journal
from pipeline.records.domain import Label

# figures that depend on the clock, not on the verdicts
TIMED = {"latency_p50_s", "latency_p95_s", "wall_seconds", "resume"}


def _run(data: Path, report: Path, *extra: str) -> dict[str, Any]:
    result = CliRunner().invoke(
        main,
        [
            "eval",
            "averitec",
            "--no-progress",
            "--no-graph",
            "--mode",
            "gold",
            "--data",
            str(data),
            "--sample",
            "8",
            "--seed",
            "3",
            "--report",
            str(report),
            *extra,
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    return dict(json.loads(report.read_text()))


def _untimed(report: dict[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in report.items() if k not in TIMED}
    kept["per_claim"] = [{k: v for k, v in c.items() if k != "seconds"} for c in kept["per_claim"]]
    return kept


@pytest.fixture
def dev(shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Return a 40-claim slice of AVeriTeC dev (the sample is drawn from it)."""
    monkeypatch.setenv("FACTBOT_DATA_DIR", str(tmp_path / "data"))
    items = json.loads((shared_data / "eval" / "averitec" / "dev.json").read_text())[:40]
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


@pytest.mark.slow  # three runs of 8 claims (and 5) plus an uncut one: ~40 s on a busy machine
def test_a_cut_run_resumed_reports_what_an_uncut_run_does(
    dev: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    uncut = _run(dev, tmp_path / "uncut.json")

    journal = tmp_path / "run.jsonl"
    first = _run(dev, tmp_path / "first.json", "--resume", str(journal))
    assert _untimed(first) == _untimed(uncut)
    lines = journal.read_text().splitlines()
    assert len(lines) == 1 + 8 and json.loads(lines[0])["kind"] == "run"
    record = json.loads(lines[1])
    assert {"index", "gold", "verdict", "decided_by", "cited", "stages", "seconds"} <= set(record)
    # and why, for reading errors: each claim's label, basis and rationale
    decided = record["trace"]["claims"]  # one per claim the post was split into
    assert decided and all(c["label"] and c["basis"] and c["rationale"] for c in decided)
    assert record["verdict"] in {c["label"] for c in decided} | {"partly accurate"}

    # Cut after 3 claims, the 4th half-written by a crash.
    journal.write_text("\n".join(lines[:4]) + "\n" + lines[4][: len(lines[4]) // 2])
    with caplog.at_level(logging.WARNING, logger="bots.evaluation.journal"):
        resumed = _run(dev, tmp_path / "resumed.json", "--resume", str(journal))
    assert any("unreadable journal line" in r.message for r in caplog.records)
    assert resumed["resume"]["claims_from_file"] == 3
    assert resumed["resume"]["claims_run_now"] == 5
    assert _untimed(resumed) == _untimed(uncut)
    contents = read_journal(journal)
    assert len(contents.outcomes) == 8 and contents.skipped_lines == (5,)

    # Everything is in the file: the report is computed from it, nothing runs.
    again = _run(dev, tmp_path / "again.json", "--resume", str(journal))
    assert again["resume"]["claims_run_now"] == 0
    assert _untimed(again) == _untimed(uncut)


def test_an_outcome_survives_its_journal_line() -> None:
    claim = EvalClaim(index=7, text="A claim.", gold=Label.MISLEADING, documents=())
    outcome = Outcome(
        claim,
        Label.FALSE,
        12.5,
        2,
        True,
        evidence_documents=3,
        own_evidence_documents=2,
        model_calls=9,
        input_tokens=4000,
        output_tokens=300,
        decided_by="model",
        fallback=True,
        stages={"judge": StageFailures(failures=1, timeouts=1, fallbacks=1)},
        cited_gold=1,
        quoted=1,
        quote_agrees=1,
        cited=("https://a.example/1", "https://b.example/2"),
        trace={"claims": [{"label": "false", "basis": "model", "rationale": "Wrong year."}]},
    )
    assert outcome_from_record(json.loads(json.dumps(outcome_record(outcome)))) == outcome
    older = outcome_record(outcome)
    del older["trace"]  # a journal written before the trace
    assert outcome_from_record(older).trace == {}


def test_a_journal_of_another_run_is_refused(dev: Path, tmp_path: Path) -> None:
    journal = tmp_path / "run.jsonl"
    header = {"kind": "run", "format": 1, "data": str(dev.resolve()), "mode": "gold"}
    header |= {"model": False, "graph": False, "limit": None, "sample": 8, "seed": 3}
    journal.write_text(json.dumps(header) + "\n")
    before = journal.read_text()
    result = CliRunner().invoke(
        main,
        [
            *("eval", "averitec", "--no-progress", "--no-graph", "--mode", "retrieval"),
            *("--data", str(dev), "--sample", "8", "--seed", "3", "--resume", str(journal)),
        ],
    )
    assert result.exit_code != 0
    assert "another run" in result.output and "mode" in result.output
    assert journal.read_text() == before  # nothing lost


def test_claims_decided_by_a_fallback_run_again_with_rerun_fallbacks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.pipeline.llm.fake_openai import Seen, malformed, serve_openai

    items = [
        {
            "claim": f"Claim number {n} about the river bridge.",
            "label": "Supported",
            "questions": [
                {
                    "question": f"Is claim {n} true?",
                    "answers": [
                        {
                            "answer": f"Claim number {n} about the river bridge is true.",
                            "answer_type": "Extractive",
                            "source_url": f"https://news{n}.example/story",
                        }
                    ],
                }
            ],
        }
        for n in range(2)
    ]
    data = tmp_path / "dev.json"
    data.write_text(json.dumps(items), encoding="utf-8")
    dead = {"judge": True}

    def judged(user: str) -> dict[str, Any]:
        """Return a complete judge answer: every narrative of every claim, supporting."""
        facets = dict.fromkeys(("who", "what", "when", "where", "why", "how"))
        claims = []
        for claim in re.findall(r'<claim id="([^"]+)"', user):
            labels = re.findall(rf'narrative="({claim}\.[^"]+)"', user)
            narratives = [
                {
                    "narrative": label,
                    "facets": {f: {"status": "consistent"} for f in facets},
                    "relation": "supports",
                    "rationale": "It says so.",
                }
                for label in labels
            ]
            claims.append({"claim": claim, "narratives": narratives, "explanation": "It is."})
        return {"claims": claims}

    def router(seen: Seen) -> Any:
        user = str(seen.messages[-1]["content"])
        if seen.stage == "claims":  # the post's own sentence: a grounded claim
            text = next(i["claim"] for i in items if i["claim"] in user)
            return {"checkable": True, "reason": "", "claims": [{"text": text, "queries": ["q"]}]}
        if seen.stage == "extraction":
            return {"quotes": []}
        return malformed() if dead["judge"] else judged(user)

    monkeypatch.setenv("FACTBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("FACTBOT_MODEL__MODE", "endpoint")
    monkeypatch.setenv("FACTBOT_MODEL__REFINE_ROUNDS", "0")
    journal = tmp_path / "run.jsonl"
    args = ["eval", "averitec", "--no-progress", "--no-graph", "--model", "--data", str(data)]
    args += ["--resume", str(journal), "--report", str(tmp_path / "r.json")]
    with serve_openai(router=router) as fake:
        monkeypatch.setenv("FACTBOT_MODEL__BASE_URL", fake.base_url)
        first = CliRunner().invoke(main, args, catch_exceptions=False)
        assert first.exit_code == 0, first.output
        assert json.loads((tmp_path / "r.json").read_text())["claims_with_fallback"] == 2
        dead["judge"] = False
        kept = CliRunner().invoke(main, args, catch_exceptions=False)  # nothing to run
        assert json.loads((tmp_path / "r.json").read_text())["claims_with_fallback"] == 2
        again = CliRunner().invoke(main, [*args, "--rerun-fallbacks"], catch_exceptions=False)
    assert kept.exit_code == 0 and again.exit_code == 0, again.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["claims"] == 2 and report["claims_with_fallback"] == 0
    assert report["resume"]["claims_run_now"] == 2
    assert len(read_journal(journal).outcomes) == 2  # the new lines superseded the old


def test_outside_sample_draws_only_claims_the_reported_sample_leaves_out(
    dev: Path, tmp_path: Path
) -> None:
    reported = _run(dev, tmp_path / "reported.json", "--seed", "0")
    held = {c["index"] for c in reported["per_claim"]}
    calibration = _run(dev, tmp_path / "calibration.json", "--outside-sample", "8")
    drawn = {c["index"] for c in calibration["per_claim"]}
    assert len(held) == len(drawn) == 8 and not held & drawn
    assert calibration["sample"]["outside_sample"] == {"size": 8, "seed": 0}
    assert calibration["sample"]["drawn_from"] == 40 - 8


def test_a_journal_is_refused_when_a_knob_of_the_check_changed(
    dev: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    journal = tmp_path / "run.jsonl"
    _run(dev, tmp_path / "first.json", "--limit", "20", "--resume", str(journal))
    before = journal.read_text()
    assert json.loads(before.splitlines()[0])["max_evidence"] == 5
    monkeypatch.setenv("FACTBOT_RETRIEVAL__MAX_EVIDENCE", "3")
    result = CliRunner().invoke(
        main,
        [
            *("eval", "averitec", "--no-progress", "--no-graph", "--mode", "gold", "--limit"),
            *("20", "--data", str(dev), "--sample", "8", "--seed", "3"),
            *("--resume", str(journal)),
        ],
    )
    assert result.exit_code != 0
    assert "another run" in result.output and "max_evidence" in result.output
    assert journal.read_text() == before  # nothing lost
