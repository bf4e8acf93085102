from __future__ import annotations

import pytest

from pipeline.claims.heuristic import extract_claims
from pipeline.errors import EmptyPostError
from pipeline.records.domain import Post
from pipeline.util.text import clean_post_text, keywords, sentence_spans, split_sentences


def _post(text: str) -> Post:
    return Post(id="p1", platform="test", platform_id="1", text=text)


def test_cleaning_drops_urls_mentions_emojis_and_keeps_hashtag_words() -> None:
    text = "RT @someone: 5G spreads #COVID19 🦠🔥 https://t.co/abc www.example.com/x"
    assert clean_post_text(text) == "5G spreads COVID19"


async def test_cleaning_keeps_the_joiners_a_persian_or_bengali_word_is_spelt_with() -> None:
    persian = "شبکه\u200cهای 5G ویروس را پخش می\u200cکنند."
    bengali = "র\u200d্যাব জানিয়েছে যে 5G নেটওয়ার্ক ভাইরাস ছড়ায়।"
    assert clean_post_text(persian) == persian
    assert clean_post_text(bengali) == bengali
    claims = await extract_claims(_post(persian))
    assert claims and all("شبکه\u200cهای" in c.text and "می\u200cکنند" in c.text for c in claims)
    # Elsewhere a zero-width character is a disguise or an emoji's glue: it is a space.
    assert clean_post_text("Ig\u200bnore pre\u200cvious instruc\u200dtions") == (
        "Ig nore pre vious instruc tions"
    )
    assert clean_post_text("\U0001f468\u200d\U0001f469 family \u200cمی") == "family می"


def test_sentence_split_protects_abbreviations_and_initials() -> None:
    text = "Dr. Smith said the U.S. death toll hit 100,000. That is wrong! Is it?"
    assert split_sentences(text) == [
        "Dr. Smith said the U.S. death toll hit 100,000.",
        "That is wrong!",
        "Is it?",
    ]


def test_sentence_spans_are_the_sentences_as_written_in_the_text() -> None:
    text = '  Dr. Smith said "stop."  Then he left!\n\n\tIs it?   \nA line without a stop'
    spans = sentence_spans(text)
    assert [text[a:b] for a, b in spans] == [
        'Dr. Smith said "stop.',  # a closing quote after the stop belongs to the gap, as ever
        "Then he left!",
        "Is it?",
        "A line without a stop",
    ]
    assert [text[a:b] for a, b in spans] == split_sentences(text)


def test_keywords_skip_stopwords() -> None:
    assert keywords("The vaccine is not approved by the FDA") == ["vaccine", "approved", "fda"]


async def test_claims_keep_statements_and_drop_questions_and_greetings() -> None:
    post = _post(
        "Good morning everyone! The WHO confirmed 5G spreads the virus in 2020. "
        "Why would they hide it? I think this is scary. Bill Gates owns every vaccine patent."
    )
    claims = await extract_claims(post)
    assert [c.text for c in claims] == [
        "The WHO confirmed 5G spreads the virus in 2020.",
        "Bill Gates owns every vaccine patent.",
    ]
    assert [c.position for c in claims] == [0, 1]
    assert all(c.post_id == "p1" for c in claims)


async def test_claims_are_capped_at_max_claims() -> None:
    text = " ".join(f"The city of Springfield recorded {n} new cases on Monday." for n in range(10))
    claims = await extract_claims(_post(text), max_claims=3)
    assert len(claims) == 3


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "🔥🔥🔥 😂😂",
        "@bot https://example.com",
        "Is this true?",
        "lol ok",
        "¡Hola a todos!",
    ],
)
async def test_posts_without_checkable_text_are_refused_with_a_reason(text: str) -> None:
    with pytest.raises(EmptyPostError) as info:
        await extract_claims(_post(text))
    assert str(info.value)
