"""The `factbot` command line."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import itertools
import json
import re
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from bots.cli.context import app_from as _app
from bots.render import check_to_json, render_text
from pipeline.errors import FactbotError, InputError
from storage.tx import DatabaseUnavailableError

if TYPE_CHECKING:
    from bots.runtime.checking.uploads import Upload

F = TypeVar("F", bound=Callable[..., Any])


def _parse_before(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise click.BadParameter(f"{value!r} is not an ISO date such as 2020-05-01") from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


# Subcommand groups, imported only when named: `factbot --help` stays light (no model, no
# extraction library). `bench` lives in the checkout's bench/ folder, not in the package.
_LAZY = {
    "sources": "bots.cli.sources:sources_group",
    "eval": "bots.cli.eval:eval_group",
    "models": "bots.cli.models:models_group",
    "users": "bots.cli.users:users_group",
    "faces": "bots.cli.faces:faces_group",
    "bench": "bench.cli:bench_group",
    "monitor": "bots.cli.monitor:monitor",
    "doctor": "bots.cli.doctor:doctor_command",
    "train": "bots.cli.train:train_group",
    "db": "bots.cli.db:db_group",
    "docs": "bots.cli.docs:docs_group",
    "factchecks": "bots.cli.factchecks:factchecks_group",
}
_LAZY_HELP = {
    "sources": "Import, list and look up publisher credibility ratings.",
    "eval": "Evaluate factbot on public benchmarks (AVeriTeC).",
    "models": "Pull, inspect and serve the local language model.",
    "users": "Add and list the people who may sign in to the dashboard.",
    "faces": "Import, list and remove the gallery of public figures named in images.",
    "bench": "Benchmarks (from a source checkout: the bench/ folder).",
    "monitor": "Run the proactive monitor's scheduler (one process; others stand by).",
    "doctor": "Say whether checks can work here, and how to fix what keeps them from it.",
    "train": "Train factbot's own stance model from public data, and write its bases.",
    "db": "The database's engine and migrations (SQLite, or PostgreSQL when scaled out).",
    "docs": "Generate the reference pages of docs/ from the code (from a source checkout).",
    "factchecks": "Import ClaimReview feeds into the index of published fact-checks.",
}


def _load(spec: str) -> click.Command:
    module_name, _, attr = spec.partition(":")
    if module_name.startswith("bench."):
        checkout = Path(__file__).resolve().parents[2]
        if not (checkout / "bench" / "__init__.py").is_file():
            raise click.ClickException(
                "factbot bench runs from a source checkout (its bench/ folder is not installed)"
            )
        if str(checkout) not in sys.path:
            sys.path.append(str(checkout))
    command = getattr(importlib.import_module(module_name), attr)
    assert isinstance(command, click.Command)
    return command


class FactbotGroup(click.Group):
    """A group that turns factbot's own errors into clean messages and exit codes.

    Subcommand groups in `_LAZY` are imported on first use, not when the CLI starts.
    """

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *_LAZY})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in _LAZY and cmd_name not in self.commands:
            self.add_command(_load(_LAZY[cmd_name]), cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List the commands without importing the lazy groups."""
        rows = [
            (name, cmd.get_short_help_str(formatter.width - 20))
            for name, cmd in self.commands.items()
            if not cmd.hidden
        ]
        rows += [(name, text) for name, text in _LAZY_HELP.items() if name not in self.commands]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(sorted(rows))

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except InputError as exc:
            click.echo(f"Error: {exc}", err=True)
            sys.exit(2)
        except FactbotError as exc:
            click.echo(f"Error: {exc}", err=True)
            sys.exit(1)


@click.group(cls=FactbotGroup)
@click.version_option("0.1.0", prog_name="factbot")
@click.pass_context
def main(ctx: click.Context) -> None:
    """factbot: checks posts against credible evidence and writes referenced corrections.

    \b
    Examples:
      factbot ingest ../shared/data/corpus/recovery/articles.jsonl
      factbot check "Hydroxychloroquine cures COVID-19."
      factbot serve
    Settings come from FACTBOT_* environment variables or .env (docs/configuration.md).
    """


