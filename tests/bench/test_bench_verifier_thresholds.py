"""How the verifier's thresholds and the hybrid judge's `confident` are chosen on train."""

from __future__ import annotations

from typing import Any

from bench.verifier_thresholds import (
    CONFIDENT_MIN_CLAIMS,
    confident_from,
    figures,
    predict,
    reliability,
    search,
)
from pipeline.records.domain import Label
from pipeline.verifier.verdict import Thresholds

T = Thresholds(support=0.5, refute=0.5, mixed=0.5)


def _row(gold: Label, support: float, refute: float) -> dict[str, Any]:
    return {"gold": gold.value, "claims": [[[support, refute]]]}


def test_reliability_counts_the_decisive_verdicts_at_each_strength() -> None:
    rows = [
        *[_row(Label.FALSE, 0.0, 0.95) for _ in range(8)],  # right, strong
        *[_row(Label.ACCURATE, 0.0, 0.95) for _ in range(2)],  # wrong, strong
        *[_row(Label.ACCURATE, 0.0, 0.6) for _ in range(10)],  # wrong, weak
        _row(Label.FALSE, 0.1, 0.1),  # unverifiable: not counted
    ]
    table = {row["from"]: row for row in reliability(rows, T)}
    assert (table[0.5]["sub_claims"], table[0.5]["right"]) == (20, 8)
    assert (table[0.9]["sub_claims"], table[0.9]["right"]) == (10, 8)
    low, high = table[0.9]["interval"]
    assert low < 0.8 < high


def test_confident_is_the_lowest_strength_that_is_right_often_enough_on_enough_claims() -> None:
    strong = [_row(Label.FALSE, 0.0, 0.96) for _ in range(CONFIDENT_MIN_CLAIMS)]
    weak = [_row(Label.ACCURATE, 0.0, 0.72) for _ in range(CONFIDENT_MIN_CLAIMS)]
    assert confident_from(reliability(strong + weak, T)) == 0.75
    # too few sub-claims reach any p: the verifier never overrules
    assert confident_from(reliability(strong[:5], T)) == 1.0
    # right too rarely everywhere: never
    assert confident_from(reliability(weak, T)) == 1.0


def test_the_search_keeps_true_claims_from_being_called_false() -> None:
    # true claims that look refuted at 0.3 and false ones refuted at 0.8: a refute threshold
    # low enough to catch both would call every true claim false
    rows = [_row(Label.ACCURATE, 0.0, 0.3) for _ in range(10)]
    rows += [_row(Label.FALSE, 0.0, 0.8) for _ in range(10)]
    best, found, _ = search(rows)
    assert found["accurate_to_false"] == 0
    assert best.refute > 0.3
    assert figures(rows, predict(rows, best)) == found
