"""OCR with the real Tesseract on generated screenshots."""

from __future__ import annotations

import difflib
import sys

import pytest
from PIL import ImageOps
from pydantic import ValidationError

from bots.settings import ImageSettings
from pipeline.errors import ConfigError, ImageError
from pipeline.image.intake import decode_image
from pipeline.image.ocr import (
    RapidOcr,
    TesseractOcr,
    is_text_picture,
    ocr_engine,
    rapidocr_missing,
    read_text,
)
from pipeline.records.image import ImageOrigin, ImageSource
from tests.pipeline.image.images import encode, photo, screenshot

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


RAPIDOCR = rapidocr_missing() is None
needs_rapidocr = pytest.mark.skipif(
    not RAPIDOCR, reason="the rapidocr extra is not installed: pip install 'factbot[rapidocr]'"
)


def test_engines_by_name() -> None:
    assert ocr_engine("tesseract").name == "tesseract"
    with pytest.raises(ValueError, match="unknown OCR engine"):
        ocr_engine("nope")


@needs_rapidocr
def test_rapidocr_is_chosen_by_name_when_installed() -> None:
    assert rapidocr_missing() is None
    assert ocr_engine("rapidocr").name == "rapidocr"
    assert ImageSettings(ocr="rapidocr").ocr == "rapidocr"


@needs_rapidocr
async def test_rapidocr_reads_a_screenshot() -> None:
    picture = screenshot(HEADLINE, font="dejavu/DejaVuSans.ttf", size=22)
    text = await read_text(loaded(encode(picture, "PNG")), engine=RapidOcr(), cpu=None)
    assert text.engine == "rapidocr"
    assert similarity(text.text, "\n".join(HEADLINE)) >= 0.9, text.text
    assert all(0.5 <= line.confidence <= 1 for line in text.lines)


@pytest.mark.parametrize("package", ["rapidocr", "onnxruntime"])
def test_rapidocr_without_its_extra_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, package: str
) -> None:
    monkeypatch.setitem(sys.modules, package, None)  # the import fails, as when not installed
    with pytest.raises(
        ConfigError, match=rf"needs (rapidocr, )?{package}: pip install 'factbot\[rapidocr\]'"
    ):
        ocr_engine("rapidocr")
    with pytest.raises(ValidationError, match="FACTBOT_IMAGES__OCR=rapidocr"):
        ImageSettings(ocr="rapidocr")
    assert ImageSettings(ocr="tesseract").ocr == "tesseract"


def test_a_screenshot_is_a_text_picture_and_a_photo_is_not() -> None:
    assert is_text_picture(ImageOps.grayscale(screenshot(HEADLINE)))
    assert is_text_picture(ImageOps.grayscale(screenshot(HEADLINE, dark=True)))
    assert not is_text_picture(ImageOps.grayscale(photo((400, 300))))


async def test_every_line_of_a_serif_screenshot_is_read_and_a_lone_bar_is_i() -> None:
    # full layout analysis (psm 3) dropped the "!!!!!" line as if it were a picture
    lines = [
        "our pillows morally and technically superior",
        "products, Made in America!!!!! Hope you approve",
        "her new name, I said",
    ]
    picture = screenshot(lines, font="dejavu/DejaVuSerif.ttf", size=18)
    text = await read_text(loaded(encode(picture, "PNG")), engine=TesseractOcr(), cpu=None)
    assert len(text.lines) == 3, text.text
    assert "Made in America" in text.text
    sans = screenshot(["When I say it, I mean it"], font="liberation/LiberationSans-Regular.ttf")
    assert "|" not in TesseractOcr().read(sans).text