@main.command()
@click.argument("text_or_url", required=False)
@click.option(
    "--image",
    "images",
    multiple=True,
    metavar="FILE_OR_URL",
    help="An image of the post: a file, an http(s) URL, or - for standard input (repeatable).",
)
@click.option(
    "--lead",
    "leads",
    multiple=True,
    metavar="URL",
    help="A page suggested as evidence, read like a search result (repeatable, at most 5).",
)
@click.option("--before", help="Only use evidence published before this date (ISO 8601).")
@click.option("--json", "as_json", is_flag=True, help="Print the stored check as JSON.")
@click.pass_context
def check(
    ctx: click.Context,
    text_or_url: str | None,
    images: tuple[str, ...],
    leads: tuple[str, ...],
    before: str | None,
    as_json: bool,
) -> None:
    """Check a post's text (or the page at a URL) and its images, store the check and print it.

    Images are read as a platform attachment is (text in them, hashes, EXIF, C2PA, faces,
    earlier appearances); one that cannot be read is said with its reason and the check goes
    on with the rest. A --lead page is fetched beside the search results and read like them:
    from a publisher that may not be cited it is not read at all.

    \b
    Examples:
      factbot check "5G towers spread the coronavirus."
      factbot check https://example.org/article --before 2020-06-01
      factbot check - < post.txt          (read the text from standard input)
      factbot check --image screenshot.png
      factbot check "Is this real?" --image photo.jpg --image https://example.org/b.jpg
      factbot check "Bleach cures the flu." --lead https://www.who.int/news-room/fact-sheets
    """
    from bots.runtime.checking.uploads import gather_images
    from pipeline.inputs.leads import clean_leads, with_leads
    from pipeline.inputs.posts import post_from_text, post_from_url

    if text_or_url is None and not images:
        raise click.UsageError("give a text, a URL or at least one --image")
    if text_or_url == "-" and "-" in images:
        raise click.UsageError("standard input can hold the text or an image, not both")
    refused = clean_leads(leads).dropped
    if refused:
        raise InputError(f"--lead {refused[0][0]!r} cannot be used: {refused[0][1]}")
    app = _app(ctx)
    bound = _parse_before(before)
    max_chars = app.settings.max_post_chars
    limits = app.settings.images
    if text_or_url == "-":
        raw = sys.stdin.buffer.read()
        try:
            text_or_url = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"standard input is not valid UTF-8 (byte {exc.start})") from exc

    single = (text_or_url or "").strip()
    is_http = single.lower().startswith(("http://", "https://")) and " " not in single
    if not is_http and re.fullmatch(r"[A-Za-z][A-Za-z0-9+.\-]*://\S*", single):
        raise InputError(f"only http(s) pages can be checked, not {single!r}")
    uploads, urls, unread = _image_args(images, max_bytes=limits.max_bytes)
    given = gather_images(uploads, urls, max_images=limits.max_images, max_bytes=limits.max_bytes)
    notes = [*unread, *given.notes]
    for note in notes:
        click.echo(f"note: {note}", err=True)
    if images and not given.refs and not single:
        raise InputError("nothing to check: no text, and none of the images could be taken")

    async def go() -> Any:
        try:
            if is_http:
                fetcher = await app.fetcher()
                post = await post_from_url(
                    single, fetcher=fetcher, max_chars=max_chars, cpu=app.cpu
                )
                if given.refs:
                    post = dataclasses.replace(post, image_refs=given.refs)
            else:
                post = post_from_text(text_or_url or "", max_chars=max_chars, image_refs=given.refs)
            return await app.check(with_leads(post, leads), before=bound)
        finally:
            await app.close_fetcher()  # before asyncio.run closes the loop it belongs to

    result = asyncio.run(go())
    if as_json:
        data = check_to_json(result)
        if notes:
            data["notes"] = notes
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        click.echo(render_text(result))


