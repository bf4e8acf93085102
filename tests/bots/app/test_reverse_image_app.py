"""Reverse image search through the composition root: settings, doctor, and a stored check."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from bench.image_transforms import caption_bar
from bots.app.diagnosis import diagnose
from bots.app.root import App
from bots.cli.doctor import render_full
from bots.settings import (
    FetchSettings,
    ImageSettings,
    ReverseImageSettings,
    SearchSettings,
    Settings,
    load_settings,
)
from pipeline.records.domain import Post
from tests.pipeline.image.images import encode, photo
from tests.pipeline.image.test_reverse_trace import PAGE
from tests.support.fake_reverse_image import Appearance, FakeTinEye
from tests.support.httpserver import serve


def test_off_unless_a_key_is_set_and_keys_come_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert Settings(data_dir=tmp_path).reverse_image.keyed() == []
    monkeypatch.setenv("FACTBOT_REVERSE_IMAGE__TINEYE_API_KEY", "tin-secret")
    monkeypatch.setenv("FACTBOT_REVERSE_IMAGE__VISION_API_KEY", " ")
    monkeypatch.setenv("FACTBOT_REVERSE_IMAGE__PAGES_PER_IMAGE", "3")
    settings = load_settings()
    assert settings.reverse_image.keyed() == ["tineye"]
    assert settings.reverse_image.pages_per_image == 3


def test_doctor_lists_the_reverse_image_providers_with_their_keys(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path,
        search=SearchSettings(enabled=False),
        reverse_image=ReverseImageSettings(tineye_api_key=SecretStr("tin-secret")),
    )
    found = asyncio.run(diagnose(settings, integrity=False))
    reverse = {s.name: s for s in found.sources if s.kind == "reverse image search"}
    assert set(reverse) == {"serpapi", "vision", "tineye"}
    assert reverse["tineye"].answers and "image URL, or its bytes" in reverse["tineye"].detail
    assert not reverse["serpapi"].answers
    assert reverse["serpapi"].detail == "off: no key (FACTBOT_REVERSE_IMAGE__SERPAPI_API_KEY)"
    text = render_full(found)
    assert "tineye [reverse image search]: answers" in text and "tin-secret" not in text
    off = Settings(
        data_dir=tmp_path,
        images=ImageSettings(enabled=False),
        reverse_image=ReverseImageSettings(tineye_api_key=SecretStr("tin-secret")),
    )
    found = asyncio.run(diagnose(off, integrity=False))
    tineye = next(s for s in found.sources if s.name == "tineye")
    assert not tineye.answers and "images are not read" in tineye.detail


async def test_an_app_check_traces_the_image_and_stores_the_appearance(
    tmp_path: Path, embedder: Any
) -> None:
    original = photo((480, 360), seed=11)
    with serve() as site, serve() as api:
        older_image = site.add("/img/old.jpg", encode(original, "JPEG"), "image/jpeg")
        older_page = site.add(
            "/2013/storm",
            PAGE.format(
                title="Storm damage in Lakeside, March 2013",
                date="2013-03-10T08:00:00Z",
                site="Lakeside Post",
                lead="A storm hit Lakeside on 9 March 2013.",
                image=older_image,
            ),
        )
        post_image = site.add("/now.jpg", encode(caption_bar(original), "JPEG"), "image/jpeg")
        tineye = FakeTinEye(api)
        tineye.appearances.append(Appearance(older_page, older_image, crawl_date="2013-03-11"))
        settings = Settings(
            data_dir=tmp_path / "data",
            search=SearchSettings(enabled=False),
            fetch=FetchSettings(allowed_networks=("127.0.0.1/32",)),
            images=ImageSettings(ocr="none"),
            reverse_image=ReverseImageSettings(
                tineye_api_key=SecretStr(tineye.key), base_urls={"tineye": tineye.base}
            ),
        )
        app = App(settings, embedder=embedder)
        post = Post(
            id="p",
            platform="test",
            platform_id="p",
            text="A storm destroyed 300 houses in Lakeside this morning, look at this photo.",
            image_refs=(post_image,),
            created_at=datetime(2024, 9, 27, tzinfo=UTC),
        )
        try:
            check = await app.check(post)
            stored = app.store.checks.get(check.id)
            kept = app.store.images.count()
        finally:
            await app.close_fetcher()
            app.store.close()
    assert "reverse images" in [t.stage for t in check.timings]
    assert len(tineye.uploads) == 1  # a loopback image has no public URL: its bytes were sent
    cited = {r.url for r in check.correction.references}
    assert older_page in cited
    assert "This photo appeared on 10 March 2013" in check.correction.note
    assert [(p.provider, p.reachable) for p in stored.search.reverse_image] == [("tineye", True)]
    # the earlier copy, and the post's own picture (FACTBOT_IMAGE_INDEX__CHECK_IMAGES)
    assert kept == 2
