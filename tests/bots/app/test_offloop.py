"""Nothing holds the event loop: whole checks in asyncio debug mode, every slow callback caught.

In debug mode asyncio logs "Executing <handle> took N seconds" (logger `asyncio`) for every
callback or task step that runs longer than `loop.slow_callback_duration`. A check, with live
web search against local stand-ins, on the no-model path and on the model path against the
OpenAI stand-in, must not log one over 100 ms: parsing, extraction, embedding and clustering
belong in the CPU pool. The app is started first, as serving starts it: lingua's models, which
hold the interpreter while they load, are loaded then, not mid-check.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from bench.prompt_reading import quotes_of
from bots.app.root import App
from bots.settings import FetchSettings, ModelSettings, SearchSettings, Settings, load_settings
from pipeline.embedding.onnx import OnnxEmbedder
from pipeline.errors import ConfigError
from pipeline.inputs.posts import post_from_text
from pipeline.records.domain import Check, Label
from tests.bots.app.test_web_check import publishers
from tests.pipeline.llm.fake_openai import Seen, error, judge_labels, serve_openai
from tests.support.httpserver import LocalServer
from tests.support.slowloop import run_watched

T = TypeVar("T")
POST = "5G networks spread the coronavirus!"


@pytest.fixture
def site() -> Iterator[LocalServer]:
    with publishers() as running:
        yield running


def _app(
    tmp_path: Path,
    site: LocalServer,
    embedder: OnnxEmbedder,
    model: ModelSettings | None = None,
) -> App:
    settings = Settings(
        data_dir=tmp_path / "data",
        search=SearchSettings(providers=["searxng"], searxng_url=site.base, fact_check_sites=[]),
        fetch=FetchSettings(allowed_networks=("127.0.0.1/32",)),
        model=model or ModelSettings(mode="none"),
        cpu_threads=2,
    )
    app = App(settings, embedder=embedder)
    asyncio.run(app.start())  # as serving does: store opened, embedder and lingua loaded
    return app


def _router(seen: Seen) -> Any:
    """Answer each stage as a capable model would."""
    user = "\n".join(m["content"] for m in seen.messages if m["role"] == "user")
    if seen.stage == "claims":
        claim = {"text": "5G networks spread the coronavirus.", "queries": ["5G coronavirus"]}
        return {"checkable": True, "reason": "a health claim", "claims": [claim]}
    if seen.stage == "extraction":
        return {"quotes": quotes_of(user, "Viruses cannot travel on radio waves", "refutes")}
    if seen.stage == "judge":
        real = judge_labels(user)
        facet = {"status": "consistent", "note": ""}
        narratives = [
            {
                "narrative": label,
                "relation": "conflicts",
                "facets": dict.fromkeys(("who", "what", "when", "where", "why", "how"), facet),
                "rationale": "Viruses cannot travel on radio waves.",
            }
            for name, label in real.items()
            if name.startswith("C1.")
        ]
        return {
            "claims": [
                {
                    "claim": real["C1"],
                    "narratives": narratives,
                    "explanation": "5G does not spread the coronavirus.",
                }
            ]
        }
    return error(400)


def _check(app: App) -> Callable[[], Awaitable[Check]]:
    async def work() -> Check:
        try:
            return await app.check(post_from_text(POST, max_chars=10_000))
        finally:
            await app.close_fetcher()

    return work


def test_a_web_check_without_a_model_never_holds_the_loop(
    tmp_path: Path, site: LocalServer, embedder: OnnxEmbedder
) -> None:
    app = _app(tmp_path, site, embedder)
    try:
        check, slow = run_watched(_check(app))
    finally:
        app.close()
    assert check.verdict.label is Label.FALSE  # the whole path ran: search, fetch, extraction
    assert "web" in [t.stage for t in check.timings]
    assert slow == []


def test_a_web_check_with_a_model_never_holds_the_loop(
    tmp_path: Path, site: LocalServer, embedder: OnnxEmbedder
) -> None:
    with serve_openai(router=_router) as fake:
        model = ModelSettings(
            base_url=fake.base_url, api_key="test-key", model="fake-model", refine_rounds=0
        )
        app = _app(tmp_path, site, embedder, model)
        try:
            check, slow = run_watched(_check(app))
        finally:
            app.close()
        stages = [s.stage for s in fake.completions]
    assert check.judge == "model:fake-model"
    assert stages == ["claims", "extraction", "judge"]
    assert check.verdict.label is Label.FALSE
    assert slow == []


def _busy(seconds: float) -> None:
    """Hold the calling thread as CPU-bound work does."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def test_the_watch_catches_a_callback_that_holds_the_loop() -> None:
    async def hold() -> None:
        _busy(0.15)  # what a page parsed on the loop does

    _, slow = run_watched(hold)
    assert len(slow) == 1 and "took 0.1" in slow[0]


def test_the_cpu_pool_size_is_a_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTBOT_CPU_THREADS", "3")
    monkeypatch.setenv("FACTBOT_DATA_DIR", str(tmp_path))
    app = App(load_settings())
    try:
        assert app.cpu.threads == 3
        assert app.embedder.cpu is app.cpu and app.checks.deps().cpu is app.cpu
    finally:
        app.close()
    monkeypatch.setenv("FACTBOT_CPU_THREADS", "0")
    with pytest.raises(ConfigError, match="FACTBOT_CPU_THREADS"):
        load_settings()
