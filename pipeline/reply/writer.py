"""Correction writing: "This post is ...", each claim with its verdict, numbered references.

The text is written from templates, so every statement comes from a verdict's rationale and
every reference is a retrieved evidence document; `verify_references` proves the second part
before a correction leaves the pipeline. `max_chars` is the platform's length budget: claim
lines are shortened, then dropped from the end (with a note), never the opening verdict.

Failure policy: raises ValueError only if a reference would point outside the evidence (a bug).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pipeline.records import Claim, Correction, Evidence, Label, Quote, Reference, Stance, Verdict
from pipeline.reply.links import has_link, scrub_links

_OPENING = {
    Label.ACCURATE: "This post is accurate.",
    Label.PARTLY_ACCURATE: "This post is partly accurate: some of its claims hold and some do not.",
    Label.MISLEADING: "This post is misleading: it leaves out context that changes its meaning.",
    Label.FALSE: "This post is false.",
    Label.UNVERIFIABLE: (
        "This post is unverifiable with the credible evidence factbot could find; "
        "treat it with care rather than as confirmed or debunked."
    ),
}
_URL_RE = re.compile(r"https?://\S+")
MAX_QUOTE = 140
MAX_SOURCES_LISTED = 3


def _shorten(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


async def write_correction(
    claims: Sequence[Claim],
    verdict: Verdict,
    evidence: Sequence[Evidence],
    *,
    quotes: Sequence[Quote] = (),
    max_chars: int = 2000,
) -> Correction:
    """Write the correction for a verdict, citing only the given evidence.

    Claims the citation check hid (`shown=False`) are left out; a decided claim quotes at most
    one verified passage of its deciding evidence.
    """
    numbers: dict[str, int] = {}
    references: list[Reference] = []

    def cite(ev: Evidence) -> str:
        if ev.document.id not in numbers:
            numbers[ev.document.id] = len(references) + 1
            references.append(
                Reference(
                    number=numbers[ev.document.id],
                    document_id=ev.document.id,
                    url=ev.document.url,
                    title=scrub_links(ev.document.title) or ev.document.domain,
                )
            )
        return f"[{numbers[ev.document.id]}]"

    by_id = {e.id: e for e in evidence}
    verdicts = {v.claim_id: v for v in verdict.claims}
    lines = [_OPENING[verdict.label]]
    hidden = 0
    for n, claim in enumerate(claims, start=1):
        cv = verdicts.get(claim.id)
        if cv is None:
            continue
        if not cv.shown:
            hidden += 1
            continue
        # Claims, rationales and quotes come from posts, pages or a model: no link survives them.
        quote = scrub_links(_shorten(claim.text, MAX_QUOTE))
        cited = [by_id[i] for i in cv.evidence_ids if i in by_id]
        if cv.label is Label.UNVERIFIABLE:
            if cited:
                marks = " ".join(dict.fromkeys(cite(e) for e in cited[:MAX_SOURCES_LISTED]))
                line = (
                    f'Claim {n}, "{quote}": unverifiable. No fact-check settles it; the most '
                    f"relevant sources found are {marks}."
                )
            else:
                line = (
                    f'Claim {n}, "{quote}": unverifiable. No credible evidence about it was found.'
                )
        else:
            marks = " ".join(dict.fromkeys(cite(e) for e in cited))
            rationale = scrub_links(cv.rationale).strip()
            line = f'Claim {n}, "{quote}": {cv.label.value}. {rationale} {marks}'.rstrip()
            chosen = _best_quote(cv.label, cv.evidence_ids, quotes)
            if chosen is not None and chosen.evidence_id in by_id and not has_link(chosen.text):
                excerpt = _excerpt(chosen.text)
                line += f' Source: "{excerpt}" {cite(by_id[chosen.evidence_id])}'
        lines.append(line)
    if hidden:
        lines.append(
            f"({hidden} claim{'s were' if hidden > 1 else ' was'} checked but not shown: "
            "its evidence did not pass factbot's citation check.)"
        )
    text = _fit(lines, max_chars)
    cited_numbers = {int(m) for m in re.findall(r"\[(\d+)\]", text)}
    kept = [r for r in references if r.number in cited_numbers]
    correction = Correction(text=text, references=tuple(kept))
    verify_references(correction, evidence)
    return correction


_PREFERRED = {
    Label.FALSE: (Stance.REFUTES, Stance.CONTEXT),
    Label.MISLEADING: (Stance.CONTEXT, Stance.REFUTES),
    Label.ACCURATE: (Stance.SUPPORTS, Stance.CONTEXT),
    Label.PARTLY_ACCURATE: (Stance.CONTEXT, Stance.SUPPORTS, Stance.REFUTES),
}


def _best_quote(label: Label, evidence_ids: Sequence[str], quotes: Sequence[Quote]) -> Quote | None:
    mine = [q for q in quotes if q.evidence_id in evidence_ids]
    for stance in _PREFERRED.get(label, ()):
        for quote in mine:
            if quote.stance is stance:
                return quote
    return None


def _excerpt(text: str, limit: int = 220) -> str:
    """Return a verbatim prefix of text that fits, ending at a word (marked … when cut)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut + "…"


def _fit(lines: list[str], max_chars: int) -> str:
    text = "\n".join(lines)
    if len(text) <= max_chars:
        return text
    body = [lines[0]]
    for line in lines[1:]:
        candidate = "\n".join([*body, line])
        if len(candidate) + 40 > max_chars:
            body.append("(More claims were checked; see the full check.)")
            break
        body.append(line)
    return "\n".join(body)[:max_chars]


def verify_references(correction: Correction, evidence: Sequence[Evidence]) -> None:
    """Raise ValueError unless every reference and URL in the correction was retrieved."""
    retrieved = {e.document.id: e.document.url for e in evidence}
    for ref in correction.references:
        if retrieved.get(ref.document_id) != ref.url:
            raise ValueError(f"reference {ref.number} ({ref.url}) is not a retrieved document")
    allowed = {ref.url for ref in correction.references}
    for url in _URL_RE.findall(correction.text):
        if url not in allowed:
            raise ValueError(f"the correction text contains an unretrieved URL: {url}")
