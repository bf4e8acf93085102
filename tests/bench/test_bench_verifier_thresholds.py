"""How the verifier's thresholds and the hybrid judge's `confident` are chosen on train."""

from __future__ import annotations

import random
from typing import Any

from bench.verifier_thresholds import (
    _ORDER,
    _PARTLY,
    CONFIDENT_MIN_CLAIMS,
    MAX_FALSE_CALLED_ACCURATE,
    _candidates,
    _Table,
    confident_from,
    figures,
    label_weights,
    predict,
    reliability,
    search,
    tradeoff,
)
from pipeline.records.domain import Label
from pipeline.verifier.verdict import Costs, Thresholds

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
    best, gate, found, _ = search(rows)
    assert found["accurate_to_false"] == 0
    assert best.refute > 0.3
    assert figures(rows, predict(rows, best, gate)) == found


def test_the_search_keeps_false_claims_from_being_called_accurate() -> None:
    # false claims that pages support at 0.7 but also refute at 0.4; true claims supported at
    # 0.9 with nothing against them: endorsing at 0.7 would endorse every false claim
    rows = [_row(Label.FALSE, 0.7, 0.4) for _ in range(10)]
    rows += [_row(Label.ACCURATE, 0.9, 0.0) for _ in range(10)]
    best, _gate, found, _ = search(rows)
    assert found["false_to_accurate_share"] <= MAX_FALSE_CALLED_ACCURATE
    assert found["recall"]["accurate"] == 1.0  # the true ones are still endorsed
    assert label_of(best, 0.7, 0.4) is not Label.ACCURATE


def label_of(t: Thresholds, support: float, refute: float) -> Label:
    return predict([_row(Label.FALSE, support, refute)], t)[0]


def test_a_relevance_gate_drops_the_passages_below_it() -> None:
    # the refuting passage is barely relevant: read at gate 0.2, dropped at 0.5
    row = {"gold": "false", "claims": [[[0.1, 0.9, 0.3], [0.1, 0.1, 0.8]]]}
    t = Thresholds(support=0.5, refute=0.5, mixed=0.9)
    assert predict([row], t, 0.2) == [Label.FALSE]
    assert predict([row], t, 0.5) == [Label.UNVERIFIABLE]


def test_the_fast_search_path_labels_every_row_as_the_verdict_rule_does() -> None:
    rng = random.Random(3)
    labels = ["accurate", "false", "misleading", "unverifiable"]
    rows = [
        {
            "gold": rng.choice(labels),
            "claims": [
                [[rng.random(), rng.random(), rng.random()] for _ in range(rng.randint(0, 3))]
                for _ in range(rng.randint(1, 3))
            ],
        }
        for _ in range(120)
    ]
    for gate in (0.2, 0.5):
        table = _Table(rows, gate)
        for t in rng.sample(_candidates(), 150):
            expected = [_ORDER.index(x) if x in _ORDER else _PARTLY for x in predict(rows, t, gate)]
            assert list(table.labels(t)) == expected


def test_the_tradeoff_curve_covers_less_as_the_costly_errors_cost_more() -> None:
    rows = [_row(Label.FALSE, 0.6, 0.5) for _ in range(6)]
    rows += [_row(Label.ACCURATE, 0.6, 0.2) for _ in range(6)]
    rows += [_row(Label.FALSE, 0.1, 0.9) for _ in range(6)]
    curve = tradeoff(rows, Costs())
    assert [c["costly_error_weight"] for c in curve] == sorted(
        c["costly_error_weight"] for c in curve
    )
    coverage = [c["coverage"] for c in curve]
    assert coverage == sorted(coverage, reverse=True)


def test_weighting_to_the_train_label_shares_moves_the_choice_with_the_label_mix() -> None:
    # equal evidence (refuted at 0.6) for false and unverifiable claims: which answer costs less
    # depends on how common each is, not on the stratified sample's even mix
    rows = [_row(Label.FALSE, 0.0, 0.6) for _ in range(10)]
    rows += [_row(Label.UNVERIFIABLE, 0.0, 0.6) for _ in range(15)]
    rows += [_row(Label.ACCURATE, 0.99, 0.0) for _ in range(10)]
    even, _, _, _ = search(rows)
    assert label_of(even, 0.0, 0.6) is Label.UNVERIFIABLE  # 15 unverifiable outweigh 10 false
    shares = {"false": 0.6, "unverifiable": 0.1, "accurate": 0.3}
    assert label_weights(rows, shares) is not None
    natural, _, _, _ = search(rows, shares=shares)
    assert label_of(natural, 0.0, 0.6) is Label.FALSE
    assert label_of(natural, 0.99, 0.0) is Label.ACCURATE
