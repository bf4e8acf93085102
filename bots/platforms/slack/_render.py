"""An `Answer` → a Slack message: Block Kit blocks plus the plain-text fallback, within limits.

Layout of a correction: a header with the overall verdict, a section with the headline, one
section per claim (verdict, explanation with its `[n]` markers, the quote), the note, the
numbered references as `<url|title>` links, and one context block with the report link, the
footer, the notes and what was left out. The text fallback is the same part in plain text.

Slack's limits (`SECTION_CHARS`, `MAX_BLOCKS`, `CONTEXT_ELEMENTS`, `HEADER_CHARS`,
`TEXT_CHARS`): one section's text is shortened at a word boundary ("…"); whole claims are
dropped from the end by `pipeline.reply.render.fit`, whose omission line says how many.

Every text that came from a post, a page or a model is link-scrubbed and has `&`, `<`, `>`
escaped, so `<!channel>`, `<!here>` or `<@U…>` in it can never ping anyone and it can never
link; the only links are the references and the report. `Rendered.texts` holds what a reader
sees (links shown as "title url" with the original URL) for the reply audit.
"""

from __future__ import annotations

import dataclasses
import functools
import html
import re
from typing import Any

from bots.runtime.platform.contract import Answer, Destination, Rendered
from pipeline.records.domain import Correction, CorrectionItem, Reference, claim_head
from pipeline.reply.links import scrub_links
from pipeline.reply.render import Fitted, fit
from pipeline.util.i18n import SOURCE_LANGUAGE, translator

SECTION_CHARS = 3000
MAX_BLOCKS = 50
CONTEXT_ELEMENTS = 10
CONTEXT_CHARS = 2000  # kept below the 3,000 of a text object: several share one line
HEADER_CHARS = 150
TEXT_CHARS = 40_000
CLAIM_CHARS = 300
QUOTE_CHARS = 800
TITLE_CHARS = 200
_FITS = 1000  # the budget `fit` is given: a part measures 0 when it fits, else more
_LINK_RE = re.compile(r"<([^<>|]+)\|([^<>]*)>")
_PARTIAL_ENTITY_RE = re.compile(r"&[a-z]{0,3}$")
_URL_ENCODE = {"<": "%3C", ">": "%3E", "|": "%7C", " ": "%20"}


_scrub = functools.lru_cache(maxsize=2048)(scrub_links)  # fit composes a message many times


