"""The deployment files in deploy/ say what the code does.

The suite does not start containers: `make deploy-test` builds the images and runs both compose
files (docs/operations/deploy.md). What can drift between those runs is checked here: every
command a container or unit runs is a real `factbot` command, every FACTBOT_* variable they
set is a real setting and takes effect, services, volumes and mounted files exist, the health
check asks a route the API serves, and the stop grace outlasts the workers' shutdown timeout.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from fastapi.testclient import TestClient

from bots.app.root import App
from bots.cli.main import main
from bots.settings import Settings
from bots.web import create_web

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
COMPOSE = ["compose.yaml", "compose.scaled.yaml"]
UNITS = ["factbot.service", "factbot-worker@.service"]
SAMPLE = {"POSTGRES_PASSWORD": "pw", "SEARXNG_SECRET": "s"}  # what the operator must set


def compose(name: str) -> dict[str, Any]:
    """Return a compose file with ${VAR:?…}, ${VAR:-default}, ${VAR} filled (as compose would)."""
    text = (DEPLOY / name).read_text(encoding="utf-8")
    text = re.sub(r"\$\{\w+:-([^}]*)\}", lambda m: m.group(1), text)
    filled = re.sub(r"\$\{(\w+)(?::\?[^}]*)?\}", lambda m: SAMPLE[m.group(1)], text)
    loaded = yaml.safe_load(filled)
    assert isinstance(loaded, dict)
    return loaded


def image_command() -> list[str]:
    """Return the image's default command (the Dockerfile's CMD)."""
    [line] = [x for x in (DEPLOY / "Dockerfile").read_text().splitlines() if x.startswith("CMD ")]
    command = json.loads(line[4:])
    assert isinstance(command, list)
    return command


def is_factbot(spec: dict[str, Any]) -> bool:
    """Return whether a compose service runs the factbot image (built from deploy/Dockerfile)."""
    return spec.get("build", {}).get("dockerfile") == "deploy/Dockerfile"


def factbot_commands() -> list[tuple[str, list[str]]]:
    """Return (where, argv) of every factbot command a container or unit runs."""
    found = [("Dockerfile CMD", image_command())]
    for name in COMPOSE:
        for service, spec in compose(name)["services"].items():
            if is_factbot(spec):
                found.append((f"{name}:{service}", spec.get("command", image_command())))
    for unit in UNITS:
        for line in (DEPLOY / unit).read_text().splitlines():
            if line.startswith("ExecStart="):
                found.append((unit, line.split("=", 1)[1].split()))
    return found


@pytest.mark.parametrize(
    ("where", "argv"), factbot_commands(), ids=[w for w, _ in factbot_commands()]
)
def test_every_command_run_is_a_factbot_command(where: str, argv: list[str]) -> None:
    assert Path(argv[0]).name == "factbot", where
    result = CliRunner().invoke(main, [*argv[1:], "--help"])
    assert result.exit_code == 0, f"{where}: {' '.join(argv)}: {result.output}"


def _image_environment() -> dict[str, str]:
    found: dict[str, str] = {}
    for line in (DEPLOY / "Dockerfile").read_text().splitlines():
        found.update(re.findall(r"(FACTBOT_\w+)=(\S+)", line))
    return found


def _environments() -> list[tuple[str, dict[str, str]]]:
    """Return (where, the FACTBOT_* environment) of every container and unit."""
    found = []
    for name in COMPOSE:
        for service, spec in compose(name)["services"].items():
            if is_factbot(spec):
                env = {k: str(v) for k, v in spec.get("environment", {}).items()}
                found.append((f"{name}:{service}", _image_environment() | env))
    for unit in UNITS:
        env = {}
        for line in (DEPLOY / unit).read_text().splitlines():
            if line.startswith("Environment=FACTBOT_"):
                key, value = line.split("=", 1)[1].split("=", 1)
                env[key] = value
        found.append((unit, env))
    return found


@pytest.mark.parametrize(("where", "env"), _environments(), ids=[w for w, _ in _environments()])
def test_every_factbot_variable_set_is_a_setting_that_takes_effect(
    where: str, env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # no .env of the checkout
    for name in [k for k in os.environ if k.startswith("FACTBOT_")]:
        monkeypatch.delenv(name)
    default = Settings()
    for key, value in env.items():
        assert key.startswith("FACTBOT_"), f"{where}: {key}"
        monkeypatch.setenv(key, value)
    given = Settings()  # the container's whole environment validates
    for key, value in env.items():
        before, after = default, given
        for part in key.removeprefix("FACTBOT_").lower().split("__"):
            assert hasattr(after, part), f"{where}: {key} is not a setting ({part!r})"
            before, after = getattr(before, part), getattr(after, part)
        assert after != before, f"{where}: {key}={value} changed nothing"


@pytest.mark.parametrize("name", COMPOSE)
def test_services_volumes_and_mounted_files_exist(name: str) -> None:
    spec = compose(name)
    services = spec["services"]
    declared = set(spec.get("volumes") or {})
    for service, body in services.items():
        for needed in body.get("depends_on", {}):
            assert needed in services, f"{service} depends on unknown {needed}"
        for volume in body.get("volumes", []):
            source = volume.split(":")[0]
            if source.startswith((".", "/")):
                assert (DEPLOY / source).resolve().exists(), f"{service} mounts missing {source}"
            else:
                assert source in declared, f"{service} uses undeclared volume {source}"
        if "build" in body:
            dockerfile = body["build"].get("dockerfile", "Dockerfile")
            assert (DEPLOY / body["build"]["context"] / dockerfile).is_file()
        if is_factbot(body):
            seconds = float(str(body.get("stop_grace_period", "10s")).rstrip("s"))
            assert seconds > Settings().jobs.shutdown_timeout, f"{service} is killed mid-check"


def test_the_scaled_out_file_runs_saq_on_postgresql_with_a_searxng_that_answers_json() -> None:
    services = compose("compose.scaled.yaml")["services"]
    env = services["factbot"]["environment"]
    assert env["FACTBOT_QUEUE__ENGINE"] == "saq"
    assert env["FACTBOT_DATABASE_URL"].startswith("postgresql://")
    assert services["worker"]["environment"] == env  # every factbot container: one deployment
    assert services["migrate"]["command"] == ["factbot", "db", "migrate"]
    assert "searxng" in env["FACTBOT_SEARCH__SEARXNG_URL"]
    searxng = yaml.safe_load((DEPLOY / "searxng" / "settings.yml").read_text())
    assert "json" in searxng["search"]["formats"]


def test_unit_stop_timeouts_outlast_the_shutdown_timeout() -> None:
    for unit in UNITS:
        [line] = [x for x in (DEPLOY / unit).read_text().splitlines() if "TimeoutStopSec" in x]
        assert float(line.split("=")[1]) > Settings().jobs.shutdown_timeout, unit


def test_the_health_check_asks_a_route_the_api_serves(data_dir: Path, embedder: Any) -> None:
    test = compose("compose.scaled.yaml")["services"]["factbot"]["healthcheck"]["test"]
    [url] = re.findall(r"http://127\.0\.0\.1:(\d+)(/\w+)", " ".join(test))
    port, path = url
    assert int(port) == Settings().server.port
    app = App(Settings(data_dir=data_dir), embedder=embedder)
    try:
        with TestClient(create_web(app, workers=0)) as client:
            assert client.get(path).status_code == 200
    finally:
        app.close()


def test_the_image_runs_as_a_user_with_a_health_check_from_a_base_given_as_argument() -> None:
    lines = (DEPLOY / "Dockerfile").read_text().splitlines()
    assert "ARG BASE=local/debian:bookworm" in lines
    assert [x for x in lines if x.startswith("FROM ")] == ["FROM ${BASE} AS build", "FROM ${BASE}"]
    [user] = [x for x in lines if x.startswith("USER ")]
    assert user.split()[1] not in ("root", "0")
    assert any(x.startswith("HEALTHCHECK ") for x in lines)
    assert (DEPLOY / "docker" / "healthcheck.py").is_file()
    text = "\n".join(lines)
    assert "sha256sum --check" in text and "--no-index" in text and "constraints.txt" in text


@pytest.mark.parametrize("name", COMPOSE)
def test_every_factbot_container_reads_an_env_file_that_exists_by_default(name: str) -> None:
    for service, spec in compose(name)["services"].items():
        if is_factbot(spec):
            for path in spec["env_file"]:
                assert (DEPLOY / path).is_file(), f"{service}: {path}"
