"""`eval averitec --model` counts every model failure, timeout and fallback, per stage and claim.

The model is a local OpenAI-compatible server (tests/pipeline/llm/fake_openai.py) that answers
the claims stage with invalid JSON, lets the first extraction call time out on every attempt and
answers the judge with invalid JSON: each stage falls back to its no-model path, and the report must
say so, stage by stage and claim by claim.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bots.cli.main import main
from tests.pipeline.llm.fake_openai import Seen, malformed, serve_openai, slow

CLAIMS = [
    ("The Eiffel Tower stands in Paris.", "Where is the Eiffel Tower?", "It stands in Paris."),
    (
        "The Great Wall of China is in China.",
        "Where is the Great Wall of China?",
        "The Great Wall of China is in northern China.",
    ),
]


def _data(path: Path) -> Path:
    items = [
        {
            "claim": claim,
            "label": "Supported",
            "questions": [
                {
                    "question": question,
                    "answers": [
                        {
                            "answer": f"{claim} {answer}",
                            "answer_type": "Extractive",
                            "source_url": f"https://news{n}.example/story",
                        }
                    ],
                }
            ],
        }
        for n, (claim, question, answer) in enumerate(CLAIMS)
    ]
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


@pytest.mark.slow  # four timed-out attempts and their backoff: ~5 s of waiting by design
def test_failures_timeouts_and_fallbacks_are_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = {"extraction": 0}
    attempts = 4  # the client's requests per call (RetryPolicy.attempts)

    def router(seen: Seen) -> Any:
        if seen.stage == "extraction":
            calls["extraction"] += 1
            if calls["extraction"] <= attempts:  # every attempt of the first call times out
                return slow(5.0, {"quotes": []})
            return {"quotes": []}
        return malformed()  # claims and judge: invalid, and invalid again on the retry

    monkeypatch.setenv("FACTBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("FACTBOT_MODEL__MODE", "endpoint")
    monkeypatch.setenv("FACTBOT_MODEL__TIMEOUT", "0.2")
    monkeypatch.setenv("FACTBOT_MODEL__REFINE_ROUNDS", "0")
    report_path = tmp_path / "report.json"
    with serve_openai(router=router) as fake:
        monkeypatch.setenv("FACTBOT_MODEL__BASE_URL", fake.base_url)
        result = CliRunner().invoke(
            main,
            [
                "eval",
                "averitec",
                "--no-progress",
                "--no-graph",
                "--model",
                "--data",
                str(_data(tmp_path / "dev.json")),
                "--report",
                str(report_path),
            ],
            catch_exceptions=False,
        )
    assert result.exit_code == 0, result.output
    report = json.loads(report_path.read_text())
    stages = report["model_failures_by_stage"]
    n = len(CLAIMS)
    assert stages["claims"] == {"failures": n, "timeouts": 0, "invalid": n, "fallbacks": n}
    assert stages["extraction"] == {"failures": 1, "timeouts": 1, "invalid": 0, "fallbacks": 1}
    assert stages["judge"] == {"failures": n, "timeouts": 0, "invalid": n, "fallbacks": n}
    assert report["claims_with_fallback"] == n
    assert report["decided_by"] == {"fallback": n}
    assert all(c["fallback"] and c["decided_by"] == "fallback" for c in report["per_claim"])
