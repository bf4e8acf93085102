"""The verifier's verdicts: thresholds in code over the shipped stance model's readings.

The decision rule is checked on numbers; the shipped model on passages whose stance a reader
sees at once (it must get these right to be shipped); the hybrid arbiter on both.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from pipeline.records.domain import (
    Basis,
    Claim,
    ClaimVerdict,
    Document,
    Evidence,
    Label,
    Passage,
    Stance,
    Tier,
    Verdict,
)
from pipeline.verifier.stance import PassageStance, StanceModel, bundled_model_dir
from pipeline.verifier.verdict import (
    Costs,
    Reading,
    Thresholds,
    VerifierJudge,
    deciding,
    label_from,
    settle,
)
from tests.conftest import FIXTURES

T = Thresholds(support=0.6, refute=0.5, mixed=0.4)


@pytest.mark.parametrize(
    ("support", "refute", "label"),
    [
        (0.9, 0.1, Label.ACCURATE),
        (0.1, 0.8, Label.FALSE),
        (0.7, 0.45, Label.ACCURATE),  # refutation under its threshold
        (0.7, 0.6, Label.MISLEADING),  # both sides credible
        (0.2, 0.2, Label.UNVERIFIABLE),
        (0.59, 0.49, Label.UNVERIFIABLE),
    ],
)
def test_label_from_thresholds(support: float, refute: float, label: Label) -> None:
    assert label_from(support, refute, T) is label


@pytest.mark.parametrize(
    ("support", "refute", "label"),
    [
        (0.9, 0.1, Label.ACCURATE),  # nothing refutes: endorsed
        (0.9, 0.3, Label.UNVERIFIABLE),  # strong support, but a refutation reaches the veto
        (0.9, 0.55, Label.MISLEADING),  # both sides credible: misleading, never accurate
        (0.3, 0.9, Label.FALSE),
    ],
)
def test_accurate_needs_support_and_no_refutation_at_the_veto(
    support: float, refute: float, label: Label
) -> None:
    t = Thresholds(support=0.6, refute=0.5, mixed=0.5, veto=0.25)
    assert label_from(support, refute, t) is label
    # without a veto the first two are endorsed (the symmetric rule of earlier models)
    open_rule = dataclasses.replace(t, veto=1.01)
    assert label_from(0.9, 0.3, open_rule) is Label.ACCURATE


def test_the_costly_errors_cost_more_than_declining_to_decide() -> None:
    costs = Costs()
    assert costs.of(Label.FALSE, Label.FALSE) == 0.0
    endorse, condemn = costs.of(Label.FALSE, Label.ACCURATE), costs.of(Label.ACCURATE, Label.FALSE)
    declined = costs.of(Label.FALSE, Label.UNVERIFIABLE)
    other = costs.of(Label.FALSE, Label.MISLEADING)
    assert endorse > other >= declined > 0 and condemn > other
    assert costs.of(Label.MISLEADING, Label.ACCURATE) == costs.wrong


def test_one_side_barely_over_mixed_lets_the_stronger_side_decide() -> None:
    t = Thresholds(support=0.5, refute=0.5, mixed=0.8, veto=1.01)
    assert label_from(0.95, 0.6, t) is Label.ACCURATE
    assert label_from(0.6, 0.95, t) is Label.FALSE
    assert label_from(0.85, 0.9, t) is Label.MISLEADING


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        (Label.FALSE, 0.7),
        (Label.ACCURATE, 0.3),
        (Label.MISLEADING, 0.7),
        (Label.UNVERIFIABLE, 0.0),
        (Label.PARTLY_ACCURATE, 0.0),
    ],
)
def test_a_label_rests_on_the_probability_of_its_side(label: Label, expected: float) -> None:
    assert deciding(label, support=0.3, refute=0.7) == expected


def _evidence(n: int, text: str, claim: str = "c1", tier: Tier = Tier.HIGH) -> Evidence:
    doc = Document(id=f"d{n}", url=f"https://news{n}.example/a", domain=f"news{n}.example",
                   title="t", text=text)  # fmt: skip
    return Evidence(id=f"e{n}", claim_id=claim, passage=Passage(f"p{n}", doc.id, 0, text),
                    document=doc, relevance=0.8, tier=tier)  # fmt: skip


@pytest.fixture(scope="module")
def judge() -> VerifierJudge:
    return VerifierJudge(StanceModel(), thresholds=Thresholds())


def test_models_of_the_same_files_share_one_load(tmp_path: Path) -> None:
    """Every App builds its own StanceModel; the process loads each model's files once."""
    first, second = StanceModel(), StanceModel()
    assert first._load()[0] is second._load()[0]
    assert StanceModel(threads=1)._load()[0] is not first._load()[0]
    copy = tmp_path / "model"
    shutil.copytree(bundled_model_dir(), copy)
    assert StanceModel(copy)._load()[0] is not first._load()[0]  # another directory


