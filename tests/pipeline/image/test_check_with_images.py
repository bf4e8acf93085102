"""A check of a post whose claim is only in its image: real OCR, real index, real judge."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.claims.heuristic import extract_claims
from pipeline.credibility.importers import load_seed
from pipeline.credibility.policy import SourcePolicy
from pipeline.embedding.onnx import OnnxEmbedder
from pipeline.errors import EmptyPostError
from pipeline.evidence.ingest import Ingester
from pipeline.fetch.fetcher import Fetcher, FetchPolicy
from pipeline.image.claim_terms import image_queries
from pipeline.image.stage import ImageDeps
from pipeline.judge.claimreview import ReviewMatchJudge
from pipeline.records.domain import Label, Post
from pipeline.run import CheckConfig, CheckDeps, run_check
from storage import Store
from tests.conftest import FIXTURES
from tests.pipeline.image.images import encode, photo, screenshot
from tests.support.httpserver import serve

LOOPBACK = FetchPolicy(allow_private=True, respect_robots=False)


@pytest.fixture
async def indexed(store: Store, embedder: OnnxEmbedder, tmp_path: Path) -> Store:
    load_seed(store.sources)
    report = await Ingester(store.documents, embedder).ingest([str(FIXTURES / "corpus.jsonl")])
    assert not report.errors
    return store


def deps(store: Store, embedder: OnnxEmbedder, fetcher: Fetcher) -> CheckDeps:
    return CheckDeps(
        index=store.documents,
        embedder=embedder,
        rater=SourcePolicy(store.sources, unrated="allow"),
        judge=ReviewMatchJudge(embedder, match_threshold=0.75),
        images=ImageDeps(fetcher=fetcher),
    )


async def test_the_claim_in_a_screenshot_is_checked_and_the_broken_image_named(
    indexed: Store, embedder: OnnxEmbedder
) -> None:
    shot = encode(screenshot(["5G networks are spreading", "the coronavirus"], size=28), "PNG")
    broken = encode(photo(), "JPEG")[:500]
    with serve() as server:
        refs = (
            server.add("/shot.png", shot, "image/png"),
            server.add("/broken.jpg", broken, "image/jpeg"),
        )
        post = Post(id="p1", platform="test", platform_id="p1", text="😱😱", image_refs=refs)
        async with Fetcher(LOOPBACK) as fetcher:
            check = await run_check(
                post, deps=deps(indexed, embedder, fetcher), config=CheckConfig()
            )
    assert "5G networks are spreading" in check.claims[0].text
    assert check.verdict.label is Label.FALSE
    assert check.correction.references[0].url.startswith("https://www.politifact.com/")
    assert "The image could not be read (the image is truncated or corrupt" in check.correction.note
    assert [t.stage for t in check.timings][:2] == ["images", "claims"]


async def test_an_image_post_without_text_says_what_the_images_gave(
    indexed: Store, embedder: OnnxEmbedder
) -> None:
    with serve() as server:
        url = server.add("/p.png", encode(photo(), "PNG"), "image/png")
        post = Post(id="p2", platform="test", platform_id="p2", text="", image_refs=(url,))
        async with Fetcher(LOOPBACK) as fetcher:
            with pytest.raises(EmptyPostError, match="no check-worthy text was read in its 1"):
                await run_check(post, deps=deps(indexed, embedder, fetcher), config=CheckConfig())


async def test_image_names_add_terms_and_queries_up_to_five() -> None:
    from pipeline.claims.queries import build_queries
    from pipeline.records.image import ImageReport
    from tests.pipeline.image.test_stage import HEADLINE

    post = Post(id="p", platform="t", platform_id="p", text="The stock exchange was flooded.")
    claims = await extract_claims(post)
    queries = await build_queries(claims)
    with serve() as server:
        url = server.add("/shot.png", encode(screenshot(HEADLINE, size=26), "PNG"), "image/png")
        async with Fetcher(LOOPBACK) as fetcher:
            from pipeline.image.stage import read_images

            report = await read_images(
                Post(id="q", platform="t", platform_id="q", text="", image_refs=(url,)),
                deps=ImageDeps(fetcher=fetcher),
            )
    assert image_queries(claims, queries, ImageReport()) == queries
    found = image_queries(claims, queries, report)
    assert 1 < len(found) <= 5
    assert "sandy" in found[0].terms and "hurricane" in found[0].terms
    assert any("New York Stock Exchange" in q.text for q in found[1:])


async def test_a_reused_photo_is_traced_to_the_older_page_and_cited(
    indexed: Store, embedder: OnnxEmbedder
) -> None:
    from datetime import UTC, datetime

    from bench.image_transforms import caption_bar
    from pipeline.image.hashing import hash_picture
    from pipeline.records.image import IndexedImage
    from pipeline.reply.writer import verify_references

    older = "https://www.metoffice.gov.uk/news/heatwave-record"  # ingested, dated 2022-07-19
    original = photo((480, 360), seed=7)
    indexed.images.add(
        IndexedImage(
            image_id="sha-old",
            image_url="https://www.metoffice.gov.uk/img/heat.jpg",
            page_url=older,
            hashes=hash_picture(original),
            publisher="Met Office",
            published_at=datetime(2022, 7, 19, tzinfo=UTC),
            caption="Record heat in July 2022",
        )
    )
    with serve() as server:
        url = server.add("/now.jpg", encode(caption_bar(original), "JPEG"), "image/jpeg")
        post = Post(
            id="p3",
            platform="test",
            platform_id="p3",
            text="5G networks are spreading the coronavirus, look at this photo from today.",
            image_refs=(url,),
            created_at=datetime(2024, 9, 27, tzinfo=UTC),
        )
        async with Fetcher(LOOPBACK) as fetcher:
            base = deps(indexed, embedder, fetcher)
            images = ImageDeps(fetcher=fetcher, ocr=None, index=indexed.images)
            from dataclasses import replace

            check = await run_check(post, deps=replace(base, images=images), config=CheckConfig())
    cited = {r.url: r.number for r in check.correction.references}
    assert older in cited
    assert (
        f'This photo appeared on 19 July 2022 [{cited[older]}], captioned "Record heat in July '
        '2022", before the events the post describes.'
    ) in check.correction.note
    assert check.verdict.label is Label.FALSE  # the refuted text stands: false outranks misleading
    verify_references(check.correction, check.evidence)  # only retrieved pages are cited
