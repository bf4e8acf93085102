"""Domain normalisation and public-suffix handling, on inline cases and the shared tier lists."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pipeline.credibility.domains import (
    MAX_PATH_DEPTH,
    candidate_keys,
    normalize_entry,
    registrable_domain,
)
from tests.conftest import REPO, SHARED_DATA

CREDIBILITY = SHARED_DATA / "credibility"


@pytest.mark.parametrize(
    ("value", "key"),
    [
        ("bbc.co.uk", "bbc.co.uk"),
        ("WWW.BBC.CO.UK", "bbc.co.uk"),
        ("https://www.bbc.co.uk/", "bbc.co.uk"),
        ("https://user:secret@www.bbc.co.uk:8443/news/?q=1#top", "bbc.co.uk/news"),
        ("news.bbc.co.uk", "news.bbc.co.uk"),
        ("m.facebook.com/news/", "facebook.com/news"),
        ("amp.theguardian.com", "theguardian.com"),
        ("www2.example.org", "example.org"),
        ("apple.com/apple-news", "apple.com/apple-news"),
        ("Apple.com//Apple-News/./", "apple.com/apple-news"),
        ("centerforsecuritypolicy.org/#articles", "centerforsecuritypolicy.org"),
        ("c-span.org/series/?washingtonjournal", "c-span.org/series"),
        ("ANews24.org/", "anews24.org"),
        ("example.com.", "example.com"),
        ("Bücher.de", "xn--bcher-kva.de"),
        ("foo.blogspot.com", "foo.blogspot.com"),
        ("blogspot.com", "blogspot.com"),
        ("www.gov.uk", "www.gov.uk"),  # gov.uk is a suffix: www.gov.uk is the publisher
        ("www.m.example.com", "example.com"),
        ("m.tv", "m.tv"),  # never strip the registrable domain itself
        ("gazette.example", "gazette.example"),  # reserved test TLD, for local fixtures
    ],
)
def test_normalize_entry(value: str, key: str) -> None:
    assert normalize_entry(value) == key


@pytest.mark.parametrize(
    "value",
    [
        "",
        "   ",
        "bemidji pioneer",
        "Silver-Coin-Investor. com",
        "TopInfoPost.con",  # typo of .com: no such suffix
        "thedenverchannel",
        "wvec–13newsnow.com",  # en dash is not allowed in a host name
        "gov.uk",
        "com",
        "localhost",
        "127.0.0.1",
        "http://[::1]/",
        "ftp://example.com",
        "mailto:someone@example.com",
        "javascript:alert(1)",
        "http://example.com:99999/",
        "-bad.com",
        "a..com",
        "ex_ample.com",
        "http://",
    ],
)
def test_normalize_entry_rejects_garbage(value: str) -> None:
    with pytest.raises(ValueError, match=r"."):
        normalize_entry(value)


@pytest.mark.parametrize(
    ("value", "domain"),
    [
        ("news.bbc.co.uk", "bbc.co.uk"),
        ("https://www.bbc.co.uk/news/world-1", "bbc.co.uk"),
        ("https://foo.blogspot.com/2020/01/post.html", "foo.blogspot.com"),
        ("https://bucket.s3.amazonaws.com/x", "bucket.s3.amazonaws.com"),
        ("blogspot.com", "blogspot.com"),
        ("https://a.b.city.kawasaki.jp/", "city.kawasaki.jp"),
        # Lenient for pages being rated: they get a domain and simply no rating.
        ("http://127.0.0.1:8080/page", "127.0.0.1"),
        ("http://localhost/x", "localhost"),
        ("https://news.gazette.example/a", "gazette.example"),
        ("https://www.gov.uk/guidance", "www.gov.uk"),
    ],
)
def test_registrable_domain(value: str, domain: str) -> None:
    assert registrable_domain(value) == domain


def test_registrable_domain_still_rejects_non_addresses() -> None:
    for value in ("", "not a domain", "mailto:x@example.com", "http://"):
        with pytest.raises(ValueError, match=r"."):
            registrable_domain(value)


def test_candidate_keys_most_specific_first() -> None:
    keys = candidate_keys("https://www.live.news.bbc.co.uk/news/world/europe-123?ref=x#p")
    assert keys == [
        "live.news.bbc.co.uk/news/world/europe-123",
        "live.news.bbc.co.uk/news/world",
        "live.news.bbc.co.uk/news",
        "live.news.bbc.co.uk",
        "news.bbc.co.uk",
        "bbc.co.uk",
    ]


def test_candidate_keys_scope_paths_by_whole_segments() -> None:
    assert "apple.com/apple-news" in candidate_keys("https://www.apple.com/apple-news/story")
    assert "apple.com/apple-news" not in candidate_keys("https://www.apple.com/apple-newsroom")


def test_candidate_keys_stop_at_a_private_suffix_domain() -> None:
    assert candidate_keys("http://m.someblog.blogspot.com/p") == [
        "someblog.blogspot.com/p",
        "someblog.blogspot.com",
    ]


def test_candidate_keys_cap_path_depth() -> None:
    keys = candidate_keys("https://example.com/" + "/".join("abcdefghij"))
    assert len(keys) == MAX_PATH_DEPTH + 1
    assert keys[0] == "example.com/a/b/c/d/e/f"


def test_public_suffix_list_never_touches_network_or_disk(tmp_path: Path) -> None:
    # A fresh interpreter, so the extractor is built here with sockets and DNS refused.
    code = textwrap.dedent(
        """
        import socket

        def refuse(*args, **kwargs):
            raise AssertionError("network access attempted")

        socket.socket.connect = refuse
        socket.create_connection = refuse
        socket.getaddrinfo = refuse
        from pipeline.credibility.domains import registrable_domain
        assert registrable_domain("news.bbc.co.uk") == "bbc.co.uk"
        assert registrable_domain("foo.blogspot.com") == "foo.blogspot.com"
        print("ok")
        """
    )
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", None)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
    assert list(tmp_path.iterdir()) == []  # no suffix-list cache was written


def test_shared_tier_lists_normalise_except_three_known_typos() -> None:
    if not CREDIBILITY.is_dir():
        pytest.skip(f"shared credibility data not found at {CREDIBILITY}")
    bad: list[str] = []
    keys: set[str] = set()
    for tier in ("high", "medium", "low"):
        for line in (CREDIBILITY / f"publisher_priority_{tier}.txt").read_text().splitlines():
            try:
                keys.add(normalize_entry(line))
            except ValueError:
                bad.append(line)
    assert sorted(bad) == ["bemidji pioneer", "brainerddispatch.cpm", "thedenverchannel"]
    assert {"apple.com/apple-news", "facebook.com/news", "science.org/journal/sciadv"} <= keys


def test_archive_captures_are_rated_as_their_publisher() -> None:
    from pipeline.credibility.domains import unwrap_archive

    capture = "https://web.archive.org/web/20210302193538/https://www.theguardian.com/world/x"
    assert unwrap_archive(capture) == "https://www.theguardian.com/world/x"
    assert candidate_keys(capture)[-1] == "theguardian.com"
    assert unwrap_archive("https://web.archive.org/about/") == "https://web.archive.org/about/"