def _claim(text: str, cid: str = "c1") -> Claim:
    return Claim(id=cid, post_id="p", position=0, text=text)


def test_the_shipped_model_supports_refutes_and_ignores_unrelated_text(
    judge: VerifierJudge,
) -> None:
    supported = _claim("The Eiffel Tower is in Paris.", "c1")
    refuted = _claim("The Eiffel Tower is in Berlin.", "c2")
    unrelated = _claim("Bananas are rich in potassium.", "c3")
    page = (
        "The city council met on Monday. The Eiffel Tower is a wrought-iron lattice tower in "
        "Paris, France. It was completed in 1889."
    )
    evidence = [_evidence(1, page, "c1"), _evidence(2, page, "c2"), _evidence(3, page, "c3")]
    decided = asyncio.run(judge.decide([supported, refuted, unrelated], evidence))
    labels = [cv.label for cv in decided.verdict.claims]
    assert labels == [Label.ACCURATE, Label.FALSE, Label.UNVERIFIABLE]
    assert decided.verdict.label is Label.PARTLY_ACCURATE
    for quote in decided.quotes:
        assert quote.text in page and "Paris" in quote.text  # the deciding sentence, verbatim
    assert {q.stance for q in decided.quotes} == {Stance.SUPPORTS, Stance.REFUTES}
    # the page is not about bananas: it does not bear on that claim (issue 51), so nothing was
    # found about it, which is what its reply says
    assert [cv.basis for cv in decided.verdict.claims] == [
        Basis.VERIFIER,
        Basis.VERIFIER,
        Basis.NO_EVIDENCE,
    ]
    assert decided.verdict.claims[2].evidence_ids == ()  # nothing decisive is cited
    stances = {e.id: e.stance for e in decided.evidence}
    assert stances == {"e1": Stance.SUPPORTS, "e2": Stance.REFUTES, "e3": Stance.UNKNOWN}


def test_evidence_that_may_not_be_cited_is_not_read(judge: VerifierJudge) -> None:
    claim = _claim("The Eiffel Tower is in Berlin.")
    blocked = _evidence(1, "The Eiffel Tower is in Paris, France.", tier=Tier.BLOCKED)
    decided = asyncio.run(judge.decide([claim], [blocked]))
    assert decided.readings == ()
    [cv] = decided.verdict.claims
    assert cv.label is Label.UNVERIFIABLE and cv.basis is Basis.NO_EVIDENCE


def test_the_same_input_gives_the_same_verdict(judge: VerifierJudge) -> None:
    claim = _claim("The Eiffel Tower was completed in 1889.")
    evidence = [_evidence(1, "Work on the tower ended in March 1889, in time for the fair.")]
    first = asyncio.run(judge.decide([claim], evidence))
    second = asyncio.run(judge.decide([claim], evidence))
    assert first.verdict == second.verdict and first.readings == second.readings


