"""Image intake: real Pillow on generated files, real fetches over loopback."""

from __future__ import annotations

import base64

import pytest
from PIL import Image

from pipeline.errors import ImageError
from pipeline.fetch.fetcher import Fetcher, FetchPolicy
from pipeline.image.intake import ImageLimits, collect_images, declared_images, decode_image
from pipeline.records.domain import Post
from pipeline.records.image import ImageOrigin, ImageSource, LoadedImage
from tests.pipeline.image.images import SVG_WITH_SCRIPT, animated_gif, encode, photo, png_bomb
from tests.support.httpserver import Response, serve

SOURCE = ImageSource("test", ImageOrigin.INLINE)
LOOPBACK = FetchPolicy(allow_private=True, respect_robots=False)


def decode(data: bytes, limits: ImageLimits | None = None) -> LoadedImage:
    return decode_image(data, source=SOURCE, url="test", limits=limits or ImageLimits())


@pytest.mark.parametrize("fmt", ["JPEG", "PNG", "WEBP", "GIF", "BMP"])
def test_raster_formats_decode_to_rgb(fmt: str) -> None:
    image = decode(encode(photo((120, 90)), fmt))
    assert (image.width, image.height, image.frames) == (120, 90, 1)
    assert image.image.mode == "RGB"
    assert image.format == fmt


def test_heic_through_pillow_heif() -> None:
    from pillow_heif import register_heif_opener

    register_heif_opener()
    image = decode(encode(photo((96, 64)), "HEIF"))
    assert image.format == "HEIF"
    assert (image.width, image.height) == (96, 64)


def test_animation_gives_its_first_frame() -> None:
    image = decode(animated_gif(3))
    assert image.frames == 3
    red, green, blue = image.image.getpixel((10, 10))  # type: ignore[misc]
    assert red > 200 and green < 60 and blue < 60


def test_transparent_png_is_composited_on_white() -> None:
    picture = Image.new("RGBA", (20, 20), (0, 0, 0, 0))
    image = decode(encode(picture, "PNG"))
    assert image.image.getpixel((5, 5)) == (255, 255, 255)


def test_exif_orientation_is_applied() -> None:
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90 degrees clockwise to display
    image = decode(encode(photo((200, 100)), "JPEG", exif=exif))
    assert (image.width, image.height) == (100, 200)


def test_svg_with_script_is_refused_with_a_reason() -> None:
    with pytest.raises(ImageError, match="SVG is a vector format"):
        decode(SVG_WITH_SCRIPT)


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"<!doctype html><html><body>hi</body></html>", "web page, not an image"),
        (b"%PDF-1.7\n...", "PDF document"),
        (b"%!PS-Adobe-3.0 EPSF-3.0\n", "PostScript"),
        (b"", "empty"),
        (b"just some bytes that are no image at all", "not a supported raster image"),
    ],
)
def test_non_raster_files_are_refused(data: bytes, reason: str) -> None:
    with pytest.raises(ImageError, match=reason):
        decode(data)


def test_tiff_is_not_opened() -> None:
    with pytest.raises(ImageError, match="not a supported raster image"):
        decode(encode(photo((20, 20)), "TIFF"))