def _image_args(
    values: tuple[str, ...], *, max_bytes: int
) -> tuple[list[Upload], list[str], list[str]]:
    """Return the --image files read (at most max_bytes + 1 bytes each), the URLs, and notes."""
    from bots.runtime.checking.uploads import Upload

    uploads: list[Upload] = []
    urls: list[str] = []
    notes: list[str] = []
    for value in values:
        if "://" in value:
            urls.append(value)  # gather_images refuses what is not http(s), with a note
            continue
        if value == "-":
            data = sys.stdin.buffer.read(max_bytes + 1)
            uploads.append(Upload("stdin", None if len(data) > max_bytes else data, len(data)))
            continue
        path = Path(value).expanduser()
        try:
            size = path.stat().st_size
            if not path.is_file():
                raise IsADirectoryError(21, "not a file")
            if size > max_bytes:
                uploads.append(Upload(path.name, None, size))
                continue
            with path.open("rb") as handle:
                data = handle.read(max_bytes + 1)
        except OSError as exc:
            notes.append(f"The image {value!r} was not read: {exc.strerror or exc}.")
            continue
        uploads.append(Upload(path.name, None if len(data) > max_bytes else data, len(data)))
    return uploads, urls, notes


@main.command()
@click.argument("check_id")
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.pass_context
def show(ctx: click.Context, check_id: str, as_json: bool) -> None:
    """Reprint a stored check.

    \b
    Example:
      factbot show 3f2a...
    """
    stored = _app(ctx).store.checks.get(check_id)
    if as_json:
        click.echo(json.dumps(check_to_json(stored), indent=2, ensure_ascii=False))
    else:
        click.echo(render_text(stored))


@main.command()
@click.argument("sources", nargs=-1)
@click.option("--progress/--no-progress", default=True, help="Show a progress bar.")
@click.option(
    "--reembed",
    is_flag=True,
    help="First re-embed every stored passage with the configured embedder (after a change "
    "of FACTBOT_EMBEDDING__BACKEND or __MODEL).",
)
@click.pass_context
def ingest(ctx: click.Context, sources: tuple[str, ...], progress: bool, reembed: bool) -> None:
    """Add documents to the local evidence index.

    SOURCES are JSONL files (url, title, text, publisher, published_at; extra fields kept),
    HTML files (with a canonical URL), RSS/Atom feeds, sitemaps, folders of those, or URLs.

    \b
    Examples:
      factbot ingest ../shared/data/corpus/recovery/articles.jsonl
      factbot ingest https://www.example.org/feed.xml
      factbot ingest --reembed
    """
    from tqdm import tqdm

    from bots.app.image_index import page_keeper
    from pipeline.evidence.ingest import Ingester
    from pipeline.image.intake import ImageLimits

    if not sources and not reembed:
        raise click.UsageError("name at least one source to ingest (or pass --reembed)")
    app = _app(ctx)
    if reembed:
        passages = app.store.documents.stats().passages
        with tqdm(total=passages, unit="passage", disable=not progress, file=sys.stderr) as rb:
            done = asyncio.run(
                Ingester(app.store.documents, app.embedder, on_document=rb.update).reembed()
            )
        click.echo(f"{done} passages re-embedded with {app.embedder.name}")
        if not sources:
            return
    bar = tqdm(unit="doc", disable=not progress, file=sys.stderr)

    async def go() -> Any:
        try:
            fetcher = await app.fetcher()
            limits = ImageLimits(
                max_bytes=app.settings.images.max_bytes, max_pixels=app.settings.images.max_pixels
            )
            ingester = Ingester(
                app.store.documents,
                app.embedder,
                fetcher=fetcher,
                on_document=lambda: bar.update(),
                images=page_keeper(
                    app.store.images,
                    fetcher,
                    per_page=app.settings.image_index.page_images,
                    limits=limits,
                    cpu=app.cpu,
                ),
            )
            return await ingester.ingest(list(sources))
        finally:
            await app.close_fetcher()

    started = datetime.now(UTC)
    report = asyncio.run(go())
    bar.close()
    seconds = (datetime.now(UTC) - started).total_seconds()
    for error in report.errors:
        click.echo(f"skipped {error}", err=True)
    click.echo(
        f"{report.added} added, {report.updated} updated, {report.unchanged} unchanged, "
        f"{len(report.errors)} skipped; {report.passages} passages, {report.images} images "
        f"in {seconds:.1f}s"
    )


