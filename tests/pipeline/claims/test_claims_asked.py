"""A post that asks is checked as the statement it asks about (issue 51)."""

from __future__ import annotations

import asyncio

import pytest

from pipeline.claims.asked import statement
from pipeline.claims.heuristic import extract_claims
from pipeline.errors import EmptyPostError
from pipeline.inputs.posts import post_from_text


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("Can masks stop the flu?", "Masks can stop the flu."),
        ("Is the Eiffel Tower in Paris?", "The Eiffel Tower is in Paris."),
        ("Did the Titanic sink in 1912?", "The Titanic did sink in 1912."),
        ("Do vaccines cause autism?", "Vaccines do cause autism."),
        ("Is it true that 5G spreads the coronavirus?", "5G spreads the coronavirus."),
        ("Will the new law ban cats from flats?", "The new law will ban cats from flats."),
    ],
)
def test_a_yes_no_question_is_read_as_its_statement(question: str, said: str) -> None:
    assert statement(question) == said


@pytest.mark.parametrize(
    "text",
    [
        "Can I get a refund?",  # about the writer
        "Did you see this?",  # about the reader
        "Why is nobody talking about this?",  # an open question
        "Is it going to rain tomorrow?",  # a prediction: nothing to check yet
        "Are prices going to fall next year?",
        "Masks can stop the flu.",  # not a question
        "¿Pueden las mascarillas detener la gripe?",  # not English
    ],
)
def test_other_sentences_are_no_statement(text: str) -> None:
    assert statement(text) is None


def test_a_post_that_only_asks_is_checked_not_dropped() -> None:
    post = post_from_text("Can masks stop the flu?", max_chars=2000)
    claims = asyncio.run(extract_claims(post))
    assert [c.text for c in claims] == ["Masks can stop the flu."]
    with pytest.raises(EmptyPostError):
        asyncio.run(extract_claims(post_from_text("Did you see this?", max_chars=2000)))
