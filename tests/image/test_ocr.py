"""OCR with the real Tesseract on generated screenshots."""

from __future__ import annotations

import difflib

import pytest

from pipeline.errors import ImageError
from pipeline.image.intake import decode_image
from pipeline.image.ocr import TesseractOcr, ocr_engine, read_text
from pipeline.image.records import ImageOrigin, ImageSource
from tests.image.images import encode, photo, screenshot

HEADLINE = [
    "BREAKING: Health Ministry confirms",
    "5G towers were switched off in Lagos",
    "on 12 March 2024 after 300 complaints",
]


def similarity(one: str, other: str) -> float:
    return difflib.SequenceMatcher(None, " ".join(one.split()), " ".join(other.split())).ratio()


def loaded(data: bytes):  # type: ignore[no-untyped-def]
    return decode_image(data, source=ImageSource("t", ImageOrigin.INLINE), url="t")


@pytest.mark.parametrize(
    ("font", "size", "dark"),
    [
        ("dejavu/DejaVuSans.ttf", 22, False),
        ("dejavu/DejaVuSerif.ttf", 16, False),
        ("liberation/LiberationSans-Bold.ttf", 30, False),
        ("liberation/LiberationSerif-Regular.ttf", 13, False),
        ("dejavu/DejaVuSans.ttf", 20, True),
    ],
)
async def test_tesseract_reads_screenshots_in_several_fonts_and_sizes(
    font: str, size: int, dark: bool
) -> None:
    picture = screenshot(HEADLINE, font=font, size=size, dark=dark)
    text = await read_text(loaded(encode(picture, "PNG")), engine=TesseractOcr(), cpu=None)
    assert text.engine == "tesseract"
    assert similarity(text.text, "\n".join(HEADLINE)) >= 0.95, text.text
    assert len(text.lines) == 3
    assert all(0.4 <= line.confidence <= 1 for line in text.lines)


async def test_a_photo_without_text_reads_as_almost_nothing() -> None:
    text = await read_text(loaded(encode(photo(), "JPEG")), engine=TesseractOcr(), cpu=None)
    assert len(text.text) < 10


def test_missing_tesseract_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import pytesseract

    monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd", "/nonexistent/tesseract")
    with pytest.raises(ImageError, match="apt-get install tesseract-ocr"):
        TesseractOcr().read(screenshot(["some text here"]))


def test_engines_by_name() -> None:
    assert ocr_engine("tesseract").name == "tesseract"
    assert ocr_engine("rapidocr").name == "rapidocr"
    with pytest.raises(ValueError, match="unknown OCR engine"):
        ocr_engine("nope")