def test_hybrid_settles_only_confident_disagreements(judge: VerifierJudge) -> None:
    claim = _claim("The Eiffel Tower is in Berlin.")
    evidence = [_evidence(1, "The Eiffel Tower is a wrought-iron lattice tower in Paris.")]
    decided = asyncio.run(judge.decide([claim], evidence))
    assert decided.verdict.claims[0].label is Label.FALSE
    model = Verdict(Label.ACCURATE, (ClaimVerdict("c1", Label.ACCURATE, "model", ("e1",)),))
    strength = decided.readings[0].stance.refutes
    settled, changed = settle(model, decided, Thresholds(confident=strength - 0.01))
    assert changed == ["c1"] and settled.claims[0].label is Label.FALSE
    kept, unchanged = settle(model, decided, Thresholds(confident=min(1.0, strength + 0.01)))
    assert unchanged == [] and kept == model


def test_a_confident_of_one_never_overrules_the_model(judge: VerifierJudge) -> None:
    claim = _claim("The Eiffel Tower is in Berlin.")
    evidence = [_evidence(1, "The Eiffel Tower is a wrought-iron lattice tower in Paris.")]
    decided = asyncio.run(judge.decide([claim], evidence))
    reading = decided.readings[0]
    certain = PassageStance((0.0, 1.0, 0.0), reading.stance.quote, 0, len(reading.stance.quote))
    decided = dataclasses.replace(decided, readings=(Reading(reading.evidence_id, certain),))
    model = Verdict(Label.ACCURATE, (ClaimVerdict("c1", Label.ACCURATE, "model", ("e1",)),))
    assert settle(model, decided, Thresholds(confident=0.99))[1] == ["c1"]
    assert settle(model, decided, Thresholds(confident=1.0)) == (model, [])


def _contrast_items() -> list[dict[str, str]]:
    path = FIXTURES / "verifier" / "contrast.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_the_who_page_refutes_the_bleach_claim_without_its_rating() -> None:
    # the WHO myth-buster as the corpus holds it, its ClaimReview markup left out
    [row] = [
        json.loads(line)
        for line in (FIXTURES / "corpus.jsonl").read_text().splitlines()
        if "myth-busters/bleach" in line
    ]
    page = f"{row['title']}. {row['text']}"
    judge = VerifierJudge(StanceModel(), thresholds=Thresholds())
    decided = asyncio.run(
        judge.decide(
            [_claim("Drinking bleach protects you against COVID-19.")], [_evidence(1, page)]
        )
    )
    assert decided.verdict.label is Label.FALSE


# The stance model alone endorsed two of these (docs/results/2026-12-05-verifier-contrast.md):
# a page naming the winner over the claimed one, and a myth-buster whose "Myth: <claim>. Fact:
# ..." it read as support; frames read in code (pipeline.verifier.frames) now refute both.
KNOWN_ENDORSED: set[str] = set()


def test_contrasted_claims_are_caught_and_none_newly_endorsed() -> None:
    # credible passages naming another winner, number, date or place, negating or debunking
    # the claim (hand-written; `python -m bench.restatement` reports the same set by kind)
    judge = VerifierJudge(StanceModel(), thresholds=Thresholds())
    items = _contrast_items()
    claims = [_claim(item["claim"], f"c{i}") for i, item in enumerate(items)]
    evidence = [_evidence(i, item["passage"], f"c{i}") for i, item in enumerate(items)]
    decided = asyncio.run(judge.decide(claims, evidence))
    labels = {cv.claim_id: cv.label for cv in decided.verdict.claims}
    false_ones = [f"c{i}" for i, item in enumerate(items) if item["expected"] == "false"]
    endorsed = {items[int(c[1:])]["claim"] for c in false_ones if labels[c] is Label.ACCURATE}
    assert endorsed <= KNOWN_ENDORSED
    caught = sum(labels[c] is Label.FALSE for c in false_ones)
    assert caught >= len(false_ones) // 2  # 11 of 22 when shipped
    true_ones = [f"c{i}" for i, item in enumerate(items) if item["expected"] == "accurate"]
    assert not any(labels[c] is Label.FALSE for c in true_ones)
