"""`Answer` → a Discord message: one embed for a correction, a short text for anything else.

The embed: the verdict as title (its colour per verdict), the headline, the correction's note,
the answer's notes and the numbered references (the only links) in the description, one field
per claim ("Claim N — label": the claim, the explanation with its [n] markers, the quote), the
answer's footer, and the report link as the title's link. Discord's limits are met with the one
fitting rule (`pipeline.reply.render.fit`): whole claims are dropped from the end, with the
references only they cite, and an omission line says so; one field never exceeds 1,024
characters (its explanation and quote are shortened at a word, markers kept). Text from posts
and pages is escaped (`escape_markdown`: no links, no formatting, no `<@…>` mentions), and every
message is sent with no allowed mentions, so nothing ever pings anyone.

The nonce of a channel message is derived from the reply's key (the reply ledger's key):
Discord returns the first message for a repeated nonce (`enforce_nonce`), so a retried send
cannot post a second one.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from bots.runtime.platform.contract import Answer, Destination, Rendered
from pipeline.records.domain import Correction, CorrectionItem, Label
from pipeline.reply.render import Fitted, escape_markdown, fit, markdown_url
from pipeline.util.i18n import SOURCE_LANGUAGE, translator

EMBED_TOTAL = 6000
TITLE = 256
DESCRIPTION = 4096
FIELDS = 25
FIELD_NAME = 256
FIELD_VALUE = 1024
FOOTER = 2048
CONTENT = 2000
THREAD_NAME = 100
NOTE = 300  # one note of the answer (e.g. about an attachment)
MAX_NOTES = 5
COLOURS = {
    Label.ACCURATE: 0x2ECC71,  # green
    Label.PARTLY_ACCURATE: 0xF1C40F,  # amber
    Label.MISLEADING: 0xE67E22,  # orange
    Label.FALSE: 0xE74C3C,  # red
    Label.UNVERIFIABLE: 0x95A5A6,  # grey
}
_TOO_BIG = 10**9
_LINE_START = re.compile(r"^([#>\-+*]|\d+\.)", re.MULTILINE)
_NOISE = re.compile(r"<[@#!&:a-z0-9]+>|https?://\S+|\s+", re.IGNORECASE)


@dataclass(frozen=True)
class DiscordReply:
    """A message ready for the sender (`Rendered.payload`)."""

    kind: str
    private: bool  # to be shown only to the requester where Discord can
    content: str | None
    embed: dict[str, Any] | None  # Discord's embed JSON
    thread_name: str
    nonce: str
    language: str = SOURCE_LANGUAGE  # the reply's catalogue (the pointer to it is said in it)

    def body(self) -> dict[str, Any]:
        """Return the JSON of the message (without routing)."""
        return {
            "content": self.content,
            "embeds": [self.embed] if self.embed else [],
            "allowed_mentions": {"parse": []},
        }


def escape(text: str) -> str:
    """Return untrusted text as inert Discord markdown (no links, formatting or mentions)."""
    return _LINE_START.sub(r"\\\1", escape_markdown(text)).replace("@", "@\u200b")


def nonce_for(destination: Destination) -> str:
    """Return the message nonce (25 characters) of the one answer to a request.

    It is made from the reply's own key (`public["reply_key"]`, the reply ledger's key), else
    from the request's event key: the same for every attempt at one answer, whatever it says.
    """
    public = destination.public
    key = public.get("reply_key") or public.get("event_key")
    key = key or f"{destination.channel_id}:{destination.message_id}"
    return hashlib.sha256(f"discord-answer:{key}".encode()).hexdigest()[:25]


def render(answer: Answer, destination: Destination) -> Rendered:
    """Return the Discord message for answer, within Discord's limits."""
    nonce = nonce_for(destination)
    if answer.kind == "correction" and answer.correction is not None:
        embed = correction_embed(answer.correction, answer)
        post_text = answer.check.post.text if answer.check is not None else ""
        name = thread_name(post_text, answer.correction.label, answer.correction.language)
        language = answer.correction.language
        reply = DiscordReply(answer.kind, answer.private, None, embed, name, nonce, language)
        return Rendered(reply, (*embed_texts(embed), name))
    content = _clip(" ".join([answer.message, *(escape(n) for n in answer.notes)]).strip(), CONTENT)
    reply = DiscordReply(answer.kind, answer.private, content, None, "", nonce)
    return Rendered(reply, (content,))


def thread_name(post_text: str, label: Label, language: str = SOURCE_LANGUAGE) -> str:
    """Return the name of the thread a correction opens: "Fact-check: " and the post's start."""
    t = translator(language)
    words = _NOISE.sub(" ", post_text).strip() or t.verdict(label.value).capitalize()
    return _clip(t.gettext("Fact-check: {topic}", topic=words), THREAD_NAME)


