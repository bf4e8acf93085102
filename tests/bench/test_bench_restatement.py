"""`python -m bench.restatement` on a few claims: every frame scored, shares in range."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import restatement


def test_the_probe_scores_every_frame_on_the_claims_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    claims = tmp_path / "claims.jsonl"
    rows = [{"claim": "The Eiffel Tower is in Berlin."}, {"claim": "Bananas are blue."}] * 2
    claims.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    restatement.main(["--claims", str(claims), "--support", "0.5", "--refute", "0.5"])
    report = json.loads(capsys.readouterr().out)
    assert report["claims"] == 2  # duplicates counted once
    assert report["thresholds"] == {"support": 0.5, "refute": 0.5}
    assert set(report["frames"]) == set(restatement.FRAMES)
    for frame in report["frames"].values():
        assert frame["read_as_support"] in (0.0, 0.5, 1.0)
        assert 0.0 <= frame["mean_supports"] <= 1.0 and 0.0 <= frame["mean_refutes"] <= 1.0
    said = restatement.FRAMES["according to a post"][0]("The Eiffel Tower is in Berlin.")
    assert said == "According to a Facebook post, the Eiffel Tower is in Berlin."
