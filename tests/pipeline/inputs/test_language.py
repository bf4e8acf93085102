"""Language identification with lingua's real models: every script, the bad inputs, the hint."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pipeline.inputs.language import (
    SUPPORTED,
    UNDETERMINED,
    LanguageIdentifier,
    chinese_variant,
    function_words,
    script_language,
)
from tests.conftest import FIXTURES

POSTS = [json.loads(line) for line in (FIXTURES / "languages" / "posts.jsonl").open()]


@pytest.fixture(scope="module")
def identifier() -> LanguageIdentifier:
    found = LanguageIdentifier()
    found.warm()
    return found


def test_the_fixture_covers_ten_languages_and_the_bad_inputs() -> None:
    sentences = {p["expected"] for p in POSTS if p["kind"] == "sentence"}
    assert len(sentences) >= 10 and sentences <= SUPPORTED
    assert sum(p["expected"] == UNDETERMINED for p in POSTS) >= 10


@pytest.mark.parametrize("post", POSTS, ids=lambda p: f"{p['expected']}:{p['text'][:24]}")
def test_each_fixture_post_gets_its_language(
    identifier: LanguageIdentifier, post: dict[str, Any]
) -> None:
    found = identifier.identify(post["text"], hint=post["hint"])
    assert found.code == post["expected"], found


@pytest.mark.parametrize(
    ("text", "method"),
    [
        ("😂😂😂🔥🔥", "no letters"),
        ("https://t.co/abc123 https://example.org/page", "no letters"),
        ("12345 67,890 3.14", "no letters"),
        ("#COVID19 #FakeNews #5G", "no letters"),
        ("١٢٣ ٤٥٦ ٧٨٩", "no letters"),  # Arabic-Indic digits are digits, not letters
        ("ሰላም ለዓለም ይህ ዜና ሐሰት ነው", "unsupported script (other)"),
        ("Modi ne kaha ki petrol ka daam kam hoga aur sab log khush honge", "romanised hindi"),
        ("el 7ekouma 2alet enno el banzine ra7 yenzal", "arabizi"),
        ("lol", "below the confidence bar"),
    ],
)
def test_bad_inputs_are_undetermined_and_say_why(
    identifier: LanguageIdentifier, text: str, method: str
) -> None:
    found = identifier.identify(text)
    assert (found.code, found.method) == (UNDETERMINED, method)
    assert not found.determined


def test_a_platform_hint_decides_a_two_word_post_only_when_the_text_allows_it(
    identifier: LanguageIdentifier,
) -> None:
    assert identifier.identify("Fake news").code == UNDETERMINED
    assert identifier.identify("Fake news", hint="en-US").code == "en"
    assert identifier.identify("Totalmente falso", hint="es").method == "hint"
    # Mastodon's default language is the user's interface language: a clear sentence wins
    spanish = "El gobierno anunció que las vacunas contra el covid causan autismo en los niños."
    assert identifier.identify(spanish, hint="en").code == "es"
    # a hint in another script is no hint at all
    assert identifier.identify("الحكومة أعلنت أن اللقاحات تسبب التوحد", hint="en").code == "ar"


def test_short_han_text_is_chinese_and_kana_makes_it_japanese(
    identifier: LanguageIdentifier,
) -> None:
    assert identifier.identify("疫苗有毒").code == "zh-Hans"
    assert identifier.identify("東京大学").code.startswith("zh")  # Han alone: never guessed ja
    assert identifier.identify("東京大学のワクチン").code == "ja"


def test_traditional_and_simplified_chinese_are_told_apart() -> None:
    assert chinese_variant("这是国家统计局说的") == "zh-Hans"
    assert chinese_variant("這是國家統計局說的") == "zh-Hant"
    # no character that differs: the platform's tag decides, else simplified
    assert chinese_variant("疫苗有毒", hint="zh-TW") == "zh-Hant"
    assert chinese_variant("疫苗有毒", hint="zh-Hant-HK") == "zh-Hant"
    assert chinese_variant("疫苗有毒") == "zh-Hans"


def test_rtl_posts_with_latin_names_and_links_keep_their_language(
    identifier: LanguageIdentifier,
) -> None:
    text = "ترامب Trump قال إن ٥٠٪ من الأصوات مزورة https://example.com/news/2024 #USA"
    assert identifier.identify(text).code == "ar"
    assert identifier.identify("לפי CNN, ביידן Biden חתם על החוק https://cnn.com/x").code == "he"


def test_script_rules_need_no_model() -> None:
    assert script_language("정부는 다음 달부터 휘발유 가격이 떨어진다") == "ko"
    assert script_language("รัฐบาลประกาศว่าวัคซีน") == "th"
    assert script_language("Vaccines cause autism") is None  # a model must tell Latin apart
    assert script_language("🔥🔥") == UNDETERMINED


def test_a_low_accuracy_identifier_still_reads_sentences() -> None:
    low = LanguageIdentifier(low_accuracy=True)
    for post in POSTS:
        if post["kind"] == "sentence" and post["expected"] in ("en", "es", "de", "ru", "ar"):
            assert low.identify(post["text"], hint=post["hint"]).code == post["expected"]


def test_long_texts_go_to_the_trigram_models_and_short_ones_do_not(
    identifier: LanguageIdentifier,
) -> None:
    """Every fixture post gets the same language with and without the long-text path."""
    everything = LanguageIdentifier(long_text=0)
    assert identifier.long_text > 0
    for post in POSTS:
        expected = everything.identify(post["text"], hint=post["hint"]).code
        assert identifier.identify(post["text"], hint=post["hint"]).code == expected, post
    # Only the high-accuracy models were built without the long-text path, both with it.
    assert set(everything._detectors) == {False}
    long = next(p["text"] for p in POSTS if p["expected"] == "es" and len(p["text"]) >= 80)
    identifier.identify(long)
    assert set(identifier._detectors) == {False, True}


def test_a_negative_long_text_is_refused() -> None:
    with pytest.raises(ValueError, match="long_text"):
        LanguageIdentifier(long_text=-1)


SHORT_CLAIMS = [json.loads(line) for line in (FIXTURES / "languages" / "short_claims.jsonl").open()]


def test_the_short_claims_cover_english_hindi_and_their_neighbours() -> None:
    languages = {c["language"] for c in SHORT_CLAIMS}
    assert {"en", "es", "pt", "fr", "de", "it", "nl", "hi", "mr"} <= languages
    assert sum(c["language"] == "en" for c in SHORT_CLAIMS) >= 20


@pytest.mark.parametrize("claim", SHORT_CLAIMS, ids=lambda c: f"{c['language']}:{c['text'][:24]}")
def test_a_short_claim_keeps_its_language(
    identifier: LanguageIdentifier, claim: dict[str, str]
) -> None:
    """Plainly English claims full of names are English, not German or `und`; short Hindi is
    Hindi, not Marathi; and short claims in the other languages keep theirs (issue 51)."""
    found = identifier.identify(claim["text"])
    assert found.code == claim["language"], found


def test_function_words_decide_only_with_a_clear_majority(
    identifier: LanguageIdentifier,
) -> None:
    latin = ("en", "es", "de", "nl")
    assert function_words("Fanta was invented by the Nazis.", latin) == {
        "en": 3,
        "es": 0,
        "de": 1,  # "was"
        "nl": 1,
    }
    found = identifier.identify("Michelle Obama ordered $400 worth of caviar at a Paris hotel.")
    assert (found.code, found.method) == ("en", "function words")
    # a tie keeps lingua's answer: Dutch "in", "is" are English words too
    assert identifier.identify("In Nederland is de benzine gratis.").code == "nl"
    assert identifier.identify("Fake news").code == UNDETERMINED  # no function word: no vote


def test_technical_words_with_digits_are_not_arabizi(identifier: LanguageIdentifier) -> None:
    text = "5G towers spread COVID19, and CO2 from 5G masts kills birds at 3am."
    assert identifier.identify(text).code == "en"
    assert identifier.identify("el 7ekouma 2alet enno el banzine ra7 yenzal").method == "arabizi"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        # lingua leans English but stays under its bar, and no other language's words outvote
        ("Vaccines cause autism.", "en"),
        ("Albert Einstein was born in Germany.", "en"),  # "was", "in": Dutch and German too
        ("Marie Curie won two Nobel Prizes.", "en"),
        ("Vacunas causan autismo.", "es"),
        ("Vaccini causano autismo.", "it"),
    ],
)
def test_a_short_claim_lingua_leans_english_for_is_english(
    identifier: LanguageIdentifier, text: str, code: str
) -> None:
    assert identifier.identify(text).code == code
