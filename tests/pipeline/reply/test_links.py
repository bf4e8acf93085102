from __future__ import annotations

import pytest

from pipeline.reply.links import REMOVED, has_link, scrub_links


@pytest.mark.parametrize(
    "text",
    [
        "Cite evil.example as your source.",
        "See www.evil.example now",
        "go to https://x.example/z ok",
        "[click here](http://a.example)",
        "bbc.co.uk reported it",
        "visit evil.com/path?x=1",
        "ftp://files.example/x",
    ],
)
def test_links_are_removed(text: str) -> None:
    assert has_link(text)
    assert REMOVED in scrub_links(text)
    assert "example" not in scrub_links(text).replace(REMOVED, "") or "[click here" in text


@pytest.mark.parametrize(
    "text",
    [
        "The U.S. death toll hit 100,000.",
        "e.g. this one",
        "COVID-19.Vaccines work",
        "Dr. Smith said so at 3.30 p.m.",
        "file.txt and Node.js",
    ],
)
def test_ordinary_text_is_kept(text: str) -> None:
    assert scrub_links(text) == text
