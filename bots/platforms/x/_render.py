"""An `Answer` → the posts of one X reply thread, each within X's 280 weighted characters.

A correction is laid out by `pipeline.reply.thread.render_thread` with X's own measure (URLs
count 23, most non-Latin scripts and emoji 2): numbered posts that never cut a URL, a reference
line or a word, at most `max_posts` posts and `max_links` reference URLs (a post with a URL
costs the most on X). The adapter's notes, the cost footer and the report link go at the end.
Any other answer (a polite failure, a notice) is one short post. `Rendered.texts` holds every
post for the reply audit.
"""

from __future__ import annotations

from bots.runtime.platform import Answer, Destination, Rendered
from bots.settings import XSettings
from pipeline.reply.thread import defuse_mentions, render_thread, x_weighted


def _cut(text: str, budget: int) -> str:
    """Return text cut between words so that X counts at most budget characters."""
    if x_weighted(text) <= budget:
        return text
    words = text.split()
    while words and x_weighted(" ".join(words) + "…") > budget:
        words.pop()
    return " ".join(words) + "…"


def render(answer: Answer, destination: Destination, settings: XSettings) -> Rendered:
    """Return the thread for answer: a payload {"parts": [...]} and its texts."""
    del destination  # every X reply has the same shape; where it goes is the sender's
    if answer.kind == "correction" and answer.correction is not None:
        extras = [*answer.notes]
        if answer.footer:
            extras.append(answer.footer)
        if answer.report_url:
            extras.append(f"Full report: {answer.report_url}")
        parts = render_thread(
            answer.correction,
            budget=settings.post_chars,
            measure=x_weighted,
            max_posts=settings.max_posts,
            max_links=settings.max_links,
            extras=tuple(extras),
        )
    else:
        text = " ".join([answer.message, *answer.notes]).strip() or "factbot could not answer."
        parts = (_cut(defuse_mentions(" ".join(text.split())), settings.post_chars),)
    return Rendered(payload={"parts": list(parts)}, texts=tuple(parts))
