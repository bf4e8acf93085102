"""An `Answer` → a thread of Mastodon statuses within the instance's character limit.

A correction is laid out by `pipeline.reply.thread.render_thread`, measured as Mastodon counts
(code points, every URL as the instance's `characters_reserved_per_url`). Each status starts
with the accounts it addresses: the asker (so they are notified), and for a direct reply every
account the mention addressed (a direct status is visible only to the accounts it names), in
every status of the thread. The room they take comes out of the budget.

A failure, refusal or notice that is private goes to the asker alone (direct); Mastodon shows
plain text, so nothing here is markup.
"""

from __future__ import annotations

from typing import Any

from bots.runtime.platform.contract import Answer, Destination, Rendered
from bots.runtime.platform.messages import reply_language, report_line
from pipeline.reply.thread import render_thread, thread_text, url_weighted


def addressed(destination: Destination, *, direct: bool) -> str:
    """Return the @accounts a reply starts with."""
    private = destination.private
    return (private.get("mentions") if direct else private.get("asker")) or ""


def visibility_of(answer: Answer, destination: Destination) -> str:
    """Return the reply's visibility: the destination's, or direct for a private answer."""
    return "direct" if answer.private else destination.public.get("visibility", "direct")


def render(
    answer: Answer,
    destination: Destination,
    *,
    max_characters: int,
    url_characters: int,
    max_posts: int,
) -> Rendered:
    """Return the statuses of answer and their visibility."""
    visibility = visibility_of(answer, destination)
    if answer.private:
        prefix = destination.private.get("asker") or ""
    else:
        prefix = addressed(destination, direct=visibility == "direct")
    room = max_characters - (len(prefix) + 1 if prefix else 0)

    def measure(text: str) -> int:
        return url_weighted(text, url_chars=url_characters)

    if answer.kind == "correction" and answer.correction is not None:
        extras = [*answer.notes, *([answer.footer] if answer.footer else [])]
        if answer.report_url:
            extras.append(report_line(answer.correction, answer.report_url))
        bodies = render_thread(
            answer.correction, budget=room, measure=measure, max_posts=max_posts, extras=extras
        )
    else:
        rows = [answer.message, *answer.notes, answer.footer or ""]
        text = "\n".join(r for r in rows if r.strip()) or "factbot could not answer."
        bodies = thread_text(text, budget=room, measure=measure, max_posts=max(max_posts, 1))
    texts = tuple(f"{prefix} {b}" if prefix else b for b in bodies)
    payload: dict[str, Any] = {
        "statuses": list(texts),
        "visibility": visibility,
        "language": reply_language(answer.correction),
    }
    return Rendered(payload=payload, texts=texts)
