"""End to end: a post's photo is an older picture of another event -> misleading, citing it.

The real stack: the App and its check path, real SQLite, the older page ingested over loopback
with its images (the ingest command's keeper), the post's photo a resized and recompressed copy
served over loopback, real Pillow and imagehash; once with no model and once with the fake
OpenAI-compatible server answering as a model that believes the post.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from PIL import Image

from bots.app.image_index import page_keeper
from bots.app.root import App
from bots.settings import FetchSettings, ImageSettings, ModelSettings, SearchSettings, Settings
from pipeline.evidence.ingest import Ingester
from pipeline.image.intake import ImageLimits
from pipeline.records.domain import Label, Post, SourceRating, Tier
from pipeline.reply.writer import verify_references
from tests.pipeline.image.images import encode, photo
from tests.pipeline.llm.fake_openai import Seen, error, judge_labels, serve_openai
from tests.support.httpserver import LocalServer, serve

POSTED = datetime(2024, 9, 27, 9, tzinfo=UTC)
TEXT = "Storm Xavier flooded Manila yesterday, look at this photo of the streets."
BODY = " ".join(
    f"Paragraph {n}: the river burst its banks and residents waded through the streets of the "
    "capital while rescue teams moved families to higher ground."
    for n in range(6)
)


def page(base: str, *, title: str, image: str, published: str) -> str:
    return f"""<!doctype html><html><head><title>{title}</title>
