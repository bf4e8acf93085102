"""ClaimReview feeds read as a stream: each shape, bad items, broken files."""

from __future__ import annotations

import gzip
import io
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from pipeline.errors import FeedError, InputError
from pipeline.factchecks.reviewfeeds import Parsed, Skipped, read_feed, read_feed_file
from pipeline.factchecks.reviewitems import fact_checks_from_google, language_code
from pipeline.records.domain import Label
from pipeline.records.factchecks import FactCheck
from tests.conftest import FIXTURES

FEEDS = FIXTURES / "factchecks"


def review(n: int, **extra: Any) -> dict[str, Any]:
    return {
        "@type": "ClaimReview",
        "url": f"https://checker.example/{n}",
        "claimReviewed": f"Claim number {n} is true.",
        "author": {"name": "Checker"},
        "reviewRating": {"alternateName": "False"},
        **extra,
    }


def read(data: Any) -> list[Parsed]:
    raw = data if isinstance(data, bytes) else json.dumps(data).encode()
    return list(read_feed(io.BytesIO(raw), source="test.json"))


def checks(parsed: list[Parsed]) -> list[FactCheck]:
    return [p for p in parsed if isinstance(p, FactCheck)]


def test_a_data_feed_reads_every_field_normalised() -> None:
    parsed = list(read_feed_file(FEEDS / "datafeed.json"))

    assert [type(p) for p in parsed] == [FactCheck, FactCheck, FactCheck]
    first, spanish, unrated = checks(parsed)
    assert first == FactCheck(
        url="https://www.politifact.example/factchecks/2024/apr/02/bridge/",
        claim_reviewed="The new bridge cost ten billion dollars.",
        publisher="PolitiFact",
        publisher_site="politifact.example",
        headline="No, the bridge did not cost $10 billion",
        claimant="Jane Senator",
        claim_date=datetime(2019, 10, 22, tzinfo=UTC),
        review_date=datetime(2024, 4, 2, tzinfo=UTC),
        language="en",
        rating="Pants on Fire!",
        label=Label.FALSE,
        license="https://creativecommons.org/licenses/by-nc/4.0/",
    )
    assert (spanish.publisher, spanish.publisher_site) == ("Maldita.es", "maldita.example")
    assert spanish.review_date == datetime(2021, 3, 1, 8, 30, tzinfo=UTC)
    assert (spanish.language, spanish.label) == ("es", Label.FALSE)
    # A ClaimReview straight in the feed; a rating not understood keeps its words, no label.
    assert (unrated.rating, unrated.label) == ("Glorp-rated", None)
    assert unrated.publisher_site == "snopes.example"  # from the review's URL
    assert unrated.language is None  # none given and no finder


@pytest.mark.parametrize(
    "shape",
    [
        pytest.param(lambda rs: rs, id="a list"),
        pytest.param(lambda rs: {"@context": "https://schema.org", "@graph": rs}, id="@graph"),
        pytest.param(
            lambda rs: {"@type": "DataFeed", "dataFeedElement": [{"item": r} for r in rs]},
            id="a data feed",
        ),
        pytest.param(
            lambda rs: {"dataFeedElement": [{"@type": "DataFeedItem", "item": rs}]},
            id="one item holding a list",
        ),
    ],
)
def test_every_shape_gives_the_same_reviews(shape: Any) -> None:
    reviews = [review(1), review(2)]
    assert [fc.url for fc in checks(read(shape(reviews)))] == [
        "https://checker.example/1",
        "https://checker.example/2",
    ]


def test_a_single_claim_review_object() -> None:
    [only] = read(review(7, headline="Seven"))
    assert isinstance(only, FactCheck) and only.headline == "Seven"


