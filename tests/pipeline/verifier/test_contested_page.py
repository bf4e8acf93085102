"""A page that states a claim in one sentence and contradicts it in another never endorses it.

Issue 51: on the web-evidence bench (`python -m bench.web_evidence`) debunking pages were read
as support: "The liner that sank in 1915 was the Lusitania." made "The Titanic sank in 1915."
accurate though the page's first sentence puts the sinking in 1912: the passage's stance was its
most decisive reading alone, so the contradicting sentence was dropped. It now counts where it
is about the claim (`frames.contradicted`). Written for this test, on the shipped model (other
claims and pages than the bench's).
"""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from pipeline.records.domain import Claim, Document, Evidence, Label, Passage, Tier
from pipeline.verifier import frames
from pipeline.verifier.stance import PassageStance, StanceModel
from pipeline.verifier.verdict import VerifierJudge

BERLIN = (
    "When the Berlin Wall fell. The Berlin Wall was opened on the night of 9 November 1989, and "
    "crowds began to tear it down. The state that came to an end in 1991 was the Soviet Union, "
    "which dissolved in December of that year."
)
EIFFEL = (
    "The Eiffel Tower. The tower was built as the entrance arch of the 1889 World's Fair in "
    "Paris. The 1900 World's Fair in Paris gave the city the Grand Palais and the first line of "
    "the Métro."
)


@pytest.fixture(scope="module")
def model() -> StanceModel:
    return StanceModel()


def _decide(model: StanceModel, claim: str, page: str) -> tuple[Label, str]:
    doc = Document(id="d1", url="https://ref.example/a", domain="ref.example", title="t",
                   text=page)  # fmt: skip
    evidence = Evidence(id="e1", claim_id="c1", passage=Passage("p1", doc.id, 0, page),
                        document=doc, relevance=0.8, tier=Tier.UNRATED)  # fmt: skip
    claims = [Claim(id="c1", post_id="p", position=0, text=claim)]
    decided = asyncio.run(VerifierJudge(model).decide(claims, [evidence]))
    verdict = decided.verdict.claims[0]
    return verdict.label, decided.quotes[0].text if decided.quotes else ""


@pytest.mark.parametrize(
    ("claim", "page"),
    [
        ("The Berlin Wall fell in 1991.", BERLIN),
        ("The Eiffel Tower was built for the 1900 World's Fair.", EIFFEL),
    ],
)
def test_a_page_that_also_contradicts_the_claim_does_not_make_it_accurate(
    model: StanceModel, claim: str, page: str
) -> None:
    # the model reads another sentence of the page as support (0.97): the one that contradicts
    # the claim is kept as the page's refutation, and vetoes it
    reading = frames.read(model, claim, [page])[0]
    assert reading.supports >= 0.9
    assert reading.refutes >= 0.5
    assert reading.against and reading.against in page
    label, _ = _decide(model, claim, page)
    assert label is not Label.ACCURATE


def test_a_page_that_states_the_claim_still_makes_it_accurate(model: StanceModel) -> None:
    label, quote = _decide(model, "The Berlin Wall was opened in November 1989.", BERLIN)
    assert label is Label.ACCURATE
    assert "9 November 1989" in quote


def test_a_contradicting_sentence_about_something_else_is_not_counted() -> None:
    claim = "Tomatoes are botanically a fruit."
    stated = PassageStance((0.97, 0.01, 0.02), "Botanically, a tomato is a fruit.", 0, 33)
    offered = dataclasses.replace(
        stated, against="In cooking, however, it is usually treated as a vegetable.",
        against_refutes=0.74,
    )  # fmt: skip
    kept = frames.contradicted(claim, offered)
    assert (kept.supports, kept.refutes, kept.against) == (0.97, 0.01, "")
    about = dataclasses.replace(offered, against="Tomatoes are not a fruit, botanically.")
    counted = frames.contradicted(claim, about)
    assert (counted.supports, counted.refutes) == (0.97, 0.74)
    assert counted.against == "Tomatoes are not a fruit, botanically."