@main.command()
@click.option("--host", help="Interface to listen on (default from FACTBOT_SERVER__HOST).")
@click.option("--port", type=int, help="Port (default from FACTBOT_SERVER__PORT).")
@click.option(
    "--workers",
    type=click.IntRange(0, 64),
    help="Worker tasks beside the API (default from FACTBOT_JOBS__WORKERS; 0 = only the API).",
)
@click.option(
    "--monitor",
    is_flag=True,
    help="Also run the proactive monitor's scheduler (needs FACTBOT_MONITOR__ENABLED=true).",
)
@click.pass_context
def serve(
    ctx: click.Context, host: str | None, port: int | None, workers: int | None, monitor: bool
) -> None:
    """Start the HTTP API, with workers that run the checks it accepts.

    SIGTERM or Ctrl-C stops taking jobs, lets running ones finish (FACTBOT_JOBS__SHUTDOWN_TIMEOUT)
    and hands unfinished ones back to the queue. It starts by printing `factbot doctor --short`.

    \b
    Examples:
      factbot serve
      curl -s 'localhost:8000/api/checks?wait=60' -d '{"text": "..."}' \\
           -H 'content-type: application/json'
    """
    import uvicorn

    from bots.cli.doctor import render_short, run_diagnosis
    from bots.logs import UVICORN_LOG_CONFIG
    from bots.web import create_web

    app = _app(ctx)
    if monitor and not app.settings.monitor.enabled:
        raise click.UsageError(
            "--monitor needs FACTBOT_MONITOR__ENABLED=true (see docs/monitor.md)"
        )
    _ = app.store  # created and migrated first, so the summary describes what will serve
    click.echo(render_short(run_diagnosis(app.settings)), err=True)
    uvicorn.run(
        create_web(app, workers=workers, monitor=monitor),
        host=host or app.settings.server.host,
        port=port if port is not None else app.settings.server.port,
        log_level=app.settings.log_level.lower(),
        log_config=UVICORN_LOG_CONFIG,  # its access log goes through factbot's redacting handler
        timeout_graceful_shutdown=5,
    )


@main.command()
@click.option(
    "--concurrency",
    type=click.IntRange(1, 64),
    help="Jobs run at once (default from FACTBOT_JOBS__CONCURRENCY).",
)
@click.option("--until-idle", is_flag=True, help="Stop once no job is queued or running.")
@click.pass_context
def worker(ctx: click.Context, concurrency: int | None, until_idle: bool) -> None:
    """Run workers alone: claim queued checks from the database and run them.

    Run as many as the machine allows, against the same database as `factbot serve`
    (FACTBOT_DATA_DIR). SIGTERM or Ctrl-C stops taking jobs, lets running ones finish within
    FACTBOT_JOBS__SHUTDOWN_TIMEOUT and hands the rest back to the queue.

    \b
    Examples:
      factbot worker
      factbot worker --concurrency 4
    """
    from bots.runtime.platform.privacy import retention_loop
    from bots.runtime.service import build_pool, close_senders, job_parts, stop_when_idle
    from bots.runtime.supervisor import Supervisor

    app = _app(ctx)
    jobs = app.settings.jobs

    async def go() -> tuple[int, int]:
        parts = Supervisor()
        parts.stop_on_signals()
        async with app:

            def build() -> tuple[Any, Any]:
                senders = app.senders()  # replies of every configured platform
                pool = build_pool(
                    app,
                    concurrency=concurrency or jobs.concurrency,
                    senders=senders,
                    handlers=app.job_handlers(),
                )
                return senders, pool

            # Building the services reads the database: one that is restarting is waited out.
            for waited in itertools.count():
                try:
                    senders, pool = build()
                    break
                except DatabaseUnavailableError as exc:
                    if waited >= 120:
                        raise
                    click.echo(f"worker: database unavailable, waiting: {exc}", err=True)
                    await asyncio.sleep(1.0)
            await app.warm_languages()  # before the first claim, or its lease can lapse
            job_parts(parts, app.store, app.settings, pool, relay=False, essential=True)
            if senders:
                privacy = app.settings.privacy
                parts.add("retention", lambda s: retention_loop(app.store, privacy, s), cancel=True)
            if until_idle:
                poll = jobs.poll_seconds
                parts.add("idle", lambda s: stop_when_idle(app.store, s, poll=poll), cancel=True)
            parts.close_with(lambda: close_senders(senders))
            await parts.run()
            return pool.completed, pool.failed

    completed, failed = asyncio.run(go())
    click.echo(f"worker stopped: {completed} jobs done, {failed} failed attempts", err=True)


