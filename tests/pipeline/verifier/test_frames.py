"""Debunking frames read in code: a page that repeats a claim to deny it refutes it."""

from __future__ import annotations

import pytest

from pipeline.verifier.frames import FRAME_REFUTES, find, reread, reversed_roles
from pipeline.verifier.stance import PassageStance

CLAIM = "Vaccines cause autism in young children."

DEBUNKING = [
    "The claim that vaccines cause autism in young children is false, fact-checkers found.",
    "Myth: vaccines cause autism in young children. Fact: dozens of studies found no link.",
    "Vaccines cause autism in young children? Our verdict: false.",
    "Claim: vaccines cause autism in young children. Rating: Pants on Fire.",
    "There is no evidence that vaccines cause autism in young children.",
    "The idea that vaccines cause autism in young children has been debunked many times.",
    "Posts falsely claim that vaccines cause autism in young children.",
    "That vaccines cause autism in young children is a myth; the study behind it was retracted.",
    "It is not true that vaccines cause autism in young children, the WHO said.",
    "Do vaccines cause autism in young children? No. Large studies found no link.",
]

NOT_DEBUNKING = [
    # repeated without a verdict: neither side
    "According to a Facebook post, vaccines cause autism in young children.",
    "Readers asked us whether vaccines cause autism in young children.",
    "Vaccines cause autism in young children?",
    "Do vaccines cause autism in young children? Nobody has shown it.",
    "Do vaccines cause autism in young children? No, but some parents still worry.",
    # a ruling on a detail, not on the claim (an AVeriTeC dev claim turned false by it)
    "Do vaccines cause autism in young children? The only thing in the post that is incorrect"
    " is a typo.",
    # the claim stated plainly, or confirmed
    "Vaccines cause autism in young children, the report says.",
    # a cue about something else in another sentence
    "Vaccines cause autism in young children. A false alarm closed the school on Monday.",
    # the cue denied
    "It is not false that vaccines cause autism in young children.",
    # the opposite claim is the one called false
    "The claim that vaccines do not cause autism in young children is false.",
    # a debunk of another claim sharing words
    "The myth that vaccines contain microchips has been debunked.",
]


@pytest.mark.parametrize("passage", DEBUNKING)
def test_a_page_that_denies_the_claim_it_repeats_is_a_frame(passage: str) -> None:
    frame = find(CLAIM, passage)
    assert frame is not None, passage
    assert passage[frame.start : frame.end]


@pytest.mark.parametrize("passage", NOT_DEBUNKING)
def test_repeating_or_confirming_a_claim_is_no_frame(passage: str) -> None:
    assert find(CLAIM, passage) is None


@pytest.mark.parametrize(
    ("claim", "passage"),
    [
        (
            "Las vacunas causan autismo en niños pequeños.",
            "La afirmación de que las vacunas causan autismo en niños pequeños es falsa.",
        ),
        (
            "Impfungen verursachen Autismus bei kleinen Kindern.",
            "Dass Impfungen Autismus bei kleinen Kindern verursachen, ist eine Falschmeldung.",
        ),
        (
            "Les vaccins provoquent l'autisme chez les jeunes enfants.",
            "L'idée que les vaccins provoquent l'autisme chez les jeunes enfants est fausse.",
        ),
    ],
)
def test_frames_in_other_languages(claim: str, passage: str) -> None:
    assert find(claim, passage) is not None


def test_a_claim_about_a_debunk_is_never_refuted_by_the_debunk() -> None:
    claim = "Fact-checkers said the photo of a shark on the highway was fake."
    assert find(claim, "The photo of a shark on the highway is fake, fact-checkers said.") is None


def test_a_debunk_naming_another_place_does_not_refute_the_true_claim() -> None:
    passage = (
        "The conspiracy theory that Barack Obama was born in Kenya has been debunked; "
        "he was born in Honolulu, Hawaii."
    )
    assert find("Barack Obama was born in Hawaii.", passage) is None
    assert find("Barack Obama was born in Kenya.", passage) is not None


def test_a_claim_of_one_content_word_is_not_matched() -> None:
    assert find("Autism.", "Autism is a myth.") is None


def _reading(supports: float, refutes: float, passage: str) -> PassageStance:
    return PassageStance((supports, refutes, 1.0 - supports - refutes), passage, 0, len(passage))


def test_reread_turns_a_framed_page_into_a_refutation_without_support() -> None:
    passage = "Myth: vaccines cause autism in young children. Fact: they do not."
    [read] = reread(CLAIM, [passage], [_reading(0.97, 0.01, passage)])
    assert read.supports == 0.0
    assert read.refutes == FRAME_REFUTES
    assert read.quote == passage[read.start : read.end]
    assert "Myth" in read.quote


def test_reread_keeps_a_stronger_model_refutation_and_unframed_pages() -> None:
    framed = "The claim that vaccines cause autism in young children is false."
    plain = "Vaccines are tested for years before approval."
    stronger = _reading(0.0, 0.99, framed)
    untouched = _reading(0.4, 0.3, plain)
    got = reread(CLAIM, [framed, plain], [stronger, untouched])
    assert got[0].refutes == 0.99 and got[0].supports == 0.0
    assert got[1] is untouched


FINAL = "Naomi Osaka defeated Serena Williams 6-2, 6-4 in the 2018 US Open women's final."


@pytest.mark.parametrize(
    ("claim", "reversed_"),
    [
        ("Serena Williams won the 2018 US Open women's final.", True),
        ("Naomi Osaka lost the 2018 US Open women's final to Serena Williams.", True),
        ("Naomi Osaka won the 2018 US Open women's final.", False),
        ("Serena Williams lost the 2018 US Open women's final.", False),
        # another event: the year differs, so the roles are not compared
        ("Serena Williams won the 2014 US Open women's final.", False),
        # no roles in the claim
        ("The 2018 US Open women's final was played in New York.", False),
    ],
)
def test_roles_reversed_only_for_the_same_event(claim: str, reversed_: bool) -> None:
    assert (reversed_roles(claim, FINAL) is not None) is reversed_


def test_a_reversed_winner_refutes_even_where_the_model_reads_support() -> None:
    claim = "Serena Williams won the 2018 US Open women's final."
    [read] = reread(claim, [FINAL], [_reading(0.98, 0.01, FINAL)])
    assert read.supports == 0.0 and read.refutes == FRAME_REFUTES
