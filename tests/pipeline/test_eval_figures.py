"""The evaluation's figures: bootstrap intervals, the stratified sample, the reference invariant."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import accuracy_score, f1_score

from bots.evaluation.averitec import (
    GOLD_LABELS,
    EvalClaim,
    Outcome,
    ReferenceInvariantError,
    calibration_part,
    check_references,
    stratified_sample,
)
from bots.evaluation.score import accuracy_of, bootstrap_interval, codes, macro_f1_of
from pipeline.records.domain import (
    Check,
    Correction,
    Document,
    Evidence,
    Label,
    Passage,
    Post,
    Reference,
    Tier,
    Verdict,
)


def _outcomes(pairs: list[tuple[Label, Label]]) -> list[Outcome]:
    return [
        Outcome(EvalClaim(i, "c", gold, ()), predicted, 0.0, 0, False)
        for i, (gold, predicted) in enumerate(pairs)
    ]


def test_the_bootstrap_interval_of_a_coin_is_the_binomial_one() -> None:
    # 50 of 100 right: resampled accuracy is Binomial(100, 0.5) / 100, whose central 95 % is
    # 0.40 .. 0.60 (±1.96 * 0.05).
    pairs = [(Label.FALSE, Label.FALSE)] * 50 + [(Label.FALSE, Label.ACCURATE)] * 50
    gold, predicted = codes(_outcomes(pairs))
    low, high = bootstrap_interval(gold, predicted, accuracy_of, seed=0)
    assert 0.39 <= low <= 0.41 and 0.59 <= high <= 0.61
    assert bootstrap_interval(gold, predicted, accuracy_of, seed=0) == (low, high)


def test_a_perfect_run_has_a_point_interval_and_macro_f1_one() -> None:
    pairs = [(label, label) for label in GOLD_LABELS for _ in range(5)]
    gold, predicted = codes(_outcomes(pairs))
    assert macro_f1_of(gold, predicted) == 1.0
    assert bootstrap_interval(gold, predicted, accuracy_of) == (1.0, 1.0)
    low, high = bootstrap_interval(gold, predicted, macro_f1_of)
    assert high == 1.0 and 0.5 < low <= 1.0  # a resample may miss a label: its F1 is 0


def _pool() -> list[EvalClaim]:
    # skewed as AVeriTeC dev: many false, few misleading
    labels = [Label.FALSE] * 30 + [Label.ACCURATE] * 12 + [Label.MISLEADING] * 3
    labels += [Label.UNVERIFIABLE] * 5
    np.random.default_rng(7).shuffle(labels)  # type: ignore[arg-type]
    return [EvalClaim(i, f"claim {i}", label, ()) for i, label in enumerate(labels)]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(Label) - 1), st.integers(0, len(Label) - 1))))
def test_accuracy_and_macro_f1_are_sklearns(pairs: list[tuple[int, int]]) -> None:
    gold = np.array([g for g, _ in pairs], dtype=np.int64)
    predicted = np.array([p for _, p in pairs], dtype=np.int64)
    if not pairs:  # sklearn refuses an empty run; the report's figures are 0
        assert macro_f1_of(gold, predicted) == accuracy_of(gold, predicted) == 0.0
        return
    labels = [list(Label).index(label) for label in GOLD_LABELS]
    want_f1 = f1_score(gold, predicted, labels=labels, average="macro", zero_division=0.0)
    assert macro_f1_of(gold, predicted) == float(want_f1)  # the same float, not close to it
    assert accuracy_of(gold, predicted) == float(accuracy_score(gold, predicted))


def test_the_sample_is_stratified_reproducible_and_in_data_order() -> None:
    pool = _pool()
    sample = stratified_sample(pool, 12, seed=3)
    assert Counter(c.gold for c in sample) == {label: 3 for label in GOLD_LABELS}
    assert [c.index for c in sample] == sorted(c.index for c in sample)
    assert stratified_sample(pool, 12, seed=3) == sample
    assert stratified_sample(pool, 12, seed=4) != sample


def test_a_short_label_gives_its_place_to_the_others() -> None:
    sample = stratified_sample(_pool(), 20, seed=0)
    counts = Counter(c.gold for c in sample)
    assert len(sample) == 20 and counts[Label.MISLEADING] == 3  # all there are
    assert counts[Label.UNVERIFIABLE] == 5
    assert counts[Label.FALSE] + counts[Label.ACCURATE] == 12


def test_the_calibration_part_is_everything_outside_the_sample() -> None:
    pool = _pool()
    sample = {c.index for c in stratified_sample(pool, 12, seed=3)}
    part = calibration_part(pool, 12, seed=3)
    assert not sample & {c.index for c in part}
    assert len(part) + len(sample) == len(pool)


def _check(url_cited: str) -> Check:
    post = Post(id="p", platform="t", platform_id="1", text="x")
    doc = Document(id="d1", url="https://a.example/1", domain="a.example", title="t", text="x")
    evidence = Evidence(
        id="e1",
        claim_id="c1",
        passage=Passage(id="p1", document_id="d1", position=0, text="x"),
        document=doc,
        relevance=0.9,
        tier=Tier.HIGH,
    )
    reference = Reference(number=1, document_id="d1", url=url_cited, title="t")
    return Check(
        id="k",
        post=post,
        claims=(),
        evidence=(evidence,),
        verdict=Verdict(label=Label.UNVERIFIABLE, claims=()),
        correction=Correction(label=Label.UNVERIFIABLE, headline="h", references=(reference,)),
    )


def test_a_reference_to_an_unretrieved_url_fails_loudly() -> None:
    check_references(_check("https://a.example/1"))
    with pytest.raises(ReferenceInvariantError, match="not a retrieved document"):
        check_references(_check("https://elsewhere.example/made-up"))