<meta property="og:image" content="{base}{image}">
<meta property="article:published_time" content="{published}">
</head><body><article><h1>{title}</h1><p>{BODY}</p></article></body></html>"""


def reposted(picture: Image.Image) -> bytes:
    """Return picture as a platform re-serves it: resized to 60 % and recompressed."""
    small = picture.resize((picture.width * 3 // 5, picture.height * 3 // 5))
    return encode(small, "JPEG", quality=55)


def settings(tmp_path: Path, **extra: Any) -> Settings:
    extra.setdefault("search", SearchSettings(enabled=False))
    return Settings(
        data_dir=tmp_path / "data",
        fetch=FetchSettings(allowed_networks=("127.0.0.1/32",), respect_robots=False),
        images=ImageSettings(ocr="none"),
        **extra,
    )


async def ingest(app: App, *urls: str) -> None:
    fetcher = await app.fetcher()
    keeper = page_keeper(app.store.images, fetcher, per_page=4, limits=ImageLimits(), cpu=app.cpu)
    report = await Ingester(
        app.store.documents, app.embedder, fetcher=fetcher, images=keeper
    ).ingest(list(urls))
    assert not report.errors and report.images == len(urls)


def older_site(server: LocalServer, original: Image.Image) -> str:
    server.add("/img/bangkok.jpg", encode(original, "JPEG", quality=92), "image/jpeg")
    return server.add(
        "/2012/05/bangkok-floods",
        page(server.base, title="Flooding in Bangkok", image="/img/bangkok.jpg",
             published="2012-05-03T08:00:00Z"),
    )  # fmt: skip


def post(url: str, *, when: datetime = POSTED, pid: str = "p1") -> Post:
    return Post(
        id=pid, platform="test", platform_id=pid, text=TEXT, image_refs=(url,), created_at=when
    )


def assert_out_of_context(check: Any, older: str) -> None:
    assert check.verdict.label is Label.MISLEADING
    cited = {r.url: r.number for r in check.correction.references}
    assert older in cited
    assert (
        f'This photo appeared on 3 May 2012 [{cited[older]}], captioned "Flooding in Bangkok", '
        "before the storm the post describes."
    ) in check.correction.note
    (item,) = check.correction.items
    assert cited[older] in item.references and "out of context" in item.explanation
    traced = [e for e in check.evidence if e.image is not None]
    assert [e.document.url for e in traced] == [older] and traced[0].image.conflict == "date"
    assert traced[0].image.distance <= 12
    verify_references(check.correction, check.evidence)  # the reply audit


async def test_a_reused_photo_is_out_of_context_without_a_model(
    tmp_path: Path, embedder: Any
) -> None:
    original = photo((640, 480), seed=21)
    with serve() as server:
        older = older_site(server, original)
        shared = server.add("/media/post.jpg", reposted(original), "image/jpeg")
        async with App(settings(tmp_path), embedder=embedder) as app:
            await ingest(app, older)
            check = await app.run_check(post(shared))
            app.store.checks.save(check)
            kept = app.store.images.count()
            loaded = app.store.checks.get(check.id)
    assert check.judge == "verifier"  # no model endpoint: the verifier judges
    assert_out_of_context(check, older)
    assert_out_of_context(loaded, older)  # the stored check keeps its image traces
    assert kept == 2  # the page's image, and the post's own: found if a later post reuses it


def model_router(seen: Seen) -> Any:
    """A model that believes the post: every narrative supports it."""
    user = "\n".join(m["content"] for m in seen.messages if m["role"] == "user")
    if seen.stage == "claims":
        claim = "Storm Xavier flooded Manila on 26 September 2024."
        return {
            "checkable": True,
            "reason": "a news claim with a photo",
            "claims": [{"text": claim, "queries": ["Storm Xavier Manila flood"]}],
        }
    if seen.stage == "extraction":
        return {"quotes": []}
    if seen.stage == "judge":
        names = judge_labels(user)
        facet = {"status": "consistent", "note": ""}
        narratives = [
            {
                "narrative": label,
                "relation": "supports",
                "facets": {f: facet for f in ("who", "what", "when", "where", "why", "how")},
                "rationale": "The photo shows the flooded streets, as the post says.",
            }
            for name, label in names.items()
            if name.startswith("C1.")
        ]
        return {
            "claims": [
                {"claim": names["C1"], "narratives": narratives, "explanation": "It is accurate."}
            ]
        }
    return error(400)


async def test_a_model_that_believes_the_post_is_overruled_by_the_photos_provenance(
    tmp_path: Path, embedder: Any
) -> None:
    original = photo((640, 480), seed=22)
    with serve() as server, serve_openai(router=model_router) as fake:
        older = older_site(server, original)
        shared = server.add("/media/post.jpg", reposted(original), "image/jpeg")
        model = ModelSettings(
            base_url=fake.base_url, api_key="k", model="fake-model", refine_rounds=0
        )
        async with App(settings(tmp_path, model=model), embedder=embedder) as app:
            await ingest(app, older)
            check = await app.run_check(post(shared))
        judged = [s for s in fake.completions if s.stage == "judge"]
    assert check.judge == "model:fake-model"
    # The provenance reached the judge before the verdict, as evidence it read.
    assert judged and re.search(r"appeared on 3 May 2012", judged[0].messages[-1]["content"])
    assert_out_of_context(check, older)


async def test_no_provenance_from_a_dissimilar_photo_a_later_one_or_an_uncitable_page(
    tmp_path: Path, embedder: Any
) -> None:
    original = photo((640, 480), seed=23)
    with serve() as server:
        older = older_site(server, original)
        blog = server.add(
            "/blog/2010/flood-photos",
            page(server.base, title="Flood photos", image="/img/blog.jpg",
                 published="2010-01-01T00:00:00Z"),
        )  # fmt: skip
        other = photo((640, 480), seed=91)
        server.add("/img/blog.jpg", encode(other, "JPEG", quality=92), "image/jpeg")
        dissimilar = server.add(
            "/media/other.jpg", reposted(photo((640, 480), seed=57)), "image/jpeg"
        )
        same = server.add("/media/post.jpg", reposted(original), "image/jpeg")
        blogged = server.add("/media/blogged.jpg", reposted(other), "image/jpeg")
        async with App(settings(tmp_path), embedder=embedder) as app:
            app.store.sources.upsert_many(
                [SourceRating("127.0.0.1/blog", Tier.BLOCKED, "test: a blocked section", "manual")]
            )
            await ingest(app, older, blog)
            checks = {
                "dissimilar": await app.run_check(post(dissimilar, pid="a")),
                # Posted before the page appeared: the page is not an earlier appearance.
                "later": await app.run_check(
                    post(same, when=datetime(2012, 4, 1, tzinfo=UTC), pid="b")
                ),
                "uncitable": await app.run_check(post(blogged, pid="c")),
            }
            # The "later" post's image is now in the index (an earlier check), so a post of the
            # same photo finds it as an appearance, but a post is never cited.
            reused = await app.run_check(post(same, pid="d", when=datetime(2012, 4, 2, tzinfo=UTC)))
            appearances = app.store.images.similar(checks["later"].images.descriptions[0].hashes)
    for name, check in [*checks.items(), ("reused", reused)]:
        assert not [e for e in check.evidence if e.image is not None], name
        assert "This photo" not in check.correction.note, name
        assert check.verdict.label is not Label.MISLEADING, name
        assert all("/blog/" not in r.url for r in check.correction.references), name
    assert any(hit.page_url == "factbot:post/test/b" for hit, _ in appearances)


async def test_a_page_web_search_fetched_during_the_check_is_the_older_appearance(
    tmp_path: Path, embedder: Any
) -> None:
    original = photo((640, 480), seed=24)
    with serve() as server:
        older = older_site(server, original)
        found = {"url": older, "title": "Flooding in Bangkok", "content": "floods", "engine": "x"}
        server.add("/search", json.dumps({"query": "q", "results": [found]}), "application/json")
        shared = server.add("/media/post.jpg", reposted(original), "image/jpeg")
        search = SearchSettings(providers=["searxng"], searxng_url=server.base, fact_check_sites=[])
        async with App(settings(tmp_path, search=search), embedder=embedder) as app:
            assert app.store.images.count() == 0  # nothing ingested before the check
            check = await app.run_check(post(shared))
    assert any(p.startswith("/search") for p in server.seen)
    assert_out_of_context(check, older)
