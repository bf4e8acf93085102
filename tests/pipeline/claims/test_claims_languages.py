"""Claims in scripts without capitals or spaces: checkable Arabic, Hindi, Chinese, Russian and
Japanese posts give claims in their language, and greetings, thanks and questions are refused
(tests/fixtures/languages/claim_posts.jsonl, real lingua models)."""

from __future__ import annotations

import pytest

from bench.claim_languages import load, outcome, right
from pipeline.inputs.language import LanguageIdentifier
from pipeline.util.text import split_sentences

POSTS = load()


@pytest.fixture(scope="module")
def identifier() -> LanguageIdentifier:
    return LanguageIdentifier()


def test_the_fixture_has_five_checkable_posts_and_refusals_in_each_language() -> None:
    for language in ("ar", "hi", "zh", "ru", "ja"):
        rows = [r for r in POSTS if r["language"] == language]
        assert sum(r["checkable"] for r in rows) >= 5, language
        assert sum(not r["checkable"] for r in rows) >= 2, language


@pytest.mark.parametrize("row", POSTS, ids=[f"{r['language']}-{i}" for i, r in enumerate(POSTS)])
async def test_each_post_gives_claims_in_its_language_or_a_clear_refusal(
    row: dict[str, object], identifier: LanguageIdentifier
) -> None:
    languages, refusal = await outcome(str(row["text"]), identifier)
    assert right(row, languages), (languages, refusal)
    if not row["checkable"]:
        assert "no check-worthy statement" in refusal


@pytest.mark.parametrize(
    ("text", "sentences"),
    [
        ("震惊!央行将于明年起停止发行一百元纸币", ["震惊!", "央行将于明年起停止发行一百元纸币"]),
        ("真的吗?我不信", ["真的吗?", "我不信"]),
        ("बड़ी खबर | रिजर्व बैंक ने नोट वापस लिए", ["बड़ी खबर", "रिजर्व बैंक ने नोट वापस लिए"]),
        ("cats | dogs", ["cats | dogs"]),  # a bar between Latin words ends nothing
    ],
)
def test_ascii_marks_after_han_and_a_bar_between_devanagari_end_sentences(
    text: str, sentences: list[str]
) -> None:
    assert split_sentences(text) == sentences
