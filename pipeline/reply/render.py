"""Rendering a structured correction as plain text, markdown or JSON, fitted to a length budget.

`fit` is the one fitting rule, shared with the platform renderers (which pass their own
`measure`): it drops whole items from the end, with the references only they cited, and adds an
omission line ("(2 more claims were checked; see the full check.)") counted in the budget. The
note about hidden claims is dropped before any item. Only when even the headline and the
omission line do not fit is the headline shortened, at a word boundary and marked "…", never
below its verdict clause (the text before its first ".", ":" or ";", at most 60 characters).
A URL, a reference number or a word is never cut. A budget below `MIN_BUDGET` (120) is refused
with ValueError unless the whole correction fits it; from 120 up the verdict clause and the
omission line always fit.

References keep their original numbers, so the markers match the full check and its JSON;
the writer numbers references by first citation, so a fitted reply lists 1..m densely.

Markdown: text that came from posts, pages or a model (claims, explanations, quotes, titles)
is link-scrubbed, whitespace-collapsed and escaped, so it can neither link nor format; the
only links are the references.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from pipeline.records.domain import Correction, CorrectionItem, Reference, claim_head
from pipeline.reply.links import scrub_links
from pipeline.util.i18n import SOURCE_LANGUAGE, translator

MIN_BUDGET = 120
MAX_VERDICT_CLAUSE = 60
_MARK_RE = re.compile(r"\[(\d+)\]")
_CLAUSE_RE = re.compile(r"[^.:;]*")
_GAP_RE = re.compile(r"\s+")
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>~|&])")
_MD_URL = {"(": "%28", ")": "%29", " ": "%20", "<": "%3C", ">": "%3E"}


@dataclass(frozen=True)
class Fitted:
    """The parts of a correction that fit a budget."""

    headline: str
    items: tuple[CorrectionItem, ...]
    note: str
    references: tuple[Reference, ...]
    omitted: int  # items left out
    language: str = SOURCE_LANGUAGE  # the correction's (pipeline.util.i18n)

    @property
    def omission(self) -> str:
        """Return the line telling how many items were left out, or "" when none were."""
        return omission_line(self.omitted, language=self.language)


def omission_line(omitted: int, *, language: str = SOURCE_LANGUAGE) -> str:
    """Return the line telling the reader how many checked claims a reply leaves out."""
    if omitted <= 0:
        return ""
    return translator(language).ngettext(
        "({n} more claim was checked; see the full check.)",
        "({n} more claims were checked; see the full check.)",
        omitted,
    )


def fit(correction: Correction, *, budget: int | None, measure: Callable[[Fitted], int]) -> Fitted:
    """Return the largest part of a correction whose rendering `measure` says fits the budget."""
    full = _select(correction, len(correction.items), correction.headline, correction.note)
    if budget is None or measure(full) <= budget:
        return full
    if budget < MIN_BUDGET:
        raise ValueError(f"a budget of {budget} characters is below {MIN_BUDGET}")
    for candidate in shrinking(correction):
        if measure(candidate) <= budget:
            return candidate
    raise ValueError(f"not even the verdict of the correction fits {budget} characters")


def shrinking(correction: Correction) -> Iterator[Fitted]:
    """Yield the parts of a correction a renderer may show, largest first (the fitting order).

    The whole correction; then without its note; then fewer items from the end (each with and
    without the note); then the headline alone, shortened at ever earlier word boundaries.
    """
    items = correction.items
    notes = (correction.note, "") if correction.note else ("",)
    for kept in range(len(items), -1, -1):
        for note in notes:
            yield _select(correction, kept, correction.headline, note)
    for headline in _shortened(correction.headline):
        yield _select(correction, 0, headline, "")


def _select(correction: Correction, kept: int, headline: str, note: str) -> Fitted:
    items = correction.items[:kept]
    cited = {n for item in items for n in item.cited}
    attached = {n for item in correction.items for n in item.cited}
    # A reference no item cites (an old, text-only correction) is listed while its marker shows.
    marked = {int(n) for n in _MARK_RE.findall(f"{headline} {note}")} - attached
    references = tuple(r for r in correction.references if r.number in cited | marked)
    omitted = len(correction.items) - kept
    return Fitted(headline, items, note, references, omitted, correction.language)


def _shortened(headline: str) -> list[str]:
    """Return the headline's word-boundary prefixes marked "…", longest first."""
    clause = _CLAUSE_RE.match(headline)
    floor = min(len(clause.group(0).rstrip()) if clause else 0, MAX_VERDICT_CLAUSE)
    cuts = [m.start() for m in _GAP_RE.finditer(headline)]
    prefixes = (headline[:cut].rstrip(".,;:—-") for cut in reversed(cuts))
    return [p + "…" for p in prefixes if len(p) >= floor and p]


