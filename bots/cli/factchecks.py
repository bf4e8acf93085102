"""`factbot factchecks`: the operator's index of published fact-checks (ClaimReview feeds)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING

import click

from bots.cli.factchecks_search import search_command

if TYPE_CHECKING:
    from bots.app.root import App
    from pipeline.factchecks.reviewitems import Identify

USER_AGENT = "factbot/0.1 (fact-check index import; +https://github.com/factbot/factbot)"


@click.group("factchecks")
def factchecks_group() -> None:
    """The fact-check index: published fact-checks that posts are matched against.

    \b
    Examples:
      factbot factchecks import claimreview_feed.json
      factbot factchecks import https://storage.googleapis.com/datacommons-feeds/claimreview/latest/data.json
    """


@factchecks_group.command("import")
@click.argument("source")
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=256,
    show_default=True,
    help="Reviews embedded and stored in one transaction.",
)
@click.option("--progress/--no-progress", default=True, help="Show a progress counter.")
@click.pass_context
def import_(ctx: click.Context, source: str, batch_size: int, progress: bool) -> None:
    """Import a ClaimReview feed (a file, plain or gzip, or an http(s) URL).

    SOURCE is a schema.org DataFeed of ClaimReviews (the Data Commons feed), a JSON-LD list,
    @graph or single ClaimReview, or a saved Google Fact Check Tools claims:search answer. It is
    read as a stream; reviews already stored unchanged are not embedded again, so an import cut
    short is resumed by running it again.
    """
    from tqdm import tqdm

    from bots.cli.context import app_from
    from pipeline.errors import FeedError
    from pipeline.factchecks.loading import ImportCounts, import_fact_checks
    from pipeline.factchecks.reviewfeeds import read_feed

    app = app_from(ctx)
    embedders = app.resources.fact_check_embedders
    identify = identify_with(app)
    bar = tqdm(unit=" reviews", disable=not progress, file=sys.stderr)

    def advance(counts: ImportCounts) -> None:
        bar.update(counts.read - bar.n)

    try:
        with _open(source) as stream:
            counts = asyncio.run(
                import_fact_checks(
                    read_feed(stream, source=source),
                    index=app.store.fact_checks,
                    embedders=embedders,
                    batch_size=batch_size,
                    progress=advance,
                    identify=identify,
                )
            )
    except FeedError as exc:
        raise click.ClickException(f"{exc}; the reviews before it are stored") from exc
    finally:
        bar.close()
    click.echo(f"{source}: {counts.summary()} in {counts.seconds:.1f} s")


factchecks_group.add_command(search_command)


def identify_with(app: App) -> Identify | None:
    """Return the app's language finder for reviews that name no language (None: it is off)."""
    languages = app.resources.languages
    if languages is None:
        return None

    def identify(text: str) -> str | None:
        found = languages.identify(text)
        return found.code if found.determined else None

    return identify


@contextmanager
def _open(source: str) -> Iterator[IO[bytes]]:
    """Open a feed file, or stream an http(s) URL's body."""
    import io

    import httpx

    from pipeline.factchecks.reviewfeeds import ChunkReader

    if not source.startswith(("http://", "https://")):
        path = Path(source)
        if not path.is_file():
            raise click.BadParameter(f"no such file: {source}", param_hint="SOURCE")
        with path.open("rb") as handle:
            yield handle
        return
    timeout = httpx.Timeout(60.0, connect=10.0)
    headers = {"User-Agent": USER_AGENT}
    try:
        with httpx.stream(
            "GET", source, timeout=timeout, follow_redirects=True, headers=headers
        ) as response:
            if response.status_code != 200:
                raise click.ClickException(f"{source}: HTTP {response.status_code}")
            # iter_raw: a gzip body (Content-Encoding or a .gz file) is unpacked by read_feed.
            chunks = response.iter_bytes() if _encoded(response) else response.iter_raw()
            yield io.BufferedReader(ChunkReader(chunks))
    except httpx.HTTPError as exc:
        raise click.ClickException(f"{source}: {type(exc).__name__}: {exc}") from exc


def _encoded(response: object) -> bool:
    """Whether the body has a Content-Encoding other than gzip, which httpx must undo."""
    headers = getattr(response, "headers", {})
    encoding = str(headers.get("content-encoding", "")).lower().strip()
    return encoding not in ("", "identity", "gzip")
