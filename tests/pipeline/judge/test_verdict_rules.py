"""The verdict rules: explicit evidence overrules whatever label a judge gave."""

from __future__ import annotations

import dataclasses

import pytest

from pipeline.judge.rules import enforce_rules
from pipeline.records.domain import (
    Basis,
    ClaimGraph,
    ClaimReview,
    ClaimVerdict,
    Document,
    Evidence,
    GraphConflict,
    Label,
    Passage,
    Quote,
    Stance,
    Tier,
    Verdict,
)


def _evidence(n: int, claim: str = "c1", tier: Tier = Tier.HIGH) -> Evidence:
    doc = Document(id=f"d{n}", url=f"https://news{n}.example/a", domain=f"news{n}.example",
                   title="t", text=f"passage {n}")  # fmt: skip
    return Evidence(id=f"e{n}", claim_id=claim, passage=Passage(f"p{n}", doc.id, 0, doc.text),
                    document=doc, relevance=0.8, tier=tier)  # fmt: skip


def _verdict(label: Label, *ids: str, claim: str = "c1") -> Verdict:
    return Verdict(label=label, claims=(ClaimVerdict(claim, label, "the judge's words", ids),))


EVIDENCE = [_evidence(1), _evidence(2), _evidence(3, tier=Tier.BLOCKED), _evidence(4, claim="c2")]


def test_a_label_without_credible_evidence_of_the_claim_is_unverifiable() -> None:
    for ids in ((), ("e3",), ("e4",), ("nope",)):
        out = enforce_rules(_verdict(Label.FALSE, *ids), EVIDENCE, [])

        assert out.label is Label.UNVERIFIABLE and out.claims[0].label is Label.UNVERIFIABLE


def test_a_refuting_quote_keeps_a_claim_from_accurate() -> None:
    refutes = [Quote("e2", "passage 2", Stance.REFUTES)]

    out = enforce_rules(_verdict(Label.ACCURATE, "e1"), EVIDENCE, refutes)

    # the judge read support where extraction read a refutation: unsettled, never a wrong false
    assert out.claims[0].label is Label.UNVERIFIABLE
    assert out.claims[0].basis is Basis.RULES and "does not settle" in out.claims[0].rationale
    assert out.claims[0].evidence_ids == ("e2", "e1")


def test_a_refuting_quote_beside_a_graph_conflict_makes_it_misleading() -> None:
    refutes = [Quote("e2", "passage 2", Stance.REFUTES)]
    conflict = GraphConflict("number", "5,000", "50", "e2", "another number")
    graph = ClaimGraph("c1", support=0.0, conflicts=(conflict,))

    out = enforce_rules(_verdict(Label.ACCURATE, "e1"), EVIDENCE, refutes, [graph])

    assert out.claims[0].label is Label.MISLEADING and "5,000" in out.claims[0].rationale


def test_refuting_and_supporting_quotes_make_it_misleading() -> None:
    quotes = [Quote("e2", "passage 2", Stance.REFUTES), Quote("e1", "passage 1", Stance.SUPPORTS)]

    out = enforce_rules(_verdict(Label.ACCURATE, "e1"), EVIDENCE, quotes)

    assert out.claims[0].label is Label.MISLEADING


@pytest.mark.parametrize(
    ("refuting", "supporting", "label"),
    [
        (Tier.HIGH, Tier.UNRATED, Label.UNVERIFIABLE),  # an unrated page cannot stand beside it
        (Tier.HIGH, Tier.MEDIUM, Label.UNVERIFIABLE),
        (Tier.MEDIUM, Tier.HIGH, Label.MISLEADING),
        (Tier.UNRATED, Tier.UNRATED, Label.MISLEADING),
    ],
)
def test_a_supporting_quote_stands_beside_a_refutation_only_from_as_credible_a_source(
    refuting: Tier, supporting: Tier, label: Label
) -> None:
    evidence = [_evidence(1, tier=supporting), _evidence(2, tier=refuting)]
    quotes = [Quote("e2", "passage 2", Stance.REFUTES), Quote("e1", "passage 1", Stance.SUPPORTS)]

    out = enforce_rules(_verdict(Label.ACCURATE, "e1"), evidence, quotes)

    assert out.claims[0].label is label
    assert out.claims[0].evidence_ids[0] == "e2"  # the refutation is cited first either way


def test_a_refuting_quote_from_an_uncitable_page_does_not_count() -> None:
    quotes = [Quote("e3", "passage 3", Stance.REFUTES)]

    assert enforce_rules(_verdict(Label.ACCURATE, "e1"), EVIDENCE, quotes).label is Label.ACCURATE


def test_a_graph_conflict_keeps_a_claim_from_accurate_and_names_the_part() -> None:
    conflict = GraphConflict("date", "2024", "2012", "e2", "a different year")
    graph = ClaimGraph("c1", support=0.5, conflicts=(conflict,))

    out = enforce_rules(_verdict(Label.ACCURATE, "e1"), EVIDENCE, [], [graph])

    assert out.claims[0].label is Label.MISLEADING
    assert "the claim says 2024" in out.claims[0].rationale and "2012" in out.claims[0].rationale
    assert out.claims[0].evidence_ids[0] == "e2"


def test_false_resting_only_on_supporting_quotes_is_unverifiable() -> None:
    quotes = [Quote("e1", "passage 1", Stance.SUPPORTS)]

    out = enforce_rules(_verdict(Label.FALSE, "e1"), EVIDENCE, quotes)

    assert out.claims[0].label is Label.UNVERIFIABLE


def test_a_rated_fact_check_outranks_the_stance_of_a_quote() -> None:
    review = ClaimReview("The claim.", "False", Label.FALSE, reviewer="Fact Desk")
    checked = dataclasses.replace(
        EVIDENCE[0], document=dataclasses.replace(EVIDENCE[0].document, claim_review=review)
    )
    verdict = _verdict(Label.FALSE, "e1")

    out = enforce_rules(verdict, [checked, *EVIDENCE[1:]], [Quote("e1", "p", Stance.SUPPORTS)])

    assert out is verdict


@pytest.mark.parametrize("label", [Label.ACCURATE, Label.FALSE, Label.MISLEADING])
def test_a_consistent_verdict_is_left_as_it_is(label: Label) -> None:
    stance = Stance.REFUTES if label is Label.FALSE else Stance.SUPPORTS
    verdict = _verdict(label, "e1")

    assert enforce_rules(verdict, EVIDENCE, [Quote("e1", "passage 1", stance)]) is verdict
