"""Ingested pages keep their main images in the image index: real fetcher, Pillow, SQLite."""

from __future__ import annotations

from datetime import UTC, datetime

from pipeline.embedding.onnx import OnnxEmbedder
from pipeline.evidence.ingest import Ingester
from pipeline.fetch.fetcher import Fetcher, FetchPolicy
from pipeline.image.hashing import hash_picture
from pipeline.image.page_images import PageImages, main_images
from storage import Store
from tests.pipeline.image.images import encode, photo
from tests.support.httpserver import serve

LOOPBACK = FetchPolicy(allow_private=True, respect_robots=False)
BODY = " ".join(
    f"Paragraph {n}: the river burst its banks and residents waded through the streets "
    "while rescue teams moved families to higher ground across the city."
    for n in range(6)
)


def article(base: str, *, og: str = "/img/main.jpg") -> str:
    return f"""<!doctype html><html><head><title>Flooding in Bangkok</title>
<meta property="og:image" content="{base}{og}">
<meta property="og:image:alt" content="Flooding in Bangkok, May 2012">
<meta property="article:published_time" content="2012-05-03T08:00:00Z">
<meta property="og:site_name" content="Bangkok Daily">
</head><body><header><img src="/img/logo.png" alt="Bangkok Daily"></header>
<article><h1>Flooding in Bangkok</h1><p>{BODY}</p>
<figure><img src="/img/street.jpg" width="640" height="480" alt="a street">
<figcaption>Residents wade through a flooded street</figcaption></figure>
<img src="/img/tracker.gif" width="1" height="1">
<img src="/img/broken.jpg" alt="a broken picture">
<img src="/img/hostile.svg" alt="vector">
<img src="/img/missing.jpg" alt="gone"></article></body></html>"""


def test_main_images_are_declared_first_then_content_pictures() -> None:
    found = main_images(
        article("https://news.example"), "https://news.example/2012/floods", limit=9
    )
    assert [(i.url, i.caption) for i in found] == [
        ("https://news.example/img/main.jpg", "Flooding in Bangkok, May 2012"),
        ("https://news.example/img/street.jpg", "Residents wade through a flooded street"),
        ("https://news.example/img/broken.jpg", "a broken picture"),
        ("https://news.example/img/missing.jpg", "gone"),
    ]  # no logo, no tracking pixel, no SVG
    assert len(main_images(article("https://n.example"), "https://n.example/", limit=1)) == 1
    assert (
        main_images("<html><body><p>No pictures</p></body></html>", "https://a.example/", limit=4)
        == []
    )
    assert main_images("", "https://a.example/", limit=4) == []


async def test_ingest_keeps_a_pages_images_and_a_bad_one_fails_nothing(
    store: Store, embedder: OnnxEmbedder
) -> None:
    main, street = photo((480, 360), seed=11), photo((480, 360), seed=12)
    with serve() as server:
        server.add("/img/main.jpg", encode(main, "JPEG", quality=90), "image/jpeg")
        server.add("/img/street.jpg", encode(street, "PNG"), "image/png")
        server.add("/img/broken.jpg", encode(photo(), "JPEG")[:400], "image/jpeg")
        page = server.add("/2012/floods", article(server.base))
        async with Fetcher(LOOPBACK) as fetcher:
            keeper = PageImages(store.images, fetcher, per_page=3)
            ingester = Ingester(store.documents, embedder, fetcher=fetcher, images=keeper)
            report = await ingester.ingest([page])
            assert report.added == 1 and not report.errors
            assert report.images == 2 and keeper.failed == 1  # the truncated JPEG is skipped
            again = await Ingester(
                store.documents, embedder, fetcher=fetcher, images=keeper
            ).ingest([page])
        seen = [p for p in server.seen if p.startswith("/img/")]
    assert again.unchanged == 1 and again.images == 0  # an unchanged page is not fetched again
    assert sorted(seen) == ["/img/broken.jpg", "/img/main.jpg", "/img/street.jpg"]  # cap of 3
    ((hit, distance),) = store.images.similar(hash_picture(main))
    assert distance == 0 and hit.page_url == page
    assert hit.caption == "Flooding in Bangkok, May 2012"
    assert hit.published_at == datetime(2012, 5, 3, 8, tzinfo=UTC)
    assert hit.publisher
    ((other, _),) = store.images.similar(hash_picture(street))
    assert other.caption == "Residents wade through a flooded street"


async def test_no_keeper_or_a_cap_of_zero_keeps_nothing(
    store: Store, embedder: OnnxEmbedder
) -> None:
    with serve() as server:
        server.add("/img/main.jpg", encode(photo(seed=3), "JPEG"), "image/jpeg")
        page = server.add("/2012/floods", article(server.base))
        async with Fetcher(LOOPBACK) as fetcher:
            keeper = PageImages(store.images, fetcher, per_page=0)
            report = await Ingester(
                store.documents, embedder, fetcher=fetcher, images=keeper
            ).ingest([page])
        assert report.added == 1 and report.images == 0
        assert not [p for p in server.seen if p.startswith("/img/")]
    assert store.images.count() == 0
