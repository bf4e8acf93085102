"""The real local model behind LLMClient: llama-cpp-python's server and the pulled GGUF file.

Skipped unless llama-cpp-python is installed and the model is pulled. The model is looked for in
$FACTBOT_TEST_MODEL (a .gguf file), else in $FACTBOT_MODEL__MODELS_DIR, else in <repo>/.models/
(`factbot models pull --models-dir .models`).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import httpx
import pytest
from pydantic import BaseModel

from pipeline.llm.client import LLMClient
from pipeline.llm.local import LocalModelError, LocalModelServer, llama_cpp_installed
from pipeline.llm.models import DEFAULT_MODEL, verified
from tests.conftest import REPO

# The local model server takes the machine's cores: one local-model test at a time, and the
# module's server started once (one worker runs the whole group).
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("local_model"), pytest.mark.timeout(900)]
log = logging.getLogger(__name__)

SYSTEM = (
    "You judge whether a piece of evidence supports or refutes a claim, or is irrelevant to it. "
    "Use only the evidence."
)
USER = (
    "Claim: The Eiffel Tower is in Berlin.\n"
    "Evidence: The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, "
    "France."
)


class Stance(BaseModel):
    label: Literal["supports", "refutes", "irrelevant"]


def _model_file() -> Path:
    if not llama_cpp_installed():
        pytest.skip("llama-cpp-python is not installed: pip install 'llama-cpp-python[server]'")
    explicit = os.environ.get("FACTBOT_TEST_MODEL")
    if explicit:
        if not Path(explicit).is_file():
            pytest.skip(f"FACTBOT_TEST_MODEL={explicit} is not a file")
        return Path(explicit)
    folder = Path(os.environ.get("FACTBOT_MODEL__MODELS_DIR") or REPO / ".models")
    found = verified(DEFAULT_MODEL, folder)
    if found is None:
        pytest.skip(
            f"no verified model in {folder}: run `factbot models pull --models-dir {folder}`"
        )
    return found


@pytest.fixture(scope="module")
def server() -> Iterator[LocalModelServer]:
    """The real model server, started once for this module."""
    path = _model_file()
    started = time.monotonic()
    with LocalModelServer(path) as running:
        log.warning("server started in %.1fs", time.monotonic() - started)
        yield running


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def test_one_structured_call_on_the_local_model(server: LocalModelServer) -> None:
    async with LLMClient(server.endpoint) as client:
        started = time.monotonic()
        answer = await client.complete(
            stage="stance", system=SYSTEM, user=USER, schema=Stance, max_tokens=64
        )
        seconds = time.monotonic() - started
    assert isinstance(answer, Stance)
    used = client.usage()["stance"]
    assert used.calls >= 1
    assert used.input_tokens > 0
    assert used.output_tokens > 0
    assert used.failures == 0
    assert server._proc is not None
    log.warning(
        "answer %s in %.2fs; %d in, %d out; server RSS %.0f MiB",
        answer.label,
        seconds,
        used.input_tokens,
        used.output_tokens,
        _rss_mib(server._proc.pid),
    )


def test_the_server_demands_its_key(server: LocalModelServer) -> None:
    url = f"{server.endpoint.base_url}/models"
    assert httpx.get(url, timeout=5).status_code == 401
    assert httpx.get(url, headers={"Authorization": "Bearer wrong"}, timeout=5).status_code == 401


def test_stop_ends_the_process_and_deletes_its_files(tmp_path: Path) -> None:
    model = _model_file()
    local = LocalModelServer(model)
    local.start()
    proc, log_path = local._proc, local.log_path
    assert proc is not None and log_path is not None and log_path.exists()
    local.stop()
    assert proc.returncode is not None
    assert not local.running
    assert not log_path.exists()
    local.stop()  # twice is harmless
    with pytest.raises(LocalModelError, match="not started"):
        _ = local.endpoint


def test_a_broken_model_file_fails_fast_with_the_server_log(tmp_path: Path) -> None:
    if not llama_cpp_installed():
        pytest.skip("llama-cpp-python is not installed")
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"not a gguf file" * 100)
    started = time.monotonic()
    with pytest.raises(LocalModelError, match="exited with code") as caught:
        LocalModelServer(bogus, startup_timeout=60).start()
    assert caught.value.log_tail  # the server's own error is in the message
    assert time.monotonic() - started < 60