def test_truncated_jpeg_is_refused() -> None:
    data = encode(photo((400, 300)), "JPEG", quality=95)
    with pytest.raises(ImageError, match="truncated or corrupt"):
        decode(data[: len(data) // 2])


def test_declared_30000_square_is_refused_before_decoding() -> None:
    data = png_bomb(30_000, 30_000)
    assert len(data) < 200_000
    with pytest.raises(ImageError, match="too many pixels"):
        decode(data)  # Pillow's own limit refuses it at open, before any pixel is inflated


def test_png_bomb_under_pillows_limit_is_refused_by_the_pixel_cap() -> None:
    # 9,000 x 9,000 = 81 M pixels: under Pillow's own bomb limit, over factbot's cap
    with pytest.raises(ImageError, match="the limit is 40,000,000 pixels"):
        decode(png_bomb(9_000, 9_000))


def test_png_bomb_over_pillows_limit_is_refused_as_a_bomb() -> None:
    limits = ImageLimits(max_pixels=10**12)  # only Pillow's limit stands
    with pytest.raises(ImageError, match="too many pixels"):
        decode(png_bomb(20_000, 20_000), limits)


def test_oversized_file_is_refused() -> None:
    with pytest.raises(ImageError, match="limit is 1,000"):
        decode(encode(photo(), "PNG"), ImageLimits(max_bytes=1_000))


def test_declared_images_reads_og_and_twitter_tags() -> None:
    html = """<html><head>
    <meta property="og:image" content="/img/main.jpg">
    <meta name="twitter:image" content="https://cdn.example.org/t.png">
    <meta property="og:image" content="javascript:alert(1)">
    </head><body></body></html>"""
    assert declared_images(html, "https://news.example.org/story") == [
        "https://news.example.org/img/main.jpg",
        "https://cdn.example.org/t.png",
    ]


def post(**fields: object) -> Post:
    return Post(id="p1", platform="test", platform_id="p1", text="a post", **fields)  # type: ignore[arg-type]


async def test_collects_attachments_links_and_og_images_over_http() -> None:
    jpeg = encode(photo(seed=2), "JPEG")
    with serve() as server:
        attached = server.add("/a.png", encode(photo(seed=1), "PNG"), "image/png")
        linked = server.add("/b.jpg", jpeg, "image/jpeg")
        server.add("/og.webp", encode(photo(seed=3), "WEBP"), "image/webp")
        page = server.add(
            "/story", '<html><head><meta property="og:image" content="/og.webp"></head></html>'
        )
        async with Fetcher(LOOPBACK) as fetcher:
            loaded, failures = await collect_images(
                post(image_refs=(attached,), links=(linked, page)), fetcher=fetcher
            )
        accept = next(r for r in server.requests if r.path == "/a.png").headers["accept"]
    assert failures == []
    assert [(i.source.origin, i.format) for i in loaded] == [
        (ImageOrigin.ATTACHMENT, "PNG"),
        (ImageOrigin.LINK, "JPEG"),
        (ImageOrigin.OG_IMAGE, "WEBP"),
    ]
    assert loaded[2].source.page_url == page
    assert "image/png" in accept and "text/html" not in accept


async def test_failures_carry_reasons_and_do_not_stop_the_others() -> None:
    data_uri = "data:image/png;base64," + base64.b64encode(encode(photo((16, 16)), "PNG")).decode()
    with serve() as server:
        html = server.add("/page.jpg", "<html><body>not an image</body></html>")
        svg = server.add("/x.svg.png", SVG_WITH_SCRIPT, "image/svg+xml")
        big = server.add("/big.png", b"\x89PNG" + b"\x00" * 3000, "image/png")
        untyped = server.route("/untyped.png", Response(200, encode(photo((16, 16)), "PNG")))
        missing = server.url("/missing.png")
        refs = (data_uri, html, svg, big, untyped, missing)
        async with Fetcher(LOOPBACK) as fetcher:
            loaded, failures = await collect_images(
                post(image_refs=refs),
                fetcher=fetcher,
                limits=ImageLimits(max_images=6, max_bytes=2_000),
            )
    assert [i.source.origin for i in loaded] == [ImageOrigin.ATTACHMENT]
    reasons = {f.source.ref: f.reason for f in failures}
    assert "content type text/html is not accepted" in reasons[html]
    assert "SVG" in reasons[svg]
    assert "over the limit" in reasons[big]
    assert reasons[untyped] == "no content type"
    assert "404" in reasons[missing]


async def test_private_addresses_are_refused_by_the_one_fetcher() -> None:
    with serve() as server:
        url = server.add("/a.png", encode(photo(), "PNG"), "image/png")
        async with Fetcher(FetchPolicy()) as fetcher:  # the production policy
            loaded, failures = await collect_images(post(image_refs=(url,)), fetcher=fetcher)
        assert server.seen == []
    assert loaded == []
    assert "non-public address" in failures[0].reason


def test_max_images_bounds_the_sources() -> None:
    from pipeline.image.intake import image_sources

    refs = tuple(f"https://cdn.example.org/{n}.png" for n in range(9))
    sources, pages = image_sources(
        post(image_refs=refs, links=("https://example.org/story",)), limits=ImageLimits()
    )
    assert len(sources) == 4 and pages == ["https://example.org/story"]


def test_big_pictures_are_kept_at_most_4096_pixels_on_a_side() -> None:
    image = decode(encode(Image.new("RGB", (6000, 1500), (10, 120, 200)), "PNG"))
    assert (image.width, image.height) == (4096, 1024)
    jpeg = decode(encode(Image.new("RGB", (8200, 2000), (10, 120, 200)), "JPEG"))
    assert max(jpeg.width, jpeg.height) <= 4096