@main.command()
@click.pass_context
def relay(ctx: click.Context) -> None:
    """Hand runnable jobs from the database to the queue engine (FACTBOT_QUEUE__ENGINE=saq).

    `factbot serve` runs a relay itself; run this where no `serve` runs, or beside them: any
    number of relays may run, saq keys each job by its id so none runs twice.
    """
    from bots.runtime.supervisor import Supervisor
    from bots.runtime.workers.saq_engine import Relay, open_queue

    app = _app(ctx)
    if app.settings.queue.engine != "saq":
        raise click.UsageError("the relay is for FACTBOT_QUEUE__ENGINE=saq")

    async def go() -> int:
        parts = Supervisor()
        parts.stop_on_signals()
        hand = Relay(app.store, open_queue(app.settings), app.settings)
        parts.add("relay", hand.run, essential=True)
        await parts.run()
        return hand.handed

    handed = asyncio.run(go())
    click.echo(f"relay stopped: {handed} jobs handed to saq", err=True)


@main.command()
@click.option("--platform", type=click.Choice(["discord", "slack"]), help="The user's platform.")
@click.option("--user", "user_id", help="A platform user id: every request by or about them.")
@click.option("--channel", "channel_id", help="A platform channel id: every request in it.")
@click.option(
    "--expired", is_flag=True, help="Redact platform checks older than the retention period now."
)
@click.pass_context
def forget(
    ctx: click.Context,
    platform: str | None,
    user_id: str | None,
    channel_id: str | None,
    expired: bool,
) -> None:
    """Delete a user's or a channel's data on request, or redact what retention should.

    Deletes the requests, posts, checks, evidence and jobs of that user (as requester or as
    author) or of that channel. An opt-out stays (it is the user's wish). With --expired, the
    text and evidence of platform checks older than FACTBOT_PRIVACY__RETENTION_DAYS are deleted
    now (the service also does it every hour); their verdicts and references stay.

    \b
    Examples:
      factbot forget --platform discord --user 80351110224678912
      factbot forget --platform slack --channel C0123456789
      factbot forget --expired
    """
    from bots.runtime.platform.privacy import redact_expired

    app = _app(ctx)
    if expired:
        if platform or user_id or channel_id:
            raise click.UsageError("--expired takes no --platform, --user or --channel")
        count = redact_expired(app.store, app.settings.privacy)
        click.echo(f"redacted {count} platform checks older than the retention period")
        return
    if platform is None or (user_id is None) == (channel_id is None):
        raise click.UsageError("give --platform and exactly one of --user or --channel")
    gone = app.service.forget(platform, user_id=user_id, channel_id=channel_id)
    click.echo(f"deleted {gone.requests} requests, {gone.posts} posts and {gone.checks} checks")


if __name__ == "__main__":  # pragma: no cover
    main()
