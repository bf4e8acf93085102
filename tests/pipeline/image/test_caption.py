"""Captions: a vision endpoint behind the one model client, and a local model directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.errors import ImageError
from pipeline.image.caption import LocalCaptioner, VisionCaptioner
from pipeline.image.intake import decode_image
from pipeline.image.stage import ImageDeps, read_one
from pipeline.llm.client import LLMClient, ModelEndpoint, ModelUnavailableError, RetryPolicy
from pipeline.records.image import ImageOrigin, ImageSource, LoadedImage
from tests.pipeline.image.images import encode, photo
from tests.pipeline.image.tiny_captioner import WORDS, build_tiny_captioner
from tests.pipeline.llm.fake_openai import answer, error, serve_openai

# The tiny captioner is torch: with the other torch tests on one worker, it is imported once.
pytestmark = pytest.mark.xdist_group("torch")


def image() -> LoadedImage:
    data = encode(photo((400, 300)), "JPEG")
    return decode_image(data, source=ImageSource("t", ImageOrigin.INLINE), url="t")


def client(base_url: str, *, images: bool) -> LLMClient:
    endpoint = ModelEndpoint(base_url=base_url, api_key="k", model="vis", supports_images=images)
    return LLMClient(endpoint, retry=RetryPolicy(attempts=1, backoff=0.001))


async def test_vision_endpoint_gets_the_picture_as_an_image_part() -> None:
    caption = {"caption": "A flooded street in  Lower Manhattan at night."}
    with serve_openai([answer(caption)]) as fake:
        async with client(fake.base_url, images=True) as llm:
            description = await read_one(
                image(), deps=ImageDeps(fetcher=None, ocr=None, captioner=VisionCaptioner(llm))
            )
        (seen,) = fake.completions
    assert seen.stage == "caption"
    parts = seen.messages[1]["content"]
    assert parts[0]["type"] == "text"
    assert parts[1]["image_url"]["url"].startswith("data:image/jpeg;base64,")
    assert description.caption is not None
    assert description.caption.text == "A flooded street in Lower Manhattan at night."
    assert description.caption.model == "vision:vis"
    assert "It shows: A flooded street in Lower Manhattan" in description.text
    assert "Lower Manhattan" in description.terms


async def test_a_failing_vision_endpoint_leaves_the_image_without_a_caption() -> None:
    with serve_openai([error(500)]) as fake:
        async with client(fake.base_url, images=True) as llm:
            description = await read_one(
                image(), deps=ImageDeps(fetcher=None, ocr=None, captioner=VisionCaptioner(llm))
            )
    assert description.caption is None and description.hashes.phash


async def test_an_endpoint_without_images_is_not_sent_any() -> None:
    with serve_openai([]) as fake:
        async with client(fake.base_url, images=False) as llm:
            with pytest.raises(ModelUnavailableError, match="does not read images"):
                await VisionCaptioner(llm).caption(image(), cpu=None)
        assert fake.requests == []


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_captioner(tmp_path_factory.mktemp("captioner"))


async def test_local_captioner_loads_a_model_directory_and_captions(tiny_model: Path) -> None:
    captioner = LocalCaptioner(tiny_model, max_new_tokens=5)
    caption = await captioner.caption(image(), cpu=None)
    assert caption.model == f"local:{tiny_model.name}"
    assert all(word in WORDS for word in caption.text.split())  # random weights, real words
    assert captioner._load() is captioner._load()  # loaded once


def test_local_captioner_without_a_model_says_so(tmp_path: Path) -> None:
    with pytest.raises(ImageError, match=r"config\.json missing"):
        LocalCaptioner(tmp_path).describe(image())
