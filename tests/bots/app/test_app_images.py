"""The App reads a post's attached images through its one fetcher, as settings say."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from bots.app.model_choice import endpoint_from, stage_endpoints
from bots.app.root import App
from bots.settings import FetchSettings, ImageSettings, ModelSettings, Settings, StageModelSettings
from pipeline.image.caption import LocalCaptioner, VisionCaptioner
from pipeline.llm.client import LLMClient, ModelEndpoint
from pipeline.records.domain import Post
from tests.pipeline.image.images import encode, photo, screenshot
from tests.pipeline.llm.fake_openai import Seen, answer, error, serve_openai
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
            deps = await app.checks.image_deps(_post(url))
            assert deps is not None and deps.limits.max_pages == 0  # no web search: no og:image
            assert deps.fetcher is await app.fetcher()
            assert deps.index is app.store.images
            assert (
                await app.checks.image_deps(Post(id="q", platform="t", platform_id="q", text="x"))
                is None
            )
            check = await app.run_check(_post(url))
    assert "5G networks are spreading the coronavirus" in check.claims[0].text
    stages = [t.stage for t in check.timings]
    assert "images" in stages and stages.index("images") < stages.index("claims")


async def test_images_can_be_turned_off(tmp_path: Path, embedder: Any) -> None:
    settings = Settings(data_dir=tmp_path / "data", images=ImageSettings(enabled=False))
    async with App(settings, embedder=embedder) as app:
        assert await app.checks.image_deps(_post("https://cdn.example.org/a.png")) is None
        assert app.resources.ocr() is not None and app.resources.ocr() is app.resources.ocr()
        assert app.checks.captioner() is None


def test_a_caption_model_directory_gives_a_local_captioner(tmp_path: Path, embedder: Any) -> None:
    settings = Settings(data_dir=tmp_path / "d", images=ImageSettings(caption_model_dir=tmp_path))
    app = App(settings, embedder=embedder)
    captioner = app.checks.captioner()
    assert isinstance(captioner, LocalCaptioner) and captioner.directory == tmp_path
    assert app.checks.captioner() is captioner


CAPTION = "Floodwater covers a street of parked cars at dusk."


def _caption_router(seen: Seen) -> Any:
    return answer({"caption": CAPTION}) if seen.stage == "caption" else error(400)


def test_a_vision_endpoint_captions_the_images_of_a_check(tmp_path: Path, embedder: Any) -> None:
    picture = encode(photo((400, 300), seed=3), "JPEG")
    with serve() as server, serve_openai(router=_caption_router) as fake:
        url = server.add("/flood.jpg", picture, "image/jpeg")
        settings = Settings(
            data_dir=tmp_path / "data",
            fetch=FetchSettings(allowed_networks=("127.0.0.1/32",)),
            model=ModelSettings(
                base_url=fake.base_url, api_key="k", supports_images=True, refine_rounds=0
            ),
            images=ImageSettings(ocr="none"),
        )
        app = App(settings, embedder=embedder)
        post = Post(
            id="v",
            platform="test",
            platform_id="v",
            text="This street in Miami flooded yesterday after the hurricane.",
            image_refs=(url,),
        )
        check = asyncio.run(app.run_check(post))
        app.close()
        captions = [seen for seen in fake.completions if seen.stage == "caption"]
    (seen,) = captions
    assert seen.messages[1]["content"][1]["image_url"]["url"].startswith("data:image/jpeg")
    (description,) = check.images.descriptions
    assert description.caption is not None and description.caption.text == CAPTION
    assert description.caption.model == "vision:gpt-4o-mini"


def _client(*, images: bool, caption_images: bool | None = None) -> LLMClient:
    default = ModelEndpoint(base_url="http://127.0.0.1:9/v1", api_key="k", model="m")
    default = dataclasses.replace(default, supports_images=images)
    stages = {}
    if caption_images is not None:
        stages["caption"] = dataclasses.replace(default, supports_images=caption_images)
    return LLMClient(default, stages=stages)


@pytest.mark.parametrize(
    ("mode", "images", "directory", "chosen"),
    [
        ("auto", True, True, VisionCaptioner),
        ("auto", False, True, LocalCaptioner),
        ("auto", False, False, None),
        ("vision", False, True, None),
        ("vision", True, False, VisionCaptioner),
        ("local", True, True, LocalCaptioner),
        ("local", True, False, None),
        ("off", True, True, None),
    ],
)
def test_the_caption_setting_chooses_the_captioner(
    tmp_path: Path, embedder: Any, mode: str, images: bool, directory: bool, chosen: type | None
) -> None:
    settings = Settings(
        data_dir=tmp_path / "d",
        images=ImageSettings(caption=mode, caption_model_dir=tmp_path if directory else None),  # type: ignore[arg-type]
    )
    app = App(settings, embedder=embedder)
    captioner = app.checks.captioner(_client(images=images))
    assert (captioner is None) if chosen is None else isinstance(captioner, chosen)
    if mode in ("auto", "vision"):
        assert app.checks.captioner(None) is (
            None if mode == "vision" or not directory else app.checks.captioner()
        )


def test_the_caption_stage_override_decides_image_support(tmp_path: Path, embedder: Any) -> None:
    app = App(Settings(data_dir=tmp_path / "d"), embedder=embedder)
    assert isinstance(
        app.checks.captioner(_client(images=False, caption_images=True)), VisionCaptioner
    )
    assert app.checks.captioner(_client(images=True, caption_images=False)) is None
    stage = StageModelSettings(supports_images=True)
    settings = Settings(
        data_dir=tmp_path / "e",
        model=ModelSettings(base_url="http://127.0.0.1:9/v1", stages={"caption": stage}),
    )
    default = endpoint_from(settings.model)
    assert not default.supports_images
    assert stage_endpoints(settings.model, default)["caption"].supports_images
