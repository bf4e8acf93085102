"""Correction writing: "This post is ...", each claim with its verdict, numbered references.

The correction is written from templates, so every statement comes from a verdict's rationale
and every reference is a retrieved evidence document; `verify_references` proves the second part
before a correction leaves the pipeline. It is structured (headline, one item per shown claim,
note, references) and never cut: each platform fits it to its own length budget when it renders
it (`pipeline.reply.render`).

Every sentence it writes is a gettext message (`pipeline.util.i18n`) in the reply's language,
the post's where a catalogue has it. A decided claim's explanation is the judge's rationale in
English replies; in other languages it is a translated sentence for its verdict and how it was
decided (the rationale is the model's English, or a fact-check's own words), and its quote
shows the source's words as they are.

Failure policy: raises ValueError only if a reference would point outside the evidence (a bug).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pipeline.records.domain import (
    Basis,
    Claim,
    ClaimGraph,
    Correction,
    CorrectionItem,
    CorrectionQuote,
    Evidence,
    GraphConflict,
    Label,
    Quote,
    Reference,
    Stance,
    Verdict,
    utcnow,
)
from pipeline.records.factchecks import outdated
from pipeline.records.search_status import LiveSearch, SearchStatus
from pipeline.reply.links import has_link, scrub_links
from pipeline.reply.render import (
    markdown_without_reference_links,
    render_markdown,
    render_plain,
)
from pipeline.util.i18n import N_, SOURCE_LANGUAGE, Translator, translator

OPENING = {
    Label.ACCURATE: N_("This post is accurate."),
    Label.PARTLY_ACCURATE: N_(
        "This post is partly accurate: some of its claims hold and some do not."
    ),
    Label.MISLEADING: N_(
        "This post is misleading: it leaves out context that changes its meaning."
    ),
    Label.FALSE: N_("This post is false."),
    Label.UNVERIFIABLE: N_(
        "This post is unverifiable with the credible evidence factbot could find; "
        "treat it with care rather than as confirmed or debunked."
    ),
}
# factbot's own blindness is never the claim's fault: said apart from "found nothing credible".
BLIND_OPENING = N_(
    "factbot could not search: {reason}. Nothing was checked, so this says nothing about "
    "whether the post is accurate."
)
BLIND_OPENING_OTHER = N_(
    "factbot could not search any evidence source. Nothing was checked, so this says nothing "
    "about whether the post is accurate."
)
BLIND_ITEM = N_("Not checked: factbot had no evidence source to search.")
LIVE_FAILED = N_("(Live web search failed for this check; only the local index was searched.)")
NOT_READ = N_(
    "Not judged: factbot's stance model reads English only, and no rated fact-check of this "
    "claim was found."
)
# A decided claim's explanation in a reply that is not English, by verdict.
DECIDED = {
    Label.ACCURATE: N_("The cited sources support it."),
    Label.PARTLY_ACCURATE: N_("The cited sources support part of it."),
    Label.MISLEADING: N_("The cited sources add context that changes its meaning."),
    Label.FALSE: N_("The cited sources contradict it."),
}
REVIEWED = N_("A rated fact-check of this claim reached this verdict.")
# A published fact-check that matched the claim (pipeline.checking.published), in any language.
CHECKED_ON = N_("Checked by {publisher} on {date}: {rating}.")
CHECKED = N_("Checked by {publisher}: {rating}.")
CHECKED_UNRATED_ON = N_("{publisher} checked this claim on {date}: “{headline}”.")
CHECKED_UNRATED = N_("{publisher} checked this claim: “{headline}”.")
OUTDATED = N_("The fact-check is from {year}; things may have changed since.")
DISAGREE = N_("Newer credible evidence says otherwise: factbot does not pick a side.")
PARTS = {"date": N_("date"), "place": N_("place"), "number": N_("number")}
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
    graphs: Sequence[ClaimGraph] = (),
    sources: SearchStatus | None = None,
    language: Translator | None = None,
) -> Correction:
    """Write the correction for a verdict, citing only the given evidence.

    With `sources` saying no evidence source could be searched (an empty local index, live
    search off or unreachable) and no evidence, the headline says "factbot could not search:
    …" and each claim "Not checked", instead of blaming the claim; when only live search
    failed, the note says so.

    Claims the citation check hid (`shown=False`) are left out; a decided claim quotes at most
    one verified passage of its deciding evidence. A claim that is not accurate and whose graph
    verification found a conflicting date, place or number says which part is wrong first
    ("The date is wrong: the claim says 2024, the source says 2012."), the conflicting source
    cited first. References are numbered in order of first citation, so the references of any
    leading run of items are numbered 1..m.

    `language` is the reply's translator (`Catalogues.for_language`); None writes English. Its
    notice, when the post's language has no catalogue, ends the headline.
    """
    t = language or translator(SOURCE_LANGUAGE)
    numbers: dict[str, int] = {}
    references: list[Reference] = []
    blind = sources is not None and sources.blind and not evidence

    def cite(ev: Evidence) -> int:
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
        return numbers[ev.document.id]

    by_id = {e.id: e for e in evidence}
    verdicts = {v.claim_id: v for v in verdict.claims}
    graph_of = {g.claim_id: g for g in graphs}
    items: list[CorrectionItem] = []
    hidden = 0
    for n, claim in enumerate(claims, start=1):
        cv = verdicts.get(claim.id)
        if cv is None:
            continue
        if not cv.shown:
            hidden += 1
            continue
        # Claims, rationales and quotes come from posts, pages or a model: no link survives them.
        text = scrub_links(_shorten(claim.text, MAX_QUOTE))
        cited = [by_id[i] for i in cv.evidence_ids if i in by_id]
        quote: CorrectionQuote | None = None
        graph = graph_of.get(claim.id)
        conflicts = [c for c in (graph.conflicts if graph else ()) if c.evidence_id in by_id]
        if cv.label is Label.UNVERIFIABLE:
            cited = [*(by_id[c.evidence_id] for c in conflicts), *cited]
            refs = tuple(dict.fromkeys(cite(e) for e in cited[:MAX_SOURCES_LISTED]))
            explanation = _unverified(t, cv.basis, bool(refs), blind=blind)
            review = _fact_check_of(cited)
            if review is not None and not blind:
                explanation = _checked(t, review, cv.basis)
            if conflicts:  # not settled, but worth saying: a source disagrees on a detail
                explanation = t.gettext(
                    "No fact-check settles it, but {detail}",
                    detail=_wrong_parts(t, conflicts[:1], differs=True),
                )
        else:
            if cv.label is Label.ACCURATE:
                conflicts = []
            cited = [*(by_id[c.evidence_id] for c in conflicts), *cited]
            refs = tuple(dict.fromkeys(cite(e) for e in cited))
            explanation = _decided(t, cv.label, cv.basis, scrub_links(cv.rationale).strip())
            review = _fact_check_of(cited)
            if review is not None and cv.basis in (Basis.REVIEW, Basis.CONFLICT):
                explanation = _checked(t, review, cv.basis)
            wrong = _wrong_parts(t, conflicts)
            if wrong:
                wrong = wrong[0].upper() + wrong[1:]
                rest = "" if explanation.lower().startswith(wrong[:20].lower()) else explanation
                explanation = f"{wrong}{t.space}{rest}".strip()
            chosen = _best_quote(cv.label, cv.evidence_ids, quotes)
            if chosen is not None and chosen.evidence_id in by_id and not has_link(chosen.text):
                quote = CorrectionQuote(
                    text=_excerpt(chosen.text),
                    reference=cite(by_id[chosen.evidence_id]),
                    stance=chosen.stance,
                )
        items.append(
            CorrectionItem(
                claim_number=n,
                claim=text,
                label=cv.label,
                explanation=explanation,
                references=refs,
                quote=quote,
                language=t.language,
            )
        )
    note = ""
    if hidden:
        note = t.ngettext(
            "({n} claim was checked but not shown: its evidence did not pass factbot's "
            "citation check.)",
            "({n} claims were checked but not shown: their evidence did not pass factbot's "
            "citation check.)",
            hidden,
        )
    headline, could_not_search = t.gettext(OPENING[verdict.label]), ""
    if blind and sources is not None:
        could_not_search = scrub_links(sources.blind_reason(short=True))
        headline = (
            t.gettext(BLIND_OPENING, reason=could_not_search)
            if t.language == SOURCE_LANGUAGE
            else t.gettext(BLIND_OPENING_OTHER)
        )
    elif sources is not None and sources.live is not LiveSearch.OFF and sources.live_problem():
        live = scrub_links(sources.live_problem(short=True))
        live = f"({live[0].upper()}{live[1:]}.)"
        live = live if t.language == SOURCE_LANGUAGE else t.gettext(LIVE_FAILED)
        note = t.space.join(filter(None, (note, live)))
    headline = " ".join(filter(None, (headline, t.notice)))
    correction = Correction(
        label=verdict.label,
        headline=headline,
        items=tuple(items),
        note=note,
        references=tuple(references),
        could_not_search=could_not_search,
        language=t.language,
    )
    verify_references(correction, evidence)
    return correction


def _fact_check_of(cited: Sequence[Evidence]) -> Evidence | None:
    """Return the claim's first cited evidence when it is a matched published fact-check."""
    first = cited[0] if cited else None
    if first is None or first.document.claim_review is None or not first.id.startswith("fc-"):
        return None
    return first


