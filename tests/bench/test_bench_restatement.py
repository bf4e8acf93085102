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
    assert report["thresholds"]["support"] == 0.5 and report["thresholds"]["refute"] == 0.5
    assert report["contrast"]["total"]["n"] == 30  # the hand-written contrast set
    assert report["contrast"]["total"]["endorsed"] == 0
    assert set(report["frames"]) == set(restatement.FRAMES)
    for frame in report["frames"].values():
        assert frame["read_as_support"] in (0.0, 0.5, 1.0)
        assert frame["verifier_read_as_refutation"] in (0.0, 0.5, 1.0)
        assert 0.0 <= frame["mean_supports"] <= 1.0 and 0.0 <= frame["mean_refutes"] <= 1.0
    said = restatement.FRAMES["according to a post"][0]("The Eiffel Tower is in Berlin.")
    assert said == "According to a Facebook post, the Eiffel Tower is in Berlin."


def test_a_page_that_only_repeats_a_claim_is_not_read_as_support(shared_data: Path) -> None:
    # the gate of the shipped model at the shipped thresholds, on 100 FEVER-Symmetric test claims
    # in frames training never used: each "neither" frame read as support for at most 10 % of
    # claims, by the model and by the verifier (the model with frames read in code); "<claim>?
    # Our verdict: this is false." read as refutation for at least 90 % by the model; both
    # debunking frames for at least 90 % by the verifier (the model alone reads "The claim
    # that <claim> is false, fact-checkers found." as refutation for 43 % of 300).
    from pipeline.verifier.stance import StanceModel
    from pipeline.verifier.verdict import Thresholds

    path = shared_data / "train" / "fever" / "symmetric_test.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    claims = list(dict.fromkeys(str(r["claim"]) for r in rows))[:100]
    found = restatement.probe(StanceModel(), claims, Thresholds())
    for name, (_, expected) in restatement.FRAMES.items():
        if expected == "neither":
            assert found[name]["read_as_support"] <= 0.10, name
            assert found[name]["verifier_read_as_support"] <= 0.10, name
        else:
            assert found[name]["verifier_read_as_refutation"] >= 0.90, name
    assert found["verdict false"]["read_as_refutation"] >= 0.90
