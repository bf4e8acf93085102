"""The `factbot` command line."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import click

from bots.app import App
from bots.render import check_to_json, render_text
from bots.settings import load_settings
from pipeline.errors import ConfigError, FactbotError, InputError

F = TypeVar("F", bound=Callable[..., Any])


def _app(ctx: click.Context) -> App:
    app = ctx.obj
    if app is None:
        try:
            app = App(load_settings())
        except ConfigError as exc:
            raise click.ClickException(str(exc)) from exc
        ctx.obj = app
        ctx.call_on_close(app.close)
    assert isinstance(app, App)
    return app


def _parse_before(value: str | None) -> datetime | None:
    if value is None:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise click.BadParameter(f"{value!r} is not an ISO date such as 2020-05-01") from exc
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


class FactbotGroup(click.Group):
    """A group that turns factbot's own errors into clean messages and exit codes."""

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
    Settings come from FACTBOT_* environment variables or .env (see README).
    """


@main.command()
@click.argument("text_or_url")
@click.option("--before", help="Only use evidence published before this date (ISO 8601).")
@click.option("--json", "as_json", is_flag=True, help="Print the stored check as JSON.")
@click.pass_context
def check(ctx: click.Context, text_or_url: str, before: str | None, as_json: bool) -> None:
    """Check a post's text (or the page at a URL), store the check and print it.

    \b
    Examples:
      factbot check "5G towers spread the coronavirus."
      factbot check https://example.org/article --before 2020-06-01
      factbot check - < post.txt          (read the text from standard input)
    """
    from pipeline.posts import post_from_text, post_from_url

    app = _app(ctx)
    bound = _parse_before(before)
    max_chars = app.settings.max_post_chars
    if text_or_url == "-":
        raw = sys.stdin.buffer.read()
        try:
            text_or_url = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(f"standard input is not valid UTF-8 (byte {exc.start})") from exc

    single = text_or_url.strip()
    is_http = single.lower().startswith(("http://", "https://")) and " " not in single
    if not is_http and re.fullmatch(r"[A-Za-z][A-Za-z0-9+.\-]*://\S*", single):
        raise InputError(f"only http(s) pages can be checked, not {single!r}")

    async def go() -> Any:
        try:
            if is_http:
                fetcher = await app.fetcher()
                post = await post_from_url(single, fetcher=fetcher, max_chars=max_chars)
            else:
                post = post_from_text(text_or_url, max_chars=max_chars)
            return await app.check(post, before=bound)
        finally:
            await app.close_fetcher()  # before asyncio.run closes the loop it belongs to

    result = asyncio.run(go())
    if as_json:
        click.echo(json.dumps(check_to_json(result), indent=2, ensure_ascii=False))
    else:
        click.echo(render_text(result))


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
@click.argument("sources", nargs=-1, required=True)
@click.option("--progress/--no-progress", default=True, help="Show a progress bar.")
@click.pass_context
def ingest(ctx: click.Context, sources: tuple[str, ...], progress: bool) -> None:
    """Add documents to the local evidence index.

    SOURCES are JSONL files (url, title, text, publisher, published_at; extra fields kept),
    HTML files (with a canonical URL), RSS/Atom feeds, sitemaps, folders of those, or URLs.

    \b
    Examples:
      factbot ingest ../shared/data/corpus/recovery/articles.jsonl
      factbot ingest https://www.example.org/feed.xml
    """
    from tqdm import tqdm

    from pipeline.ingest import Ingester

    app = _app(ctx)
    bar = tqdm(unit="doc", disable=not progress, file=sys.stderr)

    async def go() -> Any:
        try:
            ingester = Ingester(
                app.store.documents,
                app.embedder,
                fetcher=await app.fetcher(),
                on_document=lambda: bar.update(),
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
        f"{len(report.errors)} skipped; {report.passages} passages in {seconds:.1f}s"
    )


@main.command()
@click.option("--host", help="Interface to listen on (default from FACTBOT_SERVER__HOST).")
@click.option("--port", type=int, help="Port (default from FACTBOT_SERVER__PORT).")
@click.pass_context
def serve(ctx: click.Context, host: str | None, port: int | None) -> None:
    """Start the HTTP API.

    \b
    Examples:
      factbot serve
      curl -s localhost:8000/api/checks -d '{"text": "..."}' -H 'content-type: application/json'
    """
    import uvicorn

    from bots.api import create_api

    app = _app(ctx)
    app.embedder.warm_up()
    uvicorn.run(
        create_api(app),
        host=host or app.settings.server.host,
        port=port if port is not None else app.settings.server.port,
        log_level=app.settings.log_level.lower(),
    )


def _register() -> None:
    from bots.cli_bench import bench_group
    from bots.cli_bench_latency import latency
    from bots.cli_bench_search import search_cache
    from bots.cli_eval import eval_group
    from bots.cli_models import models_group
    from bots.cli_sources import sources_group

    main.add_command(sources_group)
    main.add_command(eval_group)
    main.add_command(bench_group)
    main.add_command(models_group)
    bench_group.add_command(search_cache)
    bench_group.add_command(latency)


_register()


if __name__ == "__main__":  # pragma: no cover
    main()