def test_a_google_answer_gives_one_fact_check_per_review() -> None:
    path = FEEDS / "google_answer.json"
    parsed = list(read_feed_file(path))
    from_api = fact_checks_from_google(json.loads(path.read_text()))

    assert parsed == from_api
    afp, correctiv, no_url = parsed
    assert isinstance(afp, FactCheck) and isinstance(correctiv, FactCheck)
    assert (afp.publisher, afp.publisher_site, afp.claimant) == (
        "AFP Fact Check",
        "factcheck.afp.example",
        "Viral post",
    )
    assert afp.claim_date == datetime(2024, 1, 5, tzinfo=UTC)
    assert (afp.headline, afp.label, afp.language) == (
        "Hot water does not cure the flu",
        Label.FALSE,
        "en",
    )
    assert (correctiv.language, correctiv.label) == ("de", Label.FALSE)
    assert no_url == Skipped(1, "no URL")


def test_bad_items_are_skipped_with_reasons_and_nothing_else_is_lost() -> None:
    items = [
        review(1),
        "not a review",
        review(2, claimReviewed=None),
        review(3, url=None),
        review(4, url="ftp://checker.example/4"),
        review(5, datePublished={"year": 2024}),
        review(6, datePublished="sometime in spring"),  # unreadable: no date, item kept
        {"@type": "Organization", "name": "Checker"},
        review(7),
    ]
    parsed = read(items)

    assert [p for p in parsed if isinstance(p, Skipped)] == [
        Skipped(1, "not an object (str)"),
        Skipped(2, "no claimReviewed"),
        Skipped(3, "no URL"),
        Skipped(4, "not an http(s) URL"),
        Skipped(5, "datePublished is not a date (dict)"),
        Skipped(7, "not a ClaimReview (Organization)"),
    ]
    kept = checks(parsed)
    assert [fc.url.rsplit("/", 1)[1] for fc in kept] == ["1", "6", "7"]
    assert kept[1].review_date is None


def test_a_truncated_feed_raises_after_the_items_before_it() -> None:
    whole = json.dumps({"dataFeedElement": [review(n) for n in range(5)]}).encode()
    cut = whole[: whole.index(b"https://checker.example/3")]
    got: list[Parsed] = []

    with pytest.raises(FeedError) as caught:
        got.extend(read_feed(io.BytesIO(cut), source="cut.json"))

    assert [fc.url for fc in checks(got)] == [f"https://checker.example/{n}" for n in range(3)]
    assert isinstance(caught.value, InputError)
    assert caught.value.items == 3
    assert str(caught.value).startswith("cut.json: the feed ends early")


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"<html>not json</html>", "not valid JSON"),
        (b"", "the feed is empty"),
        (b"42", "not a feed: the JSON is a single number"),
        (b'{"name": "a feed of nothing"}', "not a feed: no dataFeedElement"),
        (b'[{"url": "https://a.example"}, }', "not valid JSON"),
    ],
)
def test_a_malformed_file_raises_one_clear_error(data: bytes, reason: str) -> None:
    with pytest.raises(FeedError, match=reason):
        read(data)


def test_a_gzip_feed_is_read_through_gzip(tmp_path: Path) -> None:
    path = tmp_path / "feed.json.gz"
    path.write_bytes(gzip.compress(json.dumps([review(1), review(2)]).encode()))
    assert len(checks(list(read_feed_file(path)))) == 2


def test_the_language_is_found_where_the_feed_gives_none() -> None:
    seen: list[str] = []

    def identify(text: str) -> str | None:
        seen.append(text)
        return "en"

    parsed = list(read_feed(io.BytesIO(json.dumps([review(1)]).encode()), identify=identify))
    assert checks(parsed)[0].language == "en"
    assert seen == ["Claim number 1 is true."]


@pytest.mark.parametrize(
    ("tag", "code"),
    [
        ("en-US", "en"),
        ("pt_BR", "pt"),
        ("DE", "de"),
        ("zh-TW", "zh-Hant"),
        ("zh", "zh-Hans"),
        ({"@type": "Language", "name": "fr"}, "fr"),
        ("English", None),
        (None, None),
    ],
)
def test_language_tags_become_iso_639_1(tag: object, code: str | None) -> None:
    assert language_code(tag) == code
