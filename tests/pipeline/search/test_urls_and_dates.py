"""canonical_url, the date parser and the other shared parsing helpers."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from pipeline.search.parsing import last_day, on_sites, parse_date, plain_text, with_sites
from pipeline.search.urls import canonical_url

NOW = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("url", "key"),
    [
        (
            "HTTPS://WWW.Example.COM:443/a/b/?utm_source=x&b=2&a=1#top",
            "https://example.com/a/b?a=1&b=2",
        ),
        ("http://example.com:80", "http://example.com/"),
        ("https://example.com:8443/x/", "https://example.com:8443/x"),
        ("https://example.com/?fbclid=abc&gclid=def&ref=tw", "https://example.com/"),
        ("https://example.com/p?id=3&id=1&UTM_Campaign=z", "https://example.com/p?id=3&id=1"),
        ("https://example.com/a%7eb/c d", "https://example.com/a~b/c%20d"),
        ("https://user:pw@example.com/a", "https://example.com/a"),
        ("https://example.com/Case/Sensitive", "https://example.com/Case/Sensitive"),
        ("not a url", "not a url"),
        ("https://[::1]:8080/x", "https://[::1]:8080/x"),
    ],
)
def test_canonical_url(url: str, key: str) -> None:
    assert canonical_url(url) == key


def test_spellings_of_one_page_share_a_key() -> None:
    spellings = [
        "https://www.snopes.com/fact-check/six-days-darkness/",
        "https://snopes.com/fact-check/six-days-darkness",
        "https://snopes.com/fact-check/six-days-darkness/?utm_medium=social#comments",
    ]
    assert len({canonical_url(url) for url in spellings}) == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2014-12-03T09:15:00", datetime(2014, 12, 3, 9, 15, tzinfo=UTC)),
        ("2020-11-26T00:00:00Z", datetime(2020, 11, 26, tzinfo=UTC)),
        ("2020-11-26T02:00:00+02:00", datetime(2020, 11, 26, tzinfo=UTC)),
        ("Thu, 26 Nov 2020 12:00:00 GMT", datetime(2020, 11, 26, 12, tzinfo=UTC)),
        ("Nov 26, 2020", datetime(2020, 11, 26, tzinfo=UTC)),
        ("December 3, 2014", datetime(2014, 12, 3, tzinfo=UTC)),
        ("3 hours ago", datetime(2024, 5, 1, 9, 0, tzinfo=UTC)),
        ("2 days ago", datetime(2024, 4, 29, 12, 0, tzinfo=UTC)),
        ("1 week ago", datetime(2024, 4, 24, 12, 0, tzinfo=UTC)),
        ("an hour ago", datetime(2024, 5, 1, 11, 0, tzinfo=UTC)),
        ("yesterday", datetime(2024, 4, 30, 12, 0, tzinfo=UTC)),
        ("3 months ago", None),  # too coarse to bound "before the post"
        ("2 years ago", None),
        ("March 3", None),  # no year: a guess
        ("", None),
        ("garbage", None),
    ],
)
def test_parse_date(text: str, expected: datetime | None) -> None:
    assert parse_date(text, now=NOW) == expected


def test_plain_text() -> None:
    assert plain_text('<span class="searchmatch">NASA</span> &quot;dark&quot;  days') == (
        'NASA "dark" days'
    )
    assert plain_text("AT&T <b>5G</b>") == "AT&T 5G"
    assert plain_text(None) == "" and plain_text("  ") == ""


def test_site_operators_and_matching() -> None:
    assert with_sites("q", ()) == "q"
    assert with_sites("q", ("a.com",)) == "q site:a.com"
    assert with_sites("q", ("a.com", "b.org")) == "q (site:a.com OR site:b.org)"
    assert on_sites("news.bbc.co.uk", ("bbc.co.uk",)) and on_sites("reuters.com", ("reuters.com",))
    assert not on_sites("notreuters.com", ("reuters.com",)) and not on_sites(None, ("a.com",))


def test_last_day_is_inclusive_of_the_day_before() -> None:
    assert last_day(datetime(2024, 3, 5, 0, 0, tzinfo=UTC)) == date(2024, 3, 4)
    assert last_day(datetime(2024, 3, 5, 18, 30, tzinfo=UTC)) == date(2024, 3, 5)
