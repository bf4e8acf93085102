"""Colour reading and contrast behind the hidden-text rules (the rules themselves are tested
through the real extractor in test_extract.py)."""

from __future__ import annotations

import pytest

from pipeline.fetch.colours import WHITE, contrast, parse_colour
from pipeline.fetch.visibility import MIN_CONTRAST


@pytest.mark.parametrize(
    ("css", "rgba"),
    [
        ("#fff", (255, 255, 255, 1)),
        ("#FFFFFF", (255, 255, 255, 1)),
        ("#0008", (0, 0, 0, 0x88 / 255)),
        ("#11223300", (0x11, 0x22, 0x33, 0)),
        ("white", (255, 255, 255, 1)),
        ("WhiteSmoke", (245, 245, 245, 1)),
        ("transparent", (0, 0, 0, 0)),
        ("rgb(255, 255, 255)", (255, 255, 255, 1)),
        ("rgba(0,0,0,0)", (0, 0, 0, 0)),
        ("rgb(100% 50% 0% / 50%)", (255, 127.5, 0, 0.5)),
        ("hsl(0, 0%, 100%)", (255, 255, 255, 1)),
        ("hsla(120deg 100% 25% / 0.5)", (0, 127.5, 0, 0.5)),
        ("rgb(300, -5, 0)", (255, 0, 0, 1)),
    ],
)
def test_colours_are_read(css: str, rgba: tuple[float, ...]) -> None:
    assert parse_colour(css) == pytest.approx(rgba)


@pytest.mark.parametrize(
    "css", ["currentcolor", "var(--ink)", "#12345", "rgb(1, 2)", "rgb(a, b, c)", "notacolour", ""]
)
def test_unreadable_colours_are_none(css: str) -> None:
    assert parse_colour(css) is None


def test_contrast_ratio() -> None:
    assert contrast(WHITE, WHITE) == 1
    assert contrast((0, 0, 0), WHITE) == pytest.approx(21)
    assert contrast((250, 250, 250), WHITE) < MIN_CONTRAST  # invisible ink
    assert contrast((118, 118, 118), WHITE) > 4.5  # grey body text