def escape(text: str) -> str:
    """Return text with Slack's control characters escaped (no mention, no link can form)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def untrusted(text: str) -> str:
    """Return text from a post, page or model as inert mrkdwn: one line, no links, escaped."""
    return escape(" ".join(_scrub(text).split()))


def shorten(text: str, limit: int, render: Any = untrusted) -> str:
    """Return render(text), cut at a word boundary and marked "…" so it fits limit."""
    shown: str = render(text)
    if len(shown) <= limit:
        return shown
    words = text.split()
    low, high = 0, len(words)
    while low < high:  # the longest prefix of words that fits with the mark
        mid = (low + high + 1) // 2
        if len(render(" ".join(words[:mid]))) + 1 <= limit:
            low = mid
        else:
            high = mid - 1
    if low == 0:  # one huge word: cut it, never inside an escape such as "&amp;"
        cut = str(render(text[: max(limit // 5 - 1, 0)]))[: limit - 1]
        return _PARTIAL_ENTITY_RE.sub("", cut) + "…"
    return str(render(" ".join(words[:low]))) + "…"


def slack_url(url: str) -> str:
    """Return url as the target of a `<url|label>` link."""
    return "".join(_URL_ENCODE.get(ch, ch) for ch in url).replace("&", "&amp;")


class _Message:
    """Blocks being built, and the original URL of every link they hold."""

    def __init__(self) -> None:
        self.blocks: list[dict[str, Any]] = []
        self.urls: dict[str, str] = {}

    def link(self, url: str, label: str) -> str:
        encoded = slack_url(url)
        self.urls[encoded] = url
        return f"<{encoded}|{label}>"

    def section(self, text: str) -> None:
        if text:
            self.blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": text}})

    def context(self, parts: list[str]) -> None:
        parts = [p[:CONTEXT_CHARS] for p in parts if p]
        if len(parts) > CONTEXT_ELEMENTS:
            parts = [*parts[: CONTEXT_ELEMENTS - 1], " ".join(parts[CONTEXT_ELEMENTS - 1 :])]
            parts[-1] = shorten(parts[-1], CONTEXT_CHARS, render=str)
        if parts:
            elements = [{"type": "mrkdwn", "text": p} for p in parts]
            self.blocks.append({"type": "context", "elements": elements})

    def readable(self, text: str) -> str:
        """Return mrkdwn as a reader sees it: links as "label url", escapes undone."""

        def one(match: re.Match[str]) -> str:
            url = self.urls.get(match.group(1), html.unescape(match.group(1)))
            return f"{match.group(2)} {url}"

        return html.unescape(_LINK_RE.sub(one, text))

    def texts(self) -> list[str]:
        out: list[str] = []
        for block in self.blocks:
            if "text" in block:
                out.append(self.readable(block["text"]["text"]))
            for element in block.get("elements", ()):
                out.append(self.readable(element["text"]))
        return out


@functools.lru_cache(maxsize=512)  # fit composes a message many times over
def _item_section(item: CorrectionItem) -> str:
    t = translator(item.language)
    claim = shorten(item.claim, CLAIM_CHARS)
    head = claim_head(t, item.claim_number, claim, t.verdict(item.label.value), "*")
    quote = ""
    if item.quote is not None:
        quote = "\n> " + t.gettext(
            'Source: "{quote}" [{reference}]',
            quote=shorten(item.quote.text, QUOTE_CHARS),
            reference=item.quote.reference,
        )
    room = SECTION_CHARS - len(head) - len(quote) - 1
    marks = len(item.explained(lambda _: ""))  # the markers and their wording
    explanation = shorten(item.explanation, max(room - marks, 20), render=untrusted)
    explained = dataclasses.replace(item, explanation=explanation).explained(lambda s: s)
    return f"{head}\n{explained}{quote}"[:SECTION_CHARS]


@functools.lru_cache(maxsize=512)
def _title(title: str, language: str = SOURCE_LANGUAGE) -> str:
    t = translator(language)
    return t.isolate(shorten(title, TITLE_CHARS)) or t.gettext("source")


def _reference_sections(
    message: _Message, references: tuple[Reference, ...], language: str
) -> list[str]:
    sections: list[str] = []
    heading = translator(language).gettext("References")
    current = f"*{heading}*"
    for ref in references:
        title = _title(ref.title, language)
        line = f"[{ref.number}] {message.link(ref.url, title)}"
        if len(current) + 1 + len(line) > SECTION_CHARS:
            sections.append(current)
            current = line
        else:
            current += "\n" + line
    sections.append(current)
    return sections if references else []


def _trailer(message: _Message, answer: Answer, omission: str) -> list[str]:
    parts = []
    t = translator(answer.correction.language if answer.correction else SOURCE_LANGUAGE)
    if answer.report_url:
        parts.append(message.link(answer.report_url, t.gettext("Full report")))
    if omission:
        parts.append(omission)
    parts += [shorten(note, CONTEXT_CHARS) for note in answer.notes]  # may name a user's file
    if answer.footer:
        parts.append(shorten(answer.footer, CONTEXT_CHARS, render=escape))
    return parts


def _plain(part: Fitted, answer: Answer) -> str:
    """Return the text fallback: the same part as plain text, links only to references."""
    rows = [part.headline, *(item.text for item in part.items)]
    rows += [part.note] if part.note else []
    rows = [_scrub(row) for row in rows]
    t = translator(part.language)
    rows += [f"[{r.number}] {t.isolate(_scrub(r.title))} — {r.url}" for r in part.references]
    rows += [part.omission] if part.omitted else []
    report = answer.report_url
    rows += [t.gettext("Full report: {url}", url=report)] if report else []
    rows += [_scrub(row) for row in (*answer.notes, answer.footer or "") if row]
    return escape("\n".join(rows))


def _compose(correction: Correction, part: Fitted, answer: Answer) -> tuple[_Message, str]:
    message = _Message()
    t = translator(correction.language)
    header = t.gettext("Fact-check: {topic}", topic=t.verdict(correction.label.value))
    header = header[:HEADER_CHARS]
    message.blocks.append({"type": "header", "text": {"type": "plain_text", "text": header}})
    message.section(f"*{shorten(part.headline, SECTION_CHARS - 2)}*")
    for item in part.items:
        message.section(_item_section(item))
    if part.note:
        message.section(shorten(part.note, SECTION_CHARS))
    for text in _reference_sections(message, part.references, correction.language):
        message.section(text)
    message.context(_trailer(message, answer, part.omission))
    return message, _plain(part, answer)


def _fits(message: _Message, text: str) -> bool:
    return len(message.blocks) <= MAX_BLOCKS and len(text) <= TEXT_CHARS


def render_correction(answer: Answer) -> Rendered:
    """Return a correction answer as blocks and fallback text within Slack's limits."""
    correction = answer.correction
    assert correction is not None

    def measure(part: Fitted) -> int:
        return 0 if _fits(*_compose(correction, part, answer)) else _FITS + 1

    part = fit(correction, budget=_FITS, measure=measure)
    message, text = _compose(correction, part, answer)
    return _rendered(message, text, answer)


def render_message(answer: Answer) -> Rendered:
    """Return a failure, refusal or notice as one section plus its notes and footer."""
    message = _Message()
    message.section(shorten(answer.message, SECTION_CHARS, render=escape))
    message.context(_trailer(message, answer, ""))
    rows = [answer.message, *answer.notes, *([answer.footer] if answer.footer else [])]
    text = escape("\n".join(rows))[:TEXT_CHARS]
    return _rendered(message, text, answer)


def _rendered(message: _Message, text: str, answer: Answer) -> Rendered:
    payload = {"text": text, "blocks": message.blocks, "private": answer.private}
    return Rendered(payload=payload, texts=(*message.texts(), html.unescape(text)))


def render(answer: Answer, destination: Destination) -> Rendered:
    """Return the Slack message for answer."""
    if answer.kind == "correction" and answer.correction is not None:
        return render_correction(answer)
    return render_message(answer)
