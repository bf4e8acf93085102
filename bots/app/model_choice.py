"""Choosing and building the language model (part of the composition root).

Selection (`FACTBOT_MODEL__MODE=auto`): a configured endpoint, else the local model when it is
pulled and llama-cpp-python is installed, else no model (the no-model judge).
"""

from __future__ import annotations

import logging
from typing import Literal

from bots.settings import ModelSettings, Settings
from pipeline.errors import ConfigError
from pipeline.llm.endpoint import ModelEndpoint
from pipeline.llm.local import LocalModelServer, local_model_available

log = logging.getLogger(__name__)

Choice = Literal["endpoint", "local", "none"]
JudgeChoice = Literal["verifier", "model", "hybrid"]


def choose(settings: Settings) -> Choice:
    """Return which model path the settings and this machine give."""
    mode = settings.model.mode
    if mode == "none":
        return "none"
    if mode == "endpoint" or (mode == "auto" and settings.model.base_url):
        return "endpoint"
    available = local_model_available(settings.models_dir)
    if mode == "local" and available is None:
        raise ConfigError(
            "FACTBOT_MODEL__MODE is 'local' but the local model is not ready: run "
            "`make model` (or `pip install '.[local]'` and `factbot models pull`)"
        )
    return "local" if available is not None else "none"


def judge_for(settings: Settings, choice: Choice) -> JudgeChoice:
    """Return which judge decides claims under settings when the model path is choice.

    `auto` is the language-model judge when an endpoint is configured, else the verifier
    (the local default). `model` or `hybrid` without any model falls back to the verifier.
    """
    wanted = settings.verifier.judge
    if wanted == "auto":
        return "model" if choice == "endpoint" else "verifier"
    if wanted != "verifier" and choice == "none":
        return "verifier"
    return wanted


def uses_model(settings: Settings, choice: Choice) -> bool:
    """Return whether checks call the language model at all under settings.

    Only a model or hybrid judge, or the verifier with model-split claims
    (FACTBOT_VERIFIER__CLAIMS=model), does; the local default (the verifier on heuristic
    claims) never does, so its server is not started and its threads are not kept free.
    """
    if choice == "none":
        return False
    return judge_for(settings, choice) != "verifier" or settings.verifier.claims == "model"


def endpoint_from(settings: ModelSettings) -> ModelEndpoint:
    """Return the default endpoint described by the settings."""
    if not settings.base_url:
        raise ConfigError("set FACTBOT_MODEL__BASE_URL to an OpenAI-compatible endpoint")
    return ModelEndpoint(
        base_url=settings.base_url,
        api_key=settings.api_key.get_secret_value() if settings.api_key else "",
        model=settings.model,
        supports_json_schema=settings.supports_json_schema,
        supports_images=settings.supports_images,
        input_price_per_mtok=settings.input_price_per_mtok,
        output_price_per_mtok=settings.output_price_per_mtok,
        timeout=settings.timeout,
        max_concurrency=settings.max_concurrency,
    )


def stage_endpoints(settings: ModelSettings, default: ModelEndpoint) -> dict[str, ModelEndpoint]:
    """Return per-stage endpoints: each override inherits what it does not set."""
    stages = {}
    for stage, o in settings.stages.items():
        stages[stage] = ModelEndpoint(
            base_url=o.base_url or default.base_url,
            api_key=o.api_key.get_secret_value() if o.api_key else default.secret(),
            model=o.model or default.model,
            supports_json_schema=(
                default.supports_json_schema
                if o.supports_json_schema is None
                else o.supports_json_schema
            ),
            supports_images=(
                default.supports_images if o.supports_images is None else o.supports_images
            ),
            input_price_per_mtok=(
                default.input_price_per_mtok
                if o.input_price_per_mtok is None
                else o.input_price_per_mtok
            ),
            output_price_per_mtok=(
                default.output_price_per_mtok
                if o.output_price_per_mtok is None
                else o.output_price_per_mtok
            ),
            timeout=default.timeout,
            max_concurrency=default.max_concurrency,
        )
    return stages


class LocalModel:
    """The local model server, started on first use and stopped with the app."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._server: LocalModelServer | None = None

    def endpoint(self) -> ModelEndpoint:
        """Return the running local server's endpoint (starting it if needed)."""
        return self._get_server().start()

    async def endpoint_async(self) -> ModelEndpoint:
        """Return the running local server's endpoint, starting it if needed without blocking
        the event loop (call it from the loop's own thread: the server dies with its thread)."""
        return await self._get_server().start_async()

    def _get_server(self) -> LocalModelServer:
        if self._server is None:
            path = local_model_available(self.settings.models_dir)
            if path is None:
                raise ConfigError("the local model is not pulled: run `factbot models pull`")
            model = self.settings.model
            self._server = LocalModelServer(
                path, n_threads=model.local_threads, prompt_cache_mb=model.local_prompt_cache_mb
            )
            log.info("starting the local model server", extra={"model": str(path)})
        return self._server

    @property
    def pid(self) -> int | None:
        """Return the process id of the started server, or None before it starts."""
        return self._server.pid if self._server is not None else None

    @property
    def died(self) -> bool:
        """Return whether the started server has exited on its own (killed or crashed)."""
        return self._server is not None and self._server.died

    def stop(self) -> None:
        """Stop the server if it runs."""
        if self._server is not None:
            self._server.stop()
            self._server = None
