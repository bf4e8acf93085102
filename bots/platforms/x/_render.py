"""An `Answer` → the posts of one X reply thread, each within X's 280 weighted characters.

A correction is laid out by `pipeline.reply.thread.render_thread` with X's own measure (URLs
count 23, most non-Latin scripts and emoji 2): numbered posts that never cut a URL, a reference
line or a word, at most `max_posts` posts and `max_links` reference URLs (a post with a URL
costs the most on X). The adapter's notes, the cost footer and the report link go at the end.
Any other answer (a polite failure, a reviewer's edited reply) is laid out by `thread_text`:
usually one short post, never cut inside a URL or a word. `Rendered.texts` holds every
post for the reply audit.
"""

from __future__ import annotations

from bots.runtime.platform.contract import Answer, Destination, Rendered
from bots.runtime.platform.messages import report_line
from bots.settings import XSettings
from pipeline.reply.thread import render_thread, thread_text, x_weighted


def render(answer: Answer, destination: Destination, settings: XSettings) -> Rendered:
    """Return the thread for answer: a payload {"parts": [...]} and its texts."""
    del destination  # every X reply has the same shape; where it goes is the sender's
    if answer.kind == "correction" and answer.correction is not None:
        extras = [*answer.notes]
        if answer.footer:
            extras.append(answer.footer)
        if answer.report_url:
            extras.append(report_line(answer.correction, answer.report_url))
        parts = render_thread(
            answer.correction,
            budget=settings.post_chars,
            measure=x_weighted,
            max_posts=settings.max_posts,
            max_links=settings.max_links,
            extras=tuple(extras),
        )
    else:
        # A failure or refusal is one short post; a reviewer's edited reply may take a thread.
        text = "\n".join([answer.message, *answer.notes]).strip() or "factbot could not answer."
        parts = thread_text(text, budget=settings.post_chars, measure=x_weighted)
    return Rendered(payload={"parts": list(parts)}, texts=tuple(parts))
