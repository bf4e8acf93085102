"""A local model server that exits on its own is told apart from one stopped on purpose (the
evaluation stops instead of recording every later claim as a fallback)."""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from pipeline.llm.local import LocalModelServer

FAKE_SERVER = Path(__file__).resolve().parent / "fake_llama_server.py"


def test_a_killed_server_died_and_a_stopped_one_did_not(tmp_path: Path) -> None:
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    command = [sys.executable, str(FAKE_SERVER), "--load-seconds", "0.1"]
    server = LocalModelServer(model, command=command, startup_timeout=30)
    assert not server.died  # never started
    server.start()
    assert server.log_path is not None
    config = json.loads((server.log_path.parent / "config.json").read_text())
    assert config["models"][0]["cache"] is False  # the RAM prompt cache is off by default (OOM)
    assert not server.died and server.pid is not None
    os.kill(server.pid, signal.SIGKILL)
    deadline = time.monotonic() + 10
    while not server.died and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.died and not server.running
    server.stop()
    assert not server.died  # stopped on purpose

    again = LocalModelServer(model, command=command, startup_timeout=30)
    again.start()
    again.stop()
    assert not again.died


def test_a_crashed_server_is_reported_with_its_signal_and_the_rebuild(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The native llama.cpp build died like this at its first answer where the CPU advertised
    # AMX and the VM did not grant it (a protection fault: SIGSEGV).
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    command = [sys.executable, str(FAKE_SERVER), "--load-seconds", "0.1"]
    server = LocalModelServer(model, command=command, startup_timeout=30)
    server.start()
    assert server.pid is not None
    os.kill(server.pid, signal.SIGSEGV)
    deadline = time.monotonic() + 10
    while not server.died and time.monotonic() < deadline:
        time.sleep(0.05)
    with caplog.at_level(logging.ERROR, logger="pipeline.llm.local"):
        server.stop()
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert "died (signal SIGSEGV)" in record.getMessage()
    assert "make model" in record.getMessage()

    caplog.clear()
    again = LocalModelServer(model, command=command, startup_timeout=30)
    again.start()
    with caplog.at_level(logging.ERROR, logger="pipeline.llm.local"):
        again.stop()  # stopped on purpose: no error
    assert not [r for r in caplog.records if r.levelno == logging.ERROR]
