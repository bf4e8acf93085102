"""The local server's config file: read by llama-cpp-python's own settings model, with the
per-token logits off and the RAM prompt cache only when asked for."""

from __future__ import annotations

from pathlib import Path

import pytest

from bots.app.model_choice import LocalModel
from bots.settings import ModelSettings, Settings
from pipeline.llm.local import LocalModelServer
from pipeline.llm.models import DEFAULT_MODEL, verified
from tests.conftest import REPO

MODELS = REPO / ".models"


def _config(server: LocalModelServer) -> dict:  # type: ignore[type-arg]
    server.port = 5555
    return server._config()


def test_logits_of_every_prompt_token_are_not_kept(tmp_path: Path) -> None:
    model = _config(LocalModelServer(tmp_path / "m.gguf"))["models"][0]
    # The server's own default is True: a 2.5 GB logits array at n_ctx 4096, copied into every
    # cached prompt state (the 23.5 GB OOM of session 6).
    assert model["logits_all"] is False
    assert model["cache"] is False


def test_the_prompt_cache_is_sized_in_megabytes(tmp_path: Path) -> None:
    model = _config(LocalModelServer(tmp_path / "m.gguf", prompt_cache_mb=512))["models"][0]
    assert model["cache"] is True and model["cache_type"] == "ram"
    assert model["cache_size"] == 512 * 1024 * 1024


def test_llama_cpp_server_reads_the_config_as_written(tmp_path: Path) -> None:
    settings = pytest.importorskip("llama_cpp.server.settings")
    config = _config(LocalModelServer(tmp_path / "m.gguf", prompt_cache_mb=64))
    parsed = settings.ConfigFileSettings.model_validate(config)
    (model,) = parsed.models
    assert model.logits_all is False and model.cache is True and model.cache_size == 64 << 20
    assert model.n_ctx == 4096 and parsed.interrupt_requests is False


@pytest.mark.skipif(
    verified(DEFAULT_MODEL, MODELS) is None, reason="the local model is not pulled (make model)"
)
def test_the_setting_reaches_the_server(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path, model=ModelSettings(models_dir=MODELS, local_prompt_cache_mb=256)
    )
    server = LocalModel(settings)._get_server()  # built, not started
    assert server.prompt_cache_mb == 256 and not server.running
    local = LocalModel(settings)
    assert local.pid is None  # nothing started: the latency bench reads no process
    local._get_server()
    assert local.pid is None
