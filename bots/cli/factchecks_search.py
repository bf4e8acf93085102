"""`factbot factchecks search TEXT`: the fact-checks a text matches, scored, with the decision."""

from __future__ import annotations

import json

import click


@click.command("search")
@click.argument("text")
@click.option("--limit", type=click.IntRange(1, 50), default=5, show_default=True)
@click.option("--language", help="The text's language (ISO 639-1); default: identified.")
@click.option("--json", "as_json", is_flag=True, help="Print the matches as JSON.")
@click.pass_context
def search_command(
    ctx: click.Context, text: str, limit: int, language: str | None, as_json: bool
) -> None:
    """Rank the imported fact-checks for TEXT and say whether the best is the same claim.

    \b
    Example:
      factbot factchecks search "drinking bleach cures covid"
    """
    from bots.cli.context import app_from

    app = app_from(ctx)
    resources = app.resources
    if language is None and resources.languages is not None:
        language = resources.languages.identify(text).code
    [found] = resources.fact_checks.match_sync([text], languages=[language], limit=limit)
    if as_json:
        click.echo(
            json.dumps(
                [
                    {
                        "url": m.fact_check.url,
                        "publisher": m.fact_check.publisher,
                        "claim_reviewed": m.fact_check.claim_reviewed,
                        "rating": m.fact_check.rating,
                        "label": m.fact_check.label,
                        "review_date": m.fact_check.review_date,
                        "language": m.fact_check.language,
                        "score": m.score,
                        "lexical": m.lexical,
                        "semantic": m.semantic,
                        "accepted": m.accepted,
                        "reasons": list(m.reasons),
                    }
                    for m in found
                ],
                indent=2,
                default=str,
                ensure_ascii=False,
            )
        )
        return
    if not found:
        click.echo("No fact-check in the index resembles this text.")
        return
    for n, m in enumerate(found, start=1):
        review = m.fact_check
        verdict = "MATCH" if m.accepted else "no match: " + "; ".join(m.reasons)
        when = f" {review.review_date:%Y-%m-%d}" if review.review_date else ""
        rating = review.rating or "no rating"
        if review.rating:
            rating += f" ({review.label or 'a rating factbot does not read'})"
        click.echo(
            f"{n}. {m.score:.3f} (lexical {m.lexical:.2f}, cosine {m.semantic:.2f}) {verdict}\n"
            f"   {review.publisher}{when}: {rating} — "
            f"{review.claim_reviewed}\n   {review.url}"
        )
