"""`factbot eval claim-matching`: the fact-check matcher on posts with gold fact-check URLs."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from bots.app.root import App
    from bots.evaluation.claim_matching import MatchingOutcome, MatchingPost
    from pipeline.factchecks.matching import FactCheckMatcher


@click.command("claim-matching")
@click.option(
    "--posts",
    "posts_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help='JSON lines {"id", "text", "gold": [fact-check URLs]}.',
)
@click.option(
    "--feed",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Match against this feed imported into the run's own index (kept under the data "
    "folder's eval/ by the feed's sha256, so a second run imports nothing); default: the data "
    "folder's fact-check index.",
)
@click.option(
    "--drop-gold",
    is_flag=True,
    help="Leave the posts' gold reviews out of every answer (ranked and decided without them): "
    "every accepted match is then a false match (false_match_rate).",
)
@click.option("--limit", type=int, help="Only the first N posts.")
@click.option("--report", "report_path", type=click.Path(path_type=Path), help="Write JSON here.")
@click.option("--progress/--no-progress", default=True)
@click.pass_context
def claim_matching(
    ctx: click.Context,
    posts_path: Path,
    feed: Path | None,
    drop_gold: bool,
    limit: int | None,
    report_path: Path | None,
    progress: bool,
) -> None:
    """Rank and decide fact-check matches for posts; print MAP@5, precision, coverage.

    \b
    Example:
      factbot eval claim-matching --posts ../shared/data/eval/checkthat2a/dev.jsonl \\
          --feed ../shared/data/eval/checkthat2a/snopes_feed.json --report 2a-dev.json
    """
    from bots.cli.context import app_from
    from bots.evaluation.claim_matching import gold_urls, read_posts, score

    posts = read_posts(posts_path)[:limit]
    app = app_from(ctx)
    started = time.monotonic()
    # The gold reviews are left out of every answer, before the decision: ranked and decided
    # as if the index did not hold them (its BM25 statistics aside), without a second import.
    exclude = frozenset(gold_urls(posts)) if drop_gold else frozenset()
    matcher, gold_labels = _matcher(app, feed, gold_urls(posts), progress)
    outcomes = _run(app, matcher, posts, exclude=exclude, progress=progress)
    report: dict[str, Any] = score(outcomes, drop_gold=drop_gold, gold_labels=gold_labels)
    report.update(
        posts_file=str(posts_path),
        feed=str(feed) if feed else None,
        seconds=round(time.monotonic() - started, 1),
        config={k: v for k, v in vars(matcher.config).items() if not k.startswith("_")},
    )
    text = json.dumps(report, indent=2, default=str)
    click.echo(text)
    if report_path is not None:
        report_path.parent.mkdir(parents=True, exist_ok=True)
        report_path.write_text(text + "\n", encoding="utf-8")


def _matcher(
    app: App, feed: Path | None, gold: set[str], progress: bool
) -> tuple[FactCheckMatcher, dict[str, Any]]:
    """Return the matcher over the run's index and the gold reviews' mapped labels by URL."""
    from pipeline.factchecks.matching import FactCheckMatcher

    resources = app.resources
    index = resources.store.fact_checks if feed is None else _feed_index(app, feed, progress)
    labels = {}
    for url in gold:  # the gold reviews only: not the whole index in memory
        found = index.fact_check_by_url(url)
        labels[url] = found[1].label if found is not None else None
    matcher = FactCheckMatcher(
        index,
        resources.fact_check_embedders,
        config=resources.fact_checks.config,
        reader=resources.fact_checks.reader,
    )
    return matcher, labels


def _feed_index(app: App, feed: Path, progress: bool) -> Any:
    """Return the run's own index with feed imported, kept by the feed's sha256 for reuse."""
    from bots.cli.factchecks import identify_with
    from pipeline.factchecks.loading import import_fact_checks
    from pipeline.factchecks.reviewfeeds import read_feed_file
    from storage import Store

    digest = hashlib.sha256(feed.read_bytes()).hexdigest()[:16]
    folder = app.settings.data_dir / "eval" / "claim-matching" / digest
    folder.mkdir(parents=True, exist_ok=True)
    store = Store.open(folder / "factbot.db")
    items = read_feed_file(feed)
    counts = asyncio.run(
        import_fact_checks(
            items,
            index=store.fact_checks,
            embedders=app.resources.fact_check_embedders,
            batch_size=app.settings.factchecks.batch_size,
            identify=identify_with(app),
        )
    )
    if progress:
        click.echo(f"run index {folder}: {counts.summary()}", err=True)
    return store.fact_checks


def _run(
    app: App,
    matcher: FactCheckMatcher,
    posts: list[MatchingPost],
    *,
    exclude: frozenset[str],
    progress: bool,
) -> list[MatchingOutcome]:
    """Match each post as the check's stage does (its language identified first), timed."""
    from tqdm import tqdm

    from bots.evaluation.claim_matching import MatchingOutcome

    languages = app.resources.languages
    matcher.match_sync(["warm-up"], limit=1)  # the snapshot and models load outside the clock
    outcomes: list[MatchingOutcome] = []
    for post in tqdm(posts, unit="post", disable=not progress, file=sys.stderr):
        started = time.perf_counter()
        try:
            language = languages.identify(post.text).code if languages is not None else None
            ranked = matcher.match_sync(
                [post.text], languages=[language], limit=5, exclude=exclude
            )[0]
        except Exception as exc:  # noqa: BLE001 - counted in the report's errors, never fatal
            outcomes.append(MatchingOutcome(post, error=f"{type(exc).__name__}: {exc}"))
            continue
        outcomes.append(MatchingOutcome(post, tuple(ranked), seconds=time.perf_counter() - started))
    return outcomes
