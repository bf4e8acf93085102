"""`python -m bench.languages` on a few fixture posts: the figures it reports add up."""

from __future__ import annotations

import json

from bench.languages import FIXTURE, run


def test_the_bench_reports_accuracy_und_and_latency() -> None:
    posts = [json.loads(line) for line in (FIXTURE / "posts.jsonl").open(encoding="utf-8")]
    chosen = [p for p in posts if p["kind"] == "sentence"][:6] + [
        p for p in posts if p["expected"] == "und"
    ][:3]
    chosen.append({**chosen[0], "expected": "fr"})  # a wrong expectation is counted as a miss
    figures = run(chosen, rounds=2, low_accuracy=True)
    assert figures["calls"] == 2 * len(chosen)
    assert figures["sentence_accuracy"] == round(6 / 7, 3)
    assert figures["und_correct"] == 1.0 and figures["und_false"] == 0
    assert [m["expected"] for m in figures["misses"]] == ["fr"]
    assert 0 < figures["p50_ms"] <= figures["p95_ms"] <= figures["max_ms"]
