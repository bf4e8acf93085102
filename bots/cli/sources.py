"""`factbot sources`: import, list and look up publisher credibility."""

from __future__ import annotations

from pathlib import Path

import click

from pipeline.records.domain import Tier

TIERS = [t.value for t in Tier]


@click.group("sources")
def sources_group() -> None:
    """Publisher credibility: what may be cited and in which priority.

    \b
    Examples:
      factbot sources import ../shared/data/credibility/mbfc_idiap.csv
      factbot sources import publisher_priority_high.txt --tier high
      factbot sources import misinfo_domains.txt --format blocklist
      factbot sources lookup https://news.bbc.co.uk/some/story
    """


@sources_group.command("import")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["tiers", "blocklist", "mbfc", "scores", "perennial", "ratings"]),
    help="Table format (detected from the file when omitted).",
)
@click.option("--tier", type=click.Choice(TIERS), help="Tier of every domain in a tier list.")
@click.pass_context
def import_(ctx: click.Context, path: Path, fmt: str | None, tier: str | None) -> None:
    """Import a rating table, tier list or block list."""
    from bots.cli.context import app_from as _app
    from pipeline.credibility.importers import import_sources

    app = _app(ctx)
    report = import_sources(app.store.sources, path, fmt=fmt, tier=Tier(tier) if tier else None)
    for problem in report.problems:
        click.echo(f"skipped {problem}", err=True)
    click.echo(
        f"{path}: {report.written} sources written from {report.read} rows "
        f"({len(report.problems)} skipped)"
    )


@sources_group.command("list")
@click.option("--tier", type=click.Choice(TIERS), help="Only this tier.")
@click.option("--limit", type=int, default=50, show_default=True)
@click.pass_context
def list_(ctx: click.Context, tier: str | None, limit: int) -> None:
    """List rated sources."""
    from bots.cli.context import app_from as _app

    app = _app(ctx)
    ratings = app.store.sources.all(tier=Tier(tier) if tier else None)
    for rating in ratings[:limit]:
        click.echo(f"{rating.domain:40} {rating.tier.value:9} {rating.origin:20} {rating.reason}")
    click.echo(f"{len(ratings)} sources" + (f" (showing {limit})" if len(ratings) > limit else ""))


@sources_group.command("lookup")
@click.argument("domain_or_url")
@click.pass_context
def lookup(ctx: click.Context, domain_or_url: str) -> None:
    """Show which rating applies to a domain or URL, and why."""
    from bots.cli.context import app_from as _app

    app = _app(ctx)
    policy = app.checks.rater
    rating = policy.rate(domain_or_url)
    citable = "citable" if policy.citable(rating) else "never cited"
    click.echo(f"{domain_or_url}: {rating.tier.value} ({citable})")
    click.echo(f"  matched entry: {rating.domain}")
    click.echo(f"  reason: {rating.reason}")
    click.echo(f"  origin: {rating.origin}")
    click.echo(f"  unrated policy: {app.settings.retrieval.unrated_sources}")
