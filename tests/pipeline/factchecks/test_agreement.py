"""The match decision's checks beyond similarity: negation, direction, numbers, years."""

from __future__ import annotations

import pytest

from pipeline.factchecks.agreement import disagreements


@pytest.mark.parametrize(
    ("claim", "reviewed", "reason"),
    [
        ("Biden won the 2020 election.", "Biden lost the 2020 election.", "opposite direction"),
        ("Vaccines cause autism.", "Vaccines do not cause autism.", "negation differs"),
        ("Unemployment rose to 8 percent.", "Unemployment rose to 12 percent.", "numbers differ"),
        (
            "Trump won the 2016 election by a landslide.",
            "Trump won the 2020 election.",
            "years differ",
        ),
        (
            "El desempleo aumentó este año.",
            "El desempleo disminuyó este año.",
            "opposite direction",
        ),
        ("Le vaccin ne protège pas.", "Le vaccin protège.", "negation differs"),
    ],
)
def test_a_different_claim_is_refused(claim: str, reviewed: str, reason: str) -> None:
    assert reason in disagreements(claim, reviewed)


@pytest.mark.parametrize(
    ("claim", "reviewed"),
    [
        ("Biden won the election in 2020!!", "Joe Biden won the 2020 presidential election."),
        ("Drinking bleach cures COVID", "Drinking bleach cures COVID-19."),
        ("1,500 people died", "1500 people died in the flood."),
        (
            "McDonald's offers $1 fries of any size",
            "McDonald's restaurants offer $1 Any Size Fries.",
        ),
        ("The post said it 3 times in 2019", "A post claimed it in 2019."),
    ],
)
def test_the_same_claim_in_other_words_passes(claim: str, reviewed: str) -> None:
    assert disagreements(claim, reviewed) == ()