def _checked(t: Translator, ev: Evidence, basis: Basis) -> str:
    """Return "Checked by PolitiFact on 3 May 2020: Pants on Fire (false)." in t's language.

    A review without a rating factbot understands is cited for its headline; where fresh
    evidence disagrees with the review (`Basis.CONFLICT`) the sentence says so; a review older
    than three years says it may be outdated.
    """
    review = ev.document.claim_review
    assert review is not None  # _fact_check_of chose it for its review
    publisher = scrub_links(review.reviewer or ev.document.publisher or ev.document.domain)
    when = review.date_published
    day = t.date(when.date()) if when is not None else ""
    if review.label is None or review.label is Label.UNVERIFIABLE:
        headline = scrub_links(_shorten(ev.document.title or review.claim_reviewed, MAX_QUOTE))
        text = t.gettext(
            CHECKED_UNRATED_ON if when else CHECKED_UNRATED,
            publisher=publisher,
            date=day,
            headline=headline,
        )
    else:
        verdict = t.verdict(review.label)
        rating = scrub_links(review.rating).strip() or verdict
        if rating.casefold() != verdict.casefold():
            rating = f"{rating} ({verdict})"
        text = t.gettext(
            CHECKED_ON if when else CHECKED, publisher=publisher, date=day, rating=rating
        )
    if basis is Basis.CONFLICT:
        text = f"{text}{t.space}{t.gettext(DISAGREE)}"
    if when is not None and outdated(when, utcnow()):
        text = f"{text}{t.space}{t.gettext(OUTDATED, year=str(when.year))}"
    return text