def correction_embed(correction: Correction, answer: Answer) -> dict[str, Any]:
    """Return the embed of a correction, fitted to every embed limit."""
    values = {item: item_value(item) for item in correction.items}
    notes = [_clip(escape(n), NOTE) for n in answer.notes[:MAX_NOTES]]
    footer = _clip(answer.footer, FOOTER) if answer.footer else None
    t = translator(correction.language)

    def compose(part: Fitted) -> dict[str, Any]:
        blocks = [escape(part.headline)]
        if part.note:
            blocks.append(escape(part.note))
        blocks += notes
        if part.omitted:
            blocks.append(part.omission)
        if part.references:
            lines = [f"[{r.number}] {_link(r.title, r.url, t.language)}" for r in part.references]
            heading = t.gettext("References")
            blocks.append(f"**{heading}**\n" + "\n".join(lines))
        if answer.report_url:
            blocks.append(_link(t.gettext("Full report"), answer.report_url, t.language))
        embed: dict[str, Any] = {
            "type": "rich",
            "title": t.verdict(correction.label.value).capitalize(),
            "description": "\n\n".join(blocks),
            "color": COLOURS[correction.label],
            "fields": [
                {"name": field_name(item), "value": values[item], "inline": False}
                for item in part.items
            ],
        }
        if answer.report_url:
            embed["url"] = answer.report_url
        if footer:
            embed["footer"] = {"text": footer}
        return embed

    def measure(part: Fitted) -> int:
        embed = compose(part)
        if len(embed["description"]) > DESCRIPTION or len(embed["fields"]) > FIELDS:
            return _TOO_BIG
        return embed_length(embed)

    try:
        return compose(fit(correction, budget=EMBED_TOTAL, measure=measure))
    except ValueError:  # not even the verdict fits with the references and notes it needs
        bare = Correction(
            label=correction.label, headline=correction.headline, language=correction.language
        )
        return compose(fit(bare, budget=EMBED_TOTAL - len(footer or ""), measure=measure))


def field_name(item: CorrectionItem) -> str:
    """Return a claim's field name."""
    t = translator(item.language)
    heading = t.gettext("Claim {number}", number=item.claim_number)
    return _clip(t.isolate(f"{heading} — {t.verdict(item.label.value)}"), FIELD_NAME)


def item_value(item: CorrectionItem) -> str:
    """Return a claim's field value: the claim, the explanation with markers, the quote."""
    t = translator(item.language)
    claim = t.isolate(f'"{_clip(escape(item.claim), 300)}"')
    marks = item.explained(lambda _: "").strip()  # the markers (and the unverifiable wording)
    quote = ""
    if item.quote is not None:
        quote = t.gettext(
            'Source: "{quote}" [{reference}]',
            quote=_clip(escape(item.quote.text), 300),
            reference=item.quote.reference,
        )
    room = FIELD_VALUE - len(claim) - len(marks) - len(quote) - 4
    explanation = _clip(escape(item.explanation), max(room, 1)) if room > 1 else ""
    explained = item.explained(lambda _: explanation) if explanation else marks
    value = "\n".join(p for p in (claim, explained, quote) if p)
    return _clip(value, FIELD_VALUE)


def embed_length(embed: dict[str, Any]) -> int:
    """Return the characters Discord counts towards an embed's 6,000."""
    total = len(embed.get("title", "")) + len(embed.get("description", ""))
    total += sum(len(f["name"]) + len(f["value"]) for f in embed.get("fields", []))
    total += len((embed.get("footer") or {}).get("text", ""))
    total += len((embed.get("author") or {}).get("name", ""))
    return total


def embed_texts(embed: dict[str, Any]) -> tuple[str, ...]:
    """Return every text of an embed a reader sees, its link included."""
    texts = [embed.get("title", ""), embed.get("description", ""), embed.get("url", "")]
    for f in embed.get("fields", []):
        texts += [f["name"], f["value"]]
    texts.append((embed.get("footer") or {}).get("text", ""))
    return tuple(t for t in texts if t)


def _link(title: str, url: str, language: str = SOURCE_LANGUAGE) -> str:
    t = translator(language)
    label = t.isolate(_clip(escape(title), 120)) or t.gettext("source")
    return f"[{label}]({markdown_url(url)})"


def _clip(text: str, limit: int) -> str:
    """Return text cut at a word boundary to at most limit characters, marked "…"."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip("\\").rstrip() + "…"
