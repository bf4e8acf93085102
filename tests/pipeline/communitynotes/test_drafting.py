"""The note's quote bears on the claim and holds the contradicting fact (issue 52, defect 5)."""

from __future__ import annotations

import pytest

from pipeline.communitynotes.claimopinion import ClaimOpinionScorer, agreement, bucket_of
from pipeline.communitynotes.drafting import (
    CONFLICT,
    CONFLICT_SHORT,
    CONTRARY,
    FACT_CHECKED,
    bears_on,
    numbers_in,
    same_role,
)
from pipeline.util.i18n import available, translator
from pipeline.verifier.stance import StanceModel

EVEREST = "Mount Everest is 9,500 metres tall."


def test_a_quote_must_hold_the_contradicting_figure_and_name_the_claims_subject() -> None:
    stance = StanceModel()
    right = "Mount Everest is 8,849 metres tall, China and Nepal announced jointly in 2020."
    assert bears_on(EVEREST, right, stance)
    # the sentence quoted for this claim before: no bearing on the height
    assert not bears_on(
        EVEREST, "On the summit of Everest water boils at about 70 degrees.", stance
    )
    # the same figure as the claim contradicts nothing (a quote cut before the fact)
    assert not bears_on(EVEREST, "Posts say Mount Everest is 9,500 metres tall.", stance)
    # another subject, even with the claim's words and a figure
    assert not bears_on("The Eiffel Tower is 500 metres tall.", right, stance)


def test_every_catalogue_writes_the_note_in_its_own_language() -> None:
    # a note to an Italian or Russian post was written in English: the catalogues added for
    # issue 51 left the note's messages untranslated, and gettext fell back to the source
    for code in available():
        if code == "en":
            continue
        t = translator(code)
        for message in (CONFLICT, CONFLICT_SHORT, FACT_CHECKED, CONTRARY):
            assert t.translations.gettext(message) != message, (code, message)


def test_numbers_are_read_whatever_their_separators() -> None:
    assert numbers_in("9,500 and 9.500 metres") == {"9500"}
    assert numbers_in("5G networks") == set()  # a name, not a quantity


def test_claim_opinion_reads_the_pair() -> None:
    scorer = ClaimOpinionScorer(StanceModel())
    post = "Apollo 11 landed on the Moon in 1975."
    quote = "Apollo 11 landed on the Moon on 20 July 1969."
    direct = scorer.score(
        post=post,
        claim=post,
        note=f"The post says 1975, but NASA reports 20 July 1969: “{quote}” https://a.example",
        quote=quote,
    )
    assert direct.bucket == "high" and direct.states and not direct.markers
    opinion = scorer.score(
        post=post,
        claim=post,
        note="I think people who post this are ridiculous! https://a.example",
    )
    assert opinion.bucket == "low" and opinion.score < 0 and len(opinion.markers) >= 2
    off_topic = scorer.score(post=post, claim=post, note="The weather was lovely in April 2020.")
    assert off_topic.score < direct.score and off_topic.bucket != "high"


def test_agreement_compares_buckets_and_scores() -> None:
    assert bucket_of(0.5) == "high" and bucket_of(0.1) == "medium" and bucket_of(-0.01) == "low"
    same = agreement([(0.9, 0.8), (0.2, 0.3), (-0.5, -0.2)])
    assert same.notes == 3 and same.bucket_agreement == 1.0 and (same.correlation or 0) > 0.9
    apart = agreement([(0.9, -0.5), (-0.5, 0.9)])
    assert apart.bucket_agreement == 0.0 and apart.correlation is None
    assert agreement([]).bucket_agreement is None


@pytest.mark.parametrize(
    ("claim", "claimed", "sentence", "actual", "same"),
    [
        # the graph paired "United Kingdom" with the statue's recipient, not its giver
        (
            "The Statue of Liberty was a gift from the United Kingdom.",
            "United Kingdom",
            "The Statue of Liberty was a gift from the people of France to the United States.",
            "United States",
            False,
        ),
        (
            "The Statue of Liberty was a gift from the United Kingdom.",
            "United Kingdom",
            "The Statue of Liberty was a gift from the people of France to the United States.",
            "France",
            True,
        ),
        ("The Eiffel Tower is in Berlin.", "Berlin", "The tower is in Paris.", "Paris", True),
        # figures and dates are worded too freely to compare the word before them
        ("Apollo 11 landed in 1975.", "1975", "It landed on 20 July 1969.", "20 July 1969", True),
    ],
)
def test_a_correction_names_what_stands_where_the_claim_s_name_stands(
    claim: str, claimed: str, sentence: str, actual: str, same: bool
) -> None:
    assert same_role(claim, claimed, sentence, actual) is same
