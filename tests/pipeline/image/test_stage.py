"""The image stage end to end: fetch over loopback, read with the real libraries, describe."""

from __future__ import annotations

from datetime import datetime

from pipeline.fetch.fetcher import Fetcher, FetchPolicy
from pipeline.image.describe import names_in
from pipeline.image.stage import ImageDeps, read_images
from pipeline.records.domain import Post
from pipeline.util.cpu import CpuPool
from tests.pipeline.image.c2pa_signing import sign_jpeg
from tests.pipeline.image.images import encode, exif_jpeg, photo, screenshot
from tests.support.httpserver import serve

LOOPBACK = FetchPolicy(allow_private=True, respect_robots=False)
HEADLINE = ["Hurricane Sandy floods the New York", "Stock Exchange under three feet of water"]


def post(*refs: str) -> Post:
    return Post(id="p1", platform="test", platform_id="p1", text="look at this", image_refs=refs)


async def test_a_post_with_a_screenshot_a_photo_and_a_broken_image() -> None:
    shot = encode(screenshot(HEADLINE, size=26), "PNG")
    exif = exif_jpeg(
        datetime(2012, 10, 29, 20, 0, 0),
        lat=40.7069,
        lon=-74.0113,
        camera=("NIKON", "D800"),
        software="GIMP 2.8",
    )
    data = encode(photo(), "JPEG")
    with serve() as server:
        refs = [
            server.add("/shot.png", shot, "image/png"),
            server.add("/photo.jpg", exif, "image/jpeg"),
            server.add("/broken.jpg", data[: len(data) // 3], "image/jpeg"),
        ]
        pool = CpuPool(2)
        try:
            async with Fetcher(LOOPBACK) as fetcher:
                report = await read_images(post(*refs), deps=ImageDeps(fetcher=fetcher), cpu=pool)
        finally:
            pool.close()
    assert len(report.descriptions) == 2
    first, second = report.descriptions
    assert "Hurricane Sandy" in first.text and "Text in the image:" in first.text
    assert "Hurricane Sandy" in report.ocr_text
    assert {"Hurricane Sandy", "New York Stock Exchange"} <= set(report.terms)
    assert first.hashes.phash != second.hashes.phash
    assert "taken 2012-10-29 20:00:00-05:00" in second.text
    assert "with NIKON D800" in second.text and "processed with GIMP 2.8" in second.text
    assert second.metadata.exif is not None and second.metadata.exif.latitude is not None
    assert [f.source.ref for f in report.failures] == [refs[2]]
    assert report.note.startswith("The image could not be read (the image is truncated or corrupt")


async def test_ai_content_credentials_are_described() -> None:
    signed = sign_jpeg(encode(photo(), "JPEG"), ai_made=True)
    with serve() as server:
        url = server.add("/gen.jpg", signed, "image/jpeg")
        async with Fetcher(LOOPBACK) as fetcher:
            report = await read_images(post(url), deps=ImageDeps(fetcher=fetcher, ocr=None))
    (description,) = report.descriptions
    assert description.ocr is None
    assert "C2PA content credentials signed by Test Signer" in description.text
    assert "untrusted certificate" in description.text
    assert "created by an AI model" in description.text


async def test_the_same_file_twice_is_read_once() -> None:
    data = encode(photo(), "PNG")
    with serve() as server:
        one, two = server.add("/a.png", data, "image/png"), server.add("/b.png", data, "image/png")
        async with Fetcher(LOOPBACK) as fetcher:
            report = await read_images(post(one, two), deps=ImageDeps(fetcher=fetcher, ocr=None))
    assert len(report.descriptions) == 1 and not report.failures


async def test_without_a_fetcher_urls_fail_with_a_reason() -> None:
    report = await read_images(post("https://cdn.example.org/a.png"), deps=ImageDeps(fetcher=None))
    assert report.descriptions == ()
    assert "not fetched" in report.failures[0].reason


def test_names_are_capitalised_runs_not_sentence_openers() -> None:
    text = "The photo shows Barack Obama in Chicago. Floods hit New York on Monday."
    assert names_in(text) == ["Barack Obama", "New York", "Chicago", "Monday"]
