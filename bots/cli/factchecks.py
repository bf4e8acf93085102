"""`factbot factchecks`: the operator's index of published fact-checks (ClaimReview feeds)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING

import click

from bots.cli.factchecks_search import search_command

if TYPE_CHECKING:
    from bots.app.root import App
    from pipeline.embedding.embedder import Embedder
    from pipeline.factchecks.loading import EmbedCounts, VectorStore
    from pipeline.factchecks.reviewitems import Identify

USER_AGENT = "factbot/0.1 (fact-check index import; +https://github.com/factbot/factbot)"


@click.group("factchecks")
def factchecks_group() -> None:
    """The fact-check index: published fact-checks that posts are matched against.

    \b
    Examples:
      factbot factchecks import claimreview_feed.json
      factbot factchecks import https://storage.googleapis.com/datacommons-feeds/claimreview/latest/data.json
      factbot factchecks import claimreview_feed.json --defer e5 && factbot factchecks embed
    """


# One transaction a batch, for an import and for the embedding pass alike.
BATCH_SIZE = click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=256,
    show_default=True,
    help="Reviews embedded and stored in one transaction.",
)


@factchecks_group.command("import")
@click.argument("source")
@BATCH_SIZE
@click.option(
    "--defer",
    "deferred",
    multiple=True,
    metavar="MODEL",
    help="Leave MODEL's vectors (e5, minilm or a model's name) to `factbot factchecks embed`: "
    "the import embeds with the other models only. Repeatable.",
)
@click.option("--progress/--no-progress", default=True, help="Show a progress counter.")
@click.pass_context
def import_(
    ctx: click.Context, source: str, batch_size: int, deferred: tuple[str, ...], progress: bool
) -> None:
    """Import a ClaimReview feed (a file, plain or gzip, or an http(s) URL).

    SOURCE is a schema.org DataFeed of ClaimReviews (the Data Commons feed), a JSON-LD list,
    @graph or single ClaimReview, or a saved Google Fact Check Tools claims:search answer. It is
    read as a stream; reviews already stored unchanged are not embedded again, so an import cut
    short is resumed by running it again. Reviews that lack a vector of a model not deferred
    (one enabled since they were imported) are embedded after the feed.
    """
    from tqdm import tqdm

    from bots.cli.context import app_from
    from pipeline.errors import FeedError
    from pipeline.factchecks.loading import ImportCounts, import_fact_checks
    from pipeline.factchecks.reviewfeeds import read_feed

    app = app_from(ctx)
    every = app.resources.fact_check_embedders
    later = set(model_names(deferred, every))
    embedders = [e for e in every if e.name not in later]
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
    index = app.store.fact_checks
    for embedder in embedders:
        if index.count_missing_vectors(embedder.name):
            click.echo(_fill(index, embedder, batch_size=batch_size, progress=progress).summary())
    for name in sorted(later):
        missing = index.count_missing_vectors(name)
        click.echo(
            f"{name}: {missing} reviews without a vector; "
            "`factbot factchecks embed` fills them in (resumable)"
        )


@factchecks_group.command("embed")
@click.option(
    "--model",
    "models",
    multiple=True,
    metavar="MODEL",
    help="Only this model (e5, minilm or a model's name); repeatable. Default: every model "
    "the matcher uses.",
)
@BATCH_SIZE
@click.option("--progress/--no-progress", default=True, help="Show a progress bar.")
@click.pass_context
def embed(ctx: click.Context, models: tuple[str, ...], batch_size: int, progress: bool) -> None:
    """Embed the reviews that have no vector of a model (after `import --defer e5`, or a
    model enabled since the import), batch by batch.

    Each batch is stored in one transaction, so a pass that is stopped continues where it
    stopped when run again. The matcher reads the new vectors within a minute while it runs;
    until then a review without an e5 vector is matched in English (BM25 and MiniLM) only.
    """
    from bots.cli.context import app_from

    app = app_from(ctx)
    every = app.resources.fact_check_embedders
    wanted = set(model_names(models, every)) if models else {e.name for e in every}
    for embedder in every:
        if embedder.name in wanted:
            counts = _fill(
                app.store.fact_checks, embedder, batch_size=batch_size, progress=progress
            )
            click.echo(counts.summary())


factchecks_group.add_command(search_command)


def model_names(given: tuple[str, ...], embedders: Sequence[Embedder]) -> list[str]:
    """Return the model names meant by given (`e5`, `minilm` or a name of one of embedders)."""
    from pipeline.embedding.e5 import E5_MODEL_NAME
    from pipeline.embedding.onnx import ONNX_MODEL_NAME

    aliases = {"e5": E5_MODEL_NAME, "minilm": ONNX_MODEL_NAME}
    known = {e.name for e in embedders}
    names = [aliases.get(name.lower(), name) for name in given]
    unknown = [g for g, name in zip(given, names, strict=True) if name not in known]
    if unknown:
        choices = ", ".join(sorted(known | {a for a, n in aliases.items() if n in known}))
        raise click.BadParameter(
            f"{', '.join(unknown)}: not one of the matcher's models ({choices})"
        )
    return names


def _fill(
    index: VectorStore, embedder: Embedder, *, batch_size: int, progress: bool
) -> EmbedCounts:
    """Run `embed_missing` for one model with a progress bar on stderr."""
    from tqdm import tqdm

    from pipeline.factchecks.loading import embed_missing

    bar = tqdm(unit=" reviews", desc=embedder.name, disable=not progress, file=sys.stderr)

    def advance(counts: EmbedCounts) -> None:
        bar.total = counts.missing
        bar.update(counts.embedded + counts.stale - bar.n)

    try:
        return asyncio.run(embed_missing(index, embedder, batch_size=batch_size, progress=advance))
    finally:
        bar.close()


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
