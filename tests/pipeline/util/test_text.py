"""Text in every script: words, sentences, lengths and search keywords."""

from __future__ import annotations

import pytest

from pipeline.util.text import keywords, split_sentences, word_count, words


def test_words_keep_accents_marks_and_every_script() -> None:
    assert words("El gobierno anunció que la Regierung bestätigt") == [
        "El", "gobierno", "anunció", "que", "la", "Regierung", "bestätigt",
    ]  # fmt: skip
    # Devanagari vowel signs are marks, not letters: the word stays whole
    assert words("सरकार ने कहा") == ["सरकार", "ने", "कहा"]
    assert words("الحكومة أعلنت") == ["الحكومة", "أعلنت"]
    assert words("Путин заявил") == ["Путин", "заявил"]
    # Han and kana have no spaces: each character is a token, a Latin name beside them is not
    assert words("iPhone手机") == ["iPhone", "手", "机"]


def test_search_keywords_are_not_mangled_in_spanish_german_and_french() -> None:
    found = keywords("El gobierno anunció que las vacunas causan autismo")
    assert found == ["gobierno", "anunció", "vacunas", "causan", "autismo"]
    assert "bestätigt" in keywords("Die Regierung hat bestätigt, dass die Steuern steigen")
    assert "tigt" not in keywords("Die Regierung hat bestätigt")
    assert keywords("Selon l'OMS, le vaccin provoque des crises") == [
        "oms", "vaccin", "provoque", "crises",
    ]  # fmt: skip
    # English content words that are function words elsewhere stay
    assert keywords("Vaccines make people die, the war report says") == [
        "vaccines", "make", "people", "die", "war", "report",
    ]  # fmt: skip


def test_keywords_keep_runs_of_han_whole() -> None:
    assert keywords("世界卫生组织证实，喝热水可以杀死新冠病毒。") == [
        "世界卫生组织证实", "喝热水可以杀死新冠病毒",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("世界卫生组织证实喝热水有效。国家统计局说失业率下降。真的吗？是的",
         ["世界卫生组织证实喝热水有效。", "国家统计局说失业率下降。", "真的吗？", "是的"]),
        ("सरकार ने घोषणा की। पेट्रोल सस्ता होगा। क्या यह सच है?",
         ["सरकार ने घोषणा की।", "पेट्रोल सस्ता होगा।", "क्या यह सच है?"]),
        ("قال الرئيس إن الأسعار ستنخفض. هل هذا صحيح؟ نعم صحيح",
         ["قال الرئيس إن الأسعار ستنخفض.", "هل هذا صحيح؟", "نعم صحيح"]),
        ("Путин заявил это. Цены упадут!", ["Путин заявил это.", "Цены упадут!"]),
        ("¿Es verdad? Sí, lo es.", ["¿Es verdad?", "Sí, lo es."]),
        # English abbreviations and lower-case continuations still do not end a sentence
        ("Mr. Smith said e.g. this. and more", ["Mr. Smith said e.g. this. and more"]),
    ],
)  # fmt: skip
def test_sentences_end_where_each_script_ends_them(text: str, sentences: list[str]) -> None:
    assert split_sentences(text) == sentences


def test_lengths_of_han_kana_and_thai_are_measured_in_words() -> None:
    assert word_count("The cat sat on the mat") == 6
    assert word_count("世界卫生组织证实") == 6  # 8 characters, 1.5 a word
    assert word_count("รัฐบาลประกาศว่าวัคซีน") == 6  # 21 characters, 4 a word
    assert word_count("疫苗") == 2
    assert word_count("") == 0
