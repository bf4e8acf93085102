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


@pytest.mark.parametrize(
    ("claim", "reviewed", "headline"),
    [
        # the post repeats the headline's correction, not the figure the review rated
        (
            "La torre Eiffel mide 330 metros de altura.",
            "La torre Eiffel mide 500 metros de altura.",
            "La torre Eiffel mide 330 metros, no 500",
        ),
        (
            "The bridge was finished in 1932.",
            "The bridge was finished in 1950.",
            "No, the bridge was not finished in 1950: it opened in 1932",
        ),
    ],
)
def test_a_headline_correcting_the_review_does_not_make_the_true_figure_match(
    claim: str, reviewed: str, headline: str
) -> None:
    assert disagreements(claim, reviewed, headline)


def test_the_headline_gives_the_figures_where_the_reviewed_claim_has_none() -> None:
    reviewed = "A viral post about the bridge's cost is wrong."
    headline = "No, the bridge did not cost $10 billion"
    assert "numbers differ" in disagreements("The bridge cost $4 billion.", reviewed, headline)
    assert "numbers differ" not in disagreements("The bridge cost $10 billion.", reviewed, headline)
