"""Which passages bear on a claim, why a claim is left open, and question-answer evidence.

Issue 51: a credible page stating a claim (relevance 0.87, support 0.94) was vetoed by a
passage that shares only a phrase with it (relevance 0.40, read as refutation 0.64), and the
reply then said no evidence was found. The traced case is rebuilt here on the shipped model.
"""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from pipeline.records.domain import Basis, Claim, Document, Evidence, Label, Passage, Tier
from pipeline.verifier import frames
from pipeline.verifier.stance import PassageStance, StanceModel
from pipeline.verifier.verdict import (
    Reading,
    Thresholds,
    VerifierJudge,
    bearing,
    evidence_form,
    on_scale,
    open_reason,
)

CLAIM = "Mount Everest is the highest mountain above sea level."
PAGE = (
    "Mount Everest, on the border between Nepal and China, is Earth's highest mountain above "
    "sea level, with a summit 8,849 metres high."
)
PHRASE = (
    "The highest mountain pass road in Europe climbs to 2,770 metres in the French Alps and is "
    "open only in summer."
)


def _evidence(n: int, text: str, relevance: float) -> Evidence:
    doc = Document(id=f"d{n}", url=f"https://site{n}.example/a", domain=f"site{n}.example",
                   title="t", text=text)  # fmt: skip
    return Evidence(id=f"e{n}", claim_id="c1", passage=Passage(f"p{n}", doc.id, 0, text),
                    document=doc, relevance=relevance, tier=Tier.UNRATED)  # fmt: skip


@pytest.fixture(scope="module")
def model() -> StanceModel:
    return StanceModel()


def _decide(model: StanceModel, thresholds: Thresholds, evidence: list[Evidence]) -> Label:
    judge = VerifierJudge(model, thresholds=thresholds)
    claim = Claim(id="c1", post_id="p", position=0, text=CLAIM)
    decided = asyncio.run(judge.decide([claim], evidence))
    return decided.verdict.claims[0].label


def test_a_passage_sharing_only_a_phrase_does_not_veto_the_page_that_states_it(
    model: StanceModel,
) -> None:
    evidence = [_evidence(1, PAGE, 0.87), _evidence(2, PHRASE, 0.40)]
    assert _decide(model, Thresholds(), evidence) is Label.ACCURATE
    # the phrase is read as a refutation: without the bearing rule it vetoes the support
    open_rule = dataclasses.replace(Thresholds(), margin=1.0, coverage=0.0)
    assert _decide(model, open_rule, evidence) is not Label.ACCURATE
    # alone, an unrelated passage decides nothing
    assert _decide(model, Thresholds(), [_evidence(2, PHRASE, 0.40)]) is not Label.FALSE


def test_a_refutation_as_relevant_as_the_support_still_vetoes() -> None:
    t = Thresholds(support=0.8, refute=0.8, veto=0.5, margin=0.15, coverage=0.5)
    assert bearing([0.87, 0.80], [1.0, 0.8], t) == [True, True]
    assert bearing([0.87, 0.40], [1.0, 0.8], t) == [True, False]  # far less relevant
    assert bearing([0.87, 0.86], [1.0, 0.25], t) == [True, False]  # without the claim's words


def _reading(s: float, r: float) -> Reading:
    return Reading("e1", PassageStance((s, r, max(0.0, 1 - s - r)), "q", 0, 1))


@pytest.mark.parametrize(
    ("readings", "passages", "why"),
    [
        ([], [], Basis.NO_EVIDENCE),
        ([_reading(0.9, 0.6)], ["Everest is 8,849 m high."], Basis.CONTESTED),
        (
            [_reading(0.3, 0.1)],
            ["Posts shared online say Everest is the highest mountain."],
            Basis.REPORTS,
        ),
        ([_reading(0.3, 0.1)], ["Everest was first climbed in 1953."], Basis.VERIFIER),
    ],
)
def test_a_claim_left_open_says_truly_why(
    readings: list[Reading], passages: list[str], why: Basis
) -> None:
    t = Thresholds(support=0.8, refute=0.8, veto=0.5)
    claim = "Everest is the highest mountain."
    assert open_reason(claim, readings, passages, t) is why


def test_a_page_that_only_reports_the_claim_is_not_support() -> None:
    claim = "Eating garlic every day cures high blood pressure."
    for page in (
        "A widely shared video says that eating garlic every day cures high blood pressure.",
        "Readers have sent us a post saying daily garlic cures high blood pressure.",
    ):
        assert frames.reported(claim, page) is not None
    for page in (
        "Eating garlic every day cures high blood pressure, a clinical trial found.",
        "Eating garlic every day cures high blood pressure, according to the health agency.",
        "A post says eating garlic every day cures high blood pressure, which is true.",
    ):
        assert frames.reported(claim, page) is None
    # a claim about what was said is left to the model
    assert frames.reported("A viral post says garlic cures cancer.", "A viral post says "
                           "garlic cures cancer.") is None  # fmt: skip


def test_question_answer_evidence_is_read_at_its_own_thresholds() -> None:
    assert evidence_form("Did the WHO approve it? No. It was never approved.") == "qa"
    assert evidence_form("The WHO approved it in 2021. It is in use.") == "prose"
    t = Thresholds(support=0.8, refute=0.7, qa_support=0.95, qa_refute=0.9)
    reading = PassageStance((0.95, 0.9, 0.0), "q", 0, 1)
    assert on_scale(reading, "prose", t) == (0.95, 0.9)
    s, r = on_scale(reading, "qa", t)
    assert s == pytest.approx(0.8) and r == pytest.approx(0.7)
    # below its own threshold a question-answer reading stays below the prose one
    low = on_scale(PassageStance((0.9, 0.5, 0.0), "q", 0, 1), "qa", t)
    assert low[0] < 0.8 and low[1] < 0.7


def _bearing(first: tuple[str, float], second: tuple[str, float]) -> list[str]:
    """Return the ids of the two passages (e1, e2) that bear on CLAIM, both read as refuting."""
    judge = VerifierJudge(StanceModel(), thresholds=Thresholds())
    claim = Claim(id="c1", post_id="p", position=0, text=CLAIM)
    evidence = [_evidence(1, *first), _evidence(2, *second)]
    stance = PassageStance((0.1, 0.85, 0.05), "q", 0, 1)
    readings = [Reading("e1", stance), Reading("e2", stance)]
    found = judge.bearing_readings(claim, readings, {e.id: e for e in evidence})
    return [r.evidence_id for r in found]


def test_question_answer_evidence_bears_without_repeating_the_claim_s_words() -> None:
    """An annotator's question and its answer are about the claim they ask (AVeriTeC's form):
    they bear on it though the answer rarely repeats its words; a prose passage that does not
    hold them is left out."""
    qa = "Is Everest the highest? The records show a height of 8,849 metres."
    prose = "The records show a height of 8,849 metres for the summit."
    assert frames.coverage(CLAIM, qa) < Thresholds().coverage
    assert _bearing((qa, 0.9), (prose, 0.9)) == ["e1"]


def test_a_page_opening_on_another_question_does_not_bear() -> None:
    """A web page may open on a question of its own ("Who invented the telephone?"): read as
    question-answer evidence, it bears only when its question is about the claim."""
    page = "Who invented the telephone? It was patented by Alexander Graham Bell in 1876."
    assert evidence_form(page) == "qa"
    assert _bearing((PAGE, 0.8), (page, 0.3)) == ["e1"]
