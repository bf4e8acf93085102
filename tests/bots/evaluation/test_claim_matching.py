"""The claim-matching report: CheckThat!'s MAP@k, the decision's precision and coverage."""

from __future__ import annotations

from bots.evaluation.claim_matching import MatchingOutcome, MatchingPost, score
from pipeline.records.domain import Label
from pipeline.records.factchecks import FactCheck, FactCheckMatch


def _match(url: str, *, accepted: bool, label: Label | None = None) -> FactCheckMatch:
    review = FactCheck(url=url, claim_reviewed="c", publisher="P", label=label)
    return FactCheckMatch(review, score=1.0, accepted=accepted)


def test_map_precision_coverage_and_agreement() -> None:
    outcomes = [
        MatchingOutcome(  # gold first, accepted, its label agrees
            MatchingPost("1", "t", ("a",)),
            (_match("a", accepted=True, label=Label.FALSE), _match("b", accepted=False)),
        ),
        MatchingOutcome(  # gold second: AP@5 = 1/2, a wrong match accepted
            MatchingPost("2", "t", ("a",)),
            (_match("b", accepted=True, label=Label.ACCURATE), _match("a", accepted=False)),
        ),
        MatchingOutcome(MatchingPost("3", "t", ("a",)), (), error="RuntimeError: boom"),
        MatchingOutcome(MatchingPost("4", "t", ("z",)), (_match("y", accepted=False),)),
    ]
    report = score(outcomes, drop_gold=False, gold_labels={"a": Label.FALSE})
    assert report["posts"] == 4 and report["errors"] == 1
    assert report["map_at_1"] == 0.25
    assert report["map_at_5"] == round((1 + 0.5) / 4, 4)
    assert report["recall_at_5"] == 0.5
    assert report["match_coverage"] == 0.5 and report["match_precision"] == 0.5
    assert report["verdict_agreement"] == 0.5  # one agrees (false), one does not (accurate)
    assert report["false_match_rate"] is None
    low, high = report["intervals"]["match_coverage"]
    assert low < 0.5 < high


def test_with_the_gold_dropped_every_accepted_match_is_false() -> None:
    outcomes = [
        MatchingOutcome(MatchingPost("1", "t", ("a",)), (_match("b", accepted=True),)),
        MatchingOutcome(MatchingPost("2", "t", ("a",)), (_match("c", accepted=False),)),
    ]
    report = score(outcomes, drop_gold=True, gold_labels={})
    assert report["false_match_rate"] == 0.5
    assert report["match_precision"] is None and report["verdict_agreement"] is None