def _unverified(t: Translator, basis: Basis, cited: bool, *, blind: bool) -> str:
    """Return why an unverifiable claim was not decided."""
    if blind:
        return t.gettext(BLIND_ITEM)
    if basis is Basis.LANGUAGE:
        return t.gettext(NOT_READ)
    if basis is Basis.CONTESTED:
        return t.gettext("Credible sources about it disagree.")
    if basis is Basis.REPORTS:
        return t.gettext("The sources found only report or repeat it; none confirms or refutes it.")
    if basis is Basis.VERIFIER:
        return t.gettext("Sources about it were found, but none says clearly whether it is true.")
    if cited:
        return t.gettext("No fact-check settles it.")
    return t.gettext("No credible evidence about it was found.")


def _decided(t: Translator, label: Label, basis: Basis, rationale: str) -> str:
    """Return a decided claim's explanation: the rationale in English, a sentence otherwise."""
    if t.language == SOURCE_LANGUAGE:
        return rationale
    if basis is Basis.REVIEW:
        return t.gettext(REVIEWED)
    return t.gettext(DECIDED.get(label, DECIDED[Label.FALSE]))


def _wrong_parts(
    t: Translator, conflicts: Sequence[GraphConflict], *, differs: bool = False
) -> str:
    """Return "the date is wrong: the claim says X, the source says Y." for each conflict."""
    template = (
        N_("the {part} differs: the claim says {claim}, the source says {source}")
        if differs
        else N_("the {part} is wrong: the claim says {claim}, the source says {source}")
    )
    parts = dict.fromkeys(
        t.gettext(
            template,
            part=t.gettext(PARTS.get(c.kind, c.kind)),
            claim=scrub_links(c.claim_value),
            source=scrub_links(c.evidence_value),
        )
        for c in conflicts
    )
    if not parts:
        return ""
    return t.gettext("{parts}.", parts="; ".join(parts))


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


def verify_references(correction: Correction, evidence: Sequence[Evidence]) -> None:
    """Raise ValueError unless every reference and every rendered URL was retrieved.

    Rendering with a budget only drops parts of the full rendering, so checking the full plain
    and markdown renderings covers every budget (JSON holds the same strings as `text`).
    """
    retrieved = {e.document.id: e.document.url for e in evidence}
    for ref in correction.references:
        if retrieved.get(ref.document_id) != ref.url:
            raise ValueError(f"reference {ref.number} ({ref.url}) is not a retrieved document")
    numbers = {ref.number for ref in correction.references}
    for item in correction.items:
        missing = set(item.cited) - numbers
        if missing:
            raise ValueError(f"claim {item.claim_number} cites unlisted references {missing}")
    allowed = {ref.url for ref in correction.references}
    texts = [
        correction.text,
        render_plain(correction, budget=None),
        markdown_without_reference_links(render_markdown(correction, budget=None), correction),
    ]
    for text in texts:
        for url in _URL_RE.findall(text):
            if url not in allowed:
                raise ValueError(f"the correction text contains an unretrieved URL: {url}")
