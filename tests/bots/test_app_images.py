"""The App reads a post's attached images through its one fetcher, as settings say."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bots.app.root import App
from bots.settings import FetchSettings, ImageSettings, Settings
from pipeline.records import Post
from tests.image.images import encode, screenshot
from tests.support.httpserver import serve


def _post(*refs: str) -> Post:
    return Post(id="p", platform="test", platform_id="p", text="look", image_refs=refs)


async def test_attached_screenshot_is_read_and_checked(tmp_path: Path, embedder: Any) -> None:
    shot = encode(screenshot(["5G networks are spreading the coronavirus"], size=28), "PNG")
    with serve() as server:
        url = server.add("/shot.png", shot, "image/png")
        settings = Settings(
            data_dir=tmp_path / "data", fetch=FetchSettings(allowed_networks=("127.0.0.1/32",))
        )
        async with App(settings, embedder=embedder) as app:
            deps = await app.image_deps(_post(url))
            assert deps is not None and deps.limits.max_pages == 0  # no web search: no og:image
            assert deps.fetcher is await app.fetcher()
            assert deps.index is app.store.images
            assert (
                await app.image_deps(Post(id="q", platform="t", platform_id="q", text="x")) is None
            )
            check = await app.run_check(_post(url))
    assert "5G networks are spreading the coronavirus" in check.claims[0].text
    assert check.timings[0].stage == "images"


async def test_images_can_be_turned_off(tmp_path: Path, embedder: Any) -> None:
    settings = Settings(data_dir=tmp_path / "data", images=ImageSettings(enabled=False))
    async with App(settings, embedder=embedder) as app:
        assert await app.image_deps(_post("https://cdn.example.org/a.png")) is None
        assert app.ocr() is not None and app.ocr() is app.ocr()
        assert app.captioner() is None


def test_a_caption_model_directory_gives_a_local_captioner(tmp_path: Path, embedder: Any) -> None:
    settings = Settings(data_dir=tmp_path / "d", images=ImageSettings(caption_model_dir=tmp_path))
    app = App(settings, embedder=embedder)
    captioner = app.captioner()
    assert captioner is not None and captioner.directory == tmp_path
    assert app.captioner() is captioner
