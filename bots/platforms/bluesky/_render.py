"""An `Answer` → a thread of Bluesky posts: at most 300 graphemes each, URLs as link facets.

A correction is laid out by `pipeline.reply.thread.render_thread`, measured in graphemes (what
Bluesky counts: an emoji with modifiers, a flag, an accented letter written as two code points
are one each). Bluesky shows a URL in a post's text as plain text unless a link facet covers it;
a facet's range is in UTF-8 bytes, so every offset is counted on the encoded text (an "é" is 2
bytes, a CJK character 3, most emoji 4). Only the reply's own URLs — the references and the
report link — get facets; everything from a post, a page or a model was link-scrubbed.

A failure, refusal or notice (a reviewer's edited reply) is laid out by `thread_text`, usually
one post (Bluesky has no message only the requester sees).
"""

from __future__ import annotations

import re
from typing import Any

from bots.runtime.platform.contract import Answer, Destination, Rendered
from bots.runtime.platform.messages import reply_language, report_line
from pipeline.reply.thread import graphemes, render_thread, thread_text

POST_GRAPHEMES = 300
_URL_RE = re.compile(r"https?://[^\s]+")


def link_facets(text: str) -> list[tuple[int, int, str]]:
    """Return (byte start, byte end, url) of every URL in text, offsets in UTF-8 bytes."""
    out = []
    for match in _URL_RE.finditer(text):
        url = match.group(0).rstrip(".,;:)]")
        start = len(text[: match.start()].encode("utf-8"))
        out.append((start, start + len(url.encode("utf-8")), url))
    return out


def _extras(answer: Answer) -> list[str]:
    extras = [*answer.notes]
    if answer.footer:
        extras.append(answer.footer)
    if answer.report_url:
        extras.append(report_line(answer.correction, answer.report_url))
    return extras


def render(answer: Answer, destination: Destination, *, max_posts: int = 4) -> Rendered:
    """Return the posts of answer, each with its link facets."""
    if answer.kind == "correction" and answer.correction is not None:
        texts = render_thread(
            answer.correction,
            budget=POST_GRAPHEMES,
            measure=graphemes,
            max_posts=max_posts,
            extras=_extras(answer),
        )
    else:
        rows = [answer.message, *answer.notes, answer.footer or ""]
        texts = thread_text(
            "\n".join(r for r in rows if r.strip()) or "factbot could not answer.",
            budget=POST_GRAPHEMES,
            measure=graphemes,
        )
    posts: list[dict[str, Any]] = [{"text": t, "facets": link_facets(t)} for t in texts]
    langs = [reply_language(answer.correction)]
    return Rendered(payload={"posts": posts, "langs": langs}, texts=tuple(texts))