def render_plain(correction: Correction, *, budget: int | None) -> str:
    """Render a correction as plain text within budget characters (None: no limit)."""
    lines = {item: item.text for item in correction.items}
    t = translator(correction.language)

    def compose(part: Fitted) -> str:
        rows = [part.headline, *(lines[item] for item in part.items)]
        rows += [part.note] if part.note else []
        rows += [f"[{r.number}] {t.isolate(r.title)} — {r.url}" for r in part.references]
        rows += [part.omission] if part.omitted else []
        return "\n".join(rows)

    return compose(fit(correction, budget=budget, measure=lambda part: len(compose(part))))


def escape_markdown(text: str) -> str:
    """Return untrusted text as inert markdown: no links, no formatting, one line."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(scrub_links(text).split()))


def markdown_url(url: str) -> str:
    """Return url as a markdown link destination (brackets and spaces percent-encoded)."""
    return "".join(_MD_URL.get(ch, ch) for ch in url)


def markdown_item(item: CorrectionItem) -> str:
    """Return one item as a markdown list entry."""
    esc = escape_markdown
    t = translator(item.language)
    head = claim_head(t, item.claim_number, esc(item.claim), t.verdict(item.label.value), "**")
    line = f"- {head}{t.space}{item.explained(esc)}".rstrip()
    if item.quote is not None:
        line += t.space + t.gettext(
            'Source: "{quote}" [{reference}]',
            quote=esc(item.quote.text),
            reference=item.quote.reference,
        )
    return t.isolate(line)


def render_markdown(correction: Correction, *, budget: int | None) -> str:
    """Render a correction as markdown within budget characters (None: no limit)."""
    lines = {item: markdown_item(item) for item in correction.items}
    note = escape_markdown(correction.note)
    t = translator(correction.language)
    source = t.gettext("source")
    refs = {
        r.number: f"- [{r.number}] [{t.isolate(escape_markdown(r.title)) or source}]"
        f"({markdown_url(r.url)})"
        for r in correction.references
    }

    def compose(part: Fitted) -> str:
        blocks = [f"**{escape_markdown(part.headline)}**"]
        if part.items:
            blocks.append("\n".join(lines[item] for item in part.items))
        if part.note:
            blocks.append(note)
        if part.references:
            blocks.append("\n".join(refs[r.number] for r in part.references))
        if part.omitted:
            blocks.append(part.omission)
        return "\n\n".join(blocks)

    return compose(fit(correction, budget=budget, measure=lambda part: len(compose(part))))


def markdown_without_reference_links(markdown: str, correction: Correction) -> str:
    """Return markdown with the references' link destinations removed, to look for others."""
    for ref in correction.references:
        markdown = markdown.replace(f"]({markdown_url(ref.url)})", "]()")
    return markdown


def reference_json(ref: Reference) -> dict[str, Any]:
    """Return a reference as a JSON object."""
    return {
        "number": ref.number,
        "url": ref.url,
        "title": ref.title,
        "document_id": ref.document_id,
    }


def item_json(item: CorrectionItem) -> dict[str, Any]:
    """Return a correction item as a JSON object."""
    quote = item.quote
    return {
        "claim_number": item.claim_number,
        "claim": item.claim,
        "label": item.label.value,
        "explanation": item.explanation,
        "references": list(item.references),
        "quote": None if quote is None else {"text": quote.text, "reference": quote.reference},
    }


def render_json(correction: Correction) -> dict[str, Any]:
    """Return the whole correction as a JSON-serialisable dict (never fitted)."""
    return {
        "label": correction.label.value,
        "headline": correction.headline,
        "items": [item_json(item) for item in correction.items],
        "note": correction.note,
        "language": correction.language,
        # Set when factbot could not search at all: the verdict says nothing about the post.
        "could_not_search": correction.could_not_search or None,
        "references": [reference_json(r) for r in correction.references],
        "text": correction.text,
    }
