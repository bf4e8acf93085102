"""Light processes: `factbot --help`, `factbot show ID` and an adapter load no model or extractor.

Each runs in a fresh interpreter, which then reports the heavy modules in `sys.modules`. Heavy
libraries are imported inside the functions that need them (the embedder's model load,
extraction, clustering, building an LLM client).

numpy is allowed: storage's vector index keeps its vectors as numpy arrays and the embedder's
`Vectors` type is one; it loads no model and no weights.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from bots.app.root import App
from bots.settings import Settings
from pipeline.embedding.onnx import OnnxEmbedder
from pipeline.inputs.posts import post_from_text
from tests.conftest import REPO

HEAVY = (
    "torch",
    "sentence_transformers",
    "transformers",
    "sklearn",
    "trafilatura",
    "htmldate",
    "openai",
    "llama_cpp",
)
_REPORT = f"""
import json, sys
print("\\n" + json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))
"""


def _heavy_after(code: str, data_dir: Path) -> tuple[list[str], str]:
    """Run code in a fresh interpreter; return the heavy modules it imported and its output."""
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "FACTBOT_DATA_DIR": str(data_dir),
        "FACTBOT_MODEL__MODE": "none",
    }
    done = subprocess.run(
        [sys.executable, "-c", code + _REPORT],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    *output, report = done.stdout.rstrip("\n").split("\n")
    return json.loads(report), "\n".join(output)


def _cli(*args: str) -> str:
    return f"""
from bots.cli.main import main
try:
    main({list(args)!r}, prog_name="factbot", standalone_mode=False)
except SystemExit as exc:
    assert not exc.code, exc.code
"""


def _stored_check(data_dir: Path, embedder: OnnxEmbedder) -> str:
    """Run and store one check through the real App; return its id."""
    app = App(Settings(data_dir=data_dir), embedder=embedder)
    try:
        post = post_from_text("5G networks spread the coronavirus!", max_chars=10_000)
        return asyncio.run(app.check(post)).id
    finally:
        app.close()


def test_help_imports_no_heavy_library(tmp_path: Path) -> None:
    heavy, output = _heavy_after(_cli("--help"), tmp_path)
    assert "Usage: factbot" in output
    assert heavy == []


def test_show_imports_no_heavy_library(tmp_path: Path, embedder: OnnxEmbedder) -> None:
    check_id = _stored_check(tmp_path, embedder)
    heavy, output = _heavy_after(_cli("show", "--json", check_id), tmp_path)
    assert json.loads(output)["id"] == check_id
    assert heavy == []


def test_an_adapter_process_imports_no_heavy_library(tmp_path: Path) -> None:
    code = """
import bots.platforms, bots.runtime
from bots.app.root import App
from bots.settings import load_settings
app = App(load_settings())
app.checks.deps()  # the store, embedder, rater and judge, built but not yet used
app.close()
"""
    heavy, _ = _heavy_after(code, tmp_path)
    assert heavy == []


def test_the_report_sees_a_heavy_import(tmp_path: Path) -> None:
    code = """
from pipeline.fetch.extract import extract_page
try:
    extract_page("<html><body><p>x</p></body></html>", url="https://a.test/", domain="a.test")
except Exception:
    pass
"""
    heavy, _ = _heavy_after(code, tmp_path)
    assert "trafilatura" in heavy and "htmldate" in heavy
