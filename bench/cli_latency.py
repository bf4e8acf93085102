"""`factbot bench latency`: end-to-end seconds of a check on the model path, against stand-ins.

The stand-ins and the figures are `bench.latency`; the posts are `bench.latency_posts`.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from bench.latency import Delays, measure
from bench.latency_posts import POSTS

_DEFAULT = Delays()


@click.command("latency")
@click.option(
    "--posts",
    type=click.IntRange(1, len(POSTS)),
    default=5,
    show_default=True,
    help="Text posts to check (each with 2-3 claims).",
)
@click.option(
    "--model-delay", type=float, default=_DEFAULT.model, show_default=True, help="Seconds a call."
)
@click.option(
    "--search-delay",
    type=float,
    default=_DEFAULT.search,
    show_default=True,
    help="Seconds a search.",
)
@click.option(
    "--page-delay", type=float, default=_DEFAULT.page, show_default=True, help="Seconds a page."
)
@click.option(
    "--robots-delay",
    type=float,
    default=_DEFAULT.robots,
    show_default=True,
    help="Seconds a robots.txt.",
)
@click.option(
    "--results", type=click.IntRange(1, 50), default=5, show_default=True, help="Pages a search."
)
@click.option(
    "--sites", type=click.IntRange(1, 64), default=8, show_default=True, help="Publisher sites."
)
@click.option("--serial/--no-serial", default=True, show_default=True, help="Also run serially.")
@click.option(
    "--worst/--no-worst",
    default=True,
    show_default=True,
    help="Also run with every refinement round and a one-request-at-a-time model endpoint.",
)
@click.option("--report", "report_path", type=click.Path(path_type=Path), help="Write JSON here.")
def latency(
    posts: int,
    model_delay: float,
    search_delay: float,
    page_delay: float,
    robots_delay: float,
    results: int,
    sites: int,
    serial: bool,
    worst: bool,
    report_path: Path | None,
) -> None:
    """Time text posts end to end through App.check against delayed local stand-ins.

    The model (an OpenAI-compatible stand-in answering claims, extraction and judge as a
    capable model would), SearXNG and the publisher sites (one loopback address each, with
    robots.txt) all answer after their delay. The posts run once with the default limits and
    once one request at a time, each over a fresh data directory (empty caches) and one App
    (one fetcher, so robots.txt is read once per site and run).

    \b
    Examples:
      factbot bench latency
      factbot bench latency --posts 1 --model-delay 0.05 --search-delay 0.05 --page-delay 0.05
    """
    delays = Delays(model=model_delay, search=search_delay, page=page_delay, robots=robots_delay)
    figures = measure(
        POSTS[:posts], delays=delays, results=results, sites=sites, serial=serial, worst=worst
    )
    click.echo(json.dumps(figures, indent=2))
    if report_path:
        report_path.write_text(json.dumps(figures, indent=2), encoding="utf-8")
