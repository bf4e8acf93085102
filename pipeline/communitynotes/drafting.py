"""Decide whether a check calls for a Community Note, and write it.

The decision leans to no note (X's raters punish notes on posts that need none):

- the post's verdict is accurate or partly accurate: **no note needed**;
- unverifiable, or false / misleading without what a note needs: **not enough evidence**;
- **write** only for a shown false or misleading claim that the claim detector reads as a
  statement (never an opinion, a question or a joke: `checkworthiness`), in a language factbot
  has a catalogue for, with a credible retrieved source and a specific correction from it.

The specific correction, first in the note (what is wrong, then what is true):

1. a date, place or number of the claim that the evidence contradicts (the graph stage's
   conflict): "The post says 1975, but NASA reports 20 July 1969: “<the sentence>”", the
   sentence being one of that source's that holds the contradicting value;
2. an accepted published fact-check in the post's language: "<publisher> checked this claim
   and rated it false: “<its headline>”";
3. English only (the stance model reads English): the source sentence that refutes the claim,
   "Contrary to this post, <publisher> reports: “<sentence>”".

A quote is always a whole sentence of the cited source that bears on the claim (it shares a
content word with it and, where a stance model is given, refutes it at `BEARING` or more) and
holds the contradicting fact; it is never cut: a note that would not fit in 280 characters (as X
counts them, a URL 23) drops the quote where the correction stands without it, else tries the
next candidate. URLs are only references of the check (retrieved, reachability-checked
documents), credible (high or medium tier), the best single source first: the matched
published fact-check, then a primary source (a government, an international body, a
university), then a high-tier publisher. No internal score ("stance model, p = 0.94") appears.

Failure policy: pure; returns a `NotePlan`, never raises on a check.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from pipeline.claims.heuristic import checkworthiness
from pipeline.records.domain import (
    Check,
    Claim,
    CorrectionItem,
    Document,
    Evidence,
    Label,
    Reference,
    Stance,
    Tier,
)
from pipeline.records.factchecks import FactCheck
from pipeline.reply.links import scrub_links
from pipeline.reply.thread import defuse_mentions, x_weighted
from pipeline.util.i18n import (
    N_,
    UNDETERMINED,
    Translator,
    available,
    catalogue_code,
    translator,
)
from pipeline.util.text import ALL_STOPWORDS, split_sentences, words
from pipeline.verifier.stance import StanceModel

NOTE_CHARS = 280
MAX_URLS = 2
BEARING = 0.5  # the stance model's refutes probability a quoted sentence must reach
CREDIBLE = (Tier.HIGH, Tier.MEDIUM)
_PRIMARY_RE = re.compile(
    r"(?:^|\.)(?:gov|gob|gouv|gv|bund|admin|gc|int|edu|ac|europa|who|un|nasa)(?:\.[a-z]{2,3})*$"
)
_NUMBER_RE = re.compile(r"(?<![^\W\d_])\d(?:[\d.,]*\d)?(?![^\W\d_])")  # not 5G, not B52
_FACT_CHECK, _PRIMARY, _PUBLISHER = 0, 1, 2
SOURCE_KINDS = ("fact-check", "primary", "publisher")

CONFLICT = N_("The post says {claimed}, but {source} reports {actual}: “{quote}”")
CONFLICT_SHORT = N_("The post says {claimed}, but {source} reports {actual}.")
FACT_CHECKED = N_("{source} checked this claim and rated it {verdict}: “{headline}”")
CONTRARY = N_("Contrary to this post, {source} reports: “{quote}”")


class Decision(StrEnum):
    """What a check calls for."""

    WRITE = "write"
    NOT_NEEDED = "no note needed"
    NOT_ENOUGH = "not enough evidence"


@dataclass(frozen=True)
class Source:
    """A reference a note may cite, ranked: fact-check, primary source, publisher."""

    url: str
    name: str  # the publisher's name, or its domain
    kind: int  # _FACT_CHECK, _PRIMARY or _PUBLISHER
    tier: Tier
    document_id: str


@dataclass(frozen=True)
class NoteDraft:
    """A note ready to score and submit."""

    text: str
    urls: tuple[str, ...]  # the best source first
    claim: str
    label: Label  # the claim's verdict: false or misleading
    language: str  # the catalogue the note is written in
    quote: str  # the source's sentence the correction rests on ("" when none)
    source_kind: str  # SOURCE_KINDS of the first URL
    way: str  # "conflict", "fact-check" or "quote": which correction it gives
    is_media_note: bool  # the claim is in the post's image, not its text


@dataclass(frozen=True)
class NotePlan:
    """The decision on a check and, when it is to write, the note."""

    decision: Decision
    reason: str
    draft: NoteDraft | None = None


def plan_note(
    check: Check,
    *,
    language: str | None = None,
    stance: StanceModel | None = None,
    min_sources: int = 1,
) -> NotePlan:
    """Return whether the check calls for a note, and the note when it does."""
    label = check.verdict.label
    if label in (Label.ACCURATE, Label.PARTLY_ACCURATE):
        return NotePlan(Decision.NOT_NEEDED, f"the post is {label.value}")
    if label not in (Label.FALSE, Label.MISLEADING):
        return NotePlan(Decision.NOT_ENOUGH, f"the post is {label.value}")
    code = _note_language(check, language)
    if code is None:
        return NotePlan(Decision.NOT_ENOUGH, "no catalogue for the post's language")
    t = translator(code)
    reasons = []
    for item in check.correction.items:
        if item.label not in (Label.FALSE, Label.MISLEADING):
            continue
        claim = _claim_of(check, item)
        if checkworthiness(claim.text) <= 0.2:
            reasons.append("the claim reads as an opinion, a question or a joke")
            continue
        sources = rank_sources(check, item, language=t.language)
        if len(sources) < max(min_sources, 1):
            reasons.append("too few credible retrieved sources")
            continue
        draft = _draft(check, claim, item, sources, t, stance)
        if draft is not None:
            return NotePlan(Decision.WRITE, f"a {draft.way} correction", draft)
        reasons.append("no specific correction from the sources")
    return NotePlan(Decision.NOT_ENOUGH, "; ".join(dict.fromkeys(reasons)) or "no shown claim")


def _note_language(check: Check, language: str | None) -> str | None:
    """Return the note's catalogue: the post's language (X's `lang`, else the one identified),
    or, where no language was determined at all, the correction's; None where the post is in a
    language factbot has no catalogue for (a note in another language is no note)."""
    have = set(available())
    codes = [
        catalogue_code(given)
        for given in (language, check.post.language, *(c.language for c in check.claims))
    ]
    for code in codes:
        if code in have:
            return code
    if all(code == UNDETERMINED for code in codes):
        code = catalogue_code(check.correction.language)
        return code if code in have else None
    return None


def _claim_of(check: Check, item: CorrectionItem) -> Claim:
    for claim in check.claims:
        if claim.position + 1 == item.claim_number:
            return claim
    return Claim(id="", post_id=check.post.id, position=item.claim_number - 1, text=item.claim)


def _kind(document: Document, reviewed: set[str]) -> int:
    if document.claim_review is not None or document.id in reviewed:
        return _FACT_CHECK
    return _PRIMARY if _PRIMARY_RE.search(document.domain.split("/", 1)[0]) else _PUBLISHER


def rank_sources(check: Check, item: CorrectionItem, *, language: str) -> list[Source]:
    """Return the credible references an item cites, the best first; a published fact-check
    is left out when it is in another language than the note or rates other figures."""
    refs: dict[int, Reference] = {r.number: r for r in check.correction.references}
    claim = _claim_of(check, item)
    kept = {fc.id for fc in _reviews(check, claim) if catalogue_code(fc.language) == language}
    reviewed = {m.match.fact_check.id for m in check.fact_checks if m.match.accepted}
    best: dict[str, Evidence] = {}
    for ev in check.evidence:
        known = best.get(ev.document.id)
        if known is None or ev.tier.rank < known.tier.rank:
            best[ev.document.id] = ev
    found = []
    for position, number in enumerate(item.cited):
        ref = refs.get(number)
        cited = best.get(ref.document_id) if ref is not None else None
        if ref is None or cited is None or cited.tier not in CREDIBLE:
            continue
        doc = cited.document
        if doc.id in reviewed and doc.id not in kept:
            continue  # a matched review in another language, or of other figures
        name = doc.publisher or doc.domain
        found.append(
            (
                _kind(doc, reviewed),
                ev.tier.rank,
                position,
                Source(ref.url, name, _kind(doc, reviewed), ev.tier, doc.id),
            )
        )
    found.sort(key=lambda f: f[:3])
    return list({f[3].url: f[3] for f in found}.values())


def _content(text: str) -> set[str]:
    """Return the content words of a text, crudely stemmed (their first five letters)."""
    return {w.lower()[:5] for w in words(text) if len(w) > 2 and w.lower() not in ALL_STOPWORDS}


def numbers_in(text: str) -> set[str]:
    """Return the numbers of a text, their group and decimal separators dropped (9,500 and
    9.500 are both 9500)."""
    return {re.sub(r"[.,\s]", "", n) for n in _NUMBER_RE.findall(text)}


def bears_on(claim: str, sentence: str, stance: StanceModel | None) -> bool:
    """Return whether a source sentence bears on the claim and holds the contradicting fact.

    It shares two content words with the claim (or all of a shorter claim's) and one of the
    names it gives (capitalised words after the first); where the claim states a number, the
    sentence states one the claim does not; with a stance model, the sentence refutes the
    claim at `BEARING` or more.
    """
    wanted, got = _content(claim), _content(sentence)
    if len(wanted & got) < min(2, len(wanted)) or not wanted:
        return False
    names = _content(" ".join(w for w in words(claim)[1:] if w[:1].isupper()))
    if names and not names & got:
        return False  # a claim about the Eiffel Tower is not answered by a sentence on Everest
    claimed = numbers_in(claim)
    if claimed and not numbers_in(sentence) - claimed:
        return False
    if stance is None:
        return True
    return float(stance.probabilities([(claim, sentence)])[0][1]) >= BEARING


_ARTICLES = frozenset({"the", "a", "an"})


def _before(text: str, value: str) -> str | None:
    """Return the word right before value in text (articles skipped), lower-cased, or None."""
    at = text.lower().find(value.lower())
    if at < 0:
        return None
    words = [w for w in re.findall(r"\w+", text[:at].lower()) if w not in _ARTICLES]
    return words[-1] if words else None


def same_role(claim: str, claimed: str, sentence: str, actual: str) -> bool:
    """Return whether a name in the source stands where the claim's name stands.

    "a gift from the United Kingdom" is not corrected by "a gift from France to the United
    States" with "the United States": the word before each name ("from", "to") differs. A figure
    or a date (any digit) is not checked this way: their wording varies ("in 1975", "on 20 July
    1969"); nor a name whose claim gives no word before it.
    """
    if any(ch.isdigit() for ch in claimed + actual):
        return True
    mine = _before(claim, claimed)
    if mine is None:
        return True
    at = sentence.lower().find(actual.lower())
    words = [w for w in re.findall(r"\w+", sentence[:at].lower()) if w not in _ARTICLES]
    return mine in words[-3:]


def _sentences(check: Check, claim: Claim, document_id: str) -> list[str]:
    out: list[str] = []
    for ev in check.evidence:
        if ev.document.id == document_id and ev.claim_id in (claim.id, ""):
            out += [s.strip() for s in split_sentences(ev.passage.text)]
    return list(dict.fromkeys(s for s in out if s))


def _clean(text: str) -> str:
    return defuse_mentions(" ".join(scrub_links(text).split()))


def _fits(body: str, urls: Sequence[str]) -> str | None:
    text = " ".join([body, *urls])
    return text if 1 <= x_weighted(text) <= NOTE_CHARS else None


def _urls(first: Source, sources: Sequence[Source]) -> tuple[str, ...]:
    """Return the note's URLs: the best source first, the quoted one after it."""
    return tuple(dict.fromkeys([sources[0].url, first.url]))[:MAX_URLS]


def _draft(
    check: Check,
    claim: Claim,
    item: CorrectionItem,
    sources: Sequence[Source],
    t: Translator,
    stance: StanceModel | None,
) -> NoteDraft | None:
    media = bool(check.post.image_refs) and claim.text.strip() not in check.post.text
    for way, body, used, quote in _corrections(check, claim, sources, t, stance):
        text = _fits(_clean(body), _urls(used, sources))
        if text is None:
            continue
        return NoteDraft(
            text=text,
            urls=_urls(used, sources),
            claim=claim.text,
            label=item.label,
            language=t.language,
            quote=quote,
            source_kind=SOURCE_KINDS[sources[0].kind],
            way=way,
            is_media_note=media,
        )
    return None


def _corrections(
    check: Check,
    claim: Claim,
    sources: Sequence[Source],
    t: Translator,
    stance: StanceModel | None,
) -> Iterable[tuple[str, str, Source, str]]:
    """Yield (way, body, the source it names, the quote) candidates, the most specific first."""
    by_doc = {s.document_id: s for s in sources}
    evidence = {ev.id: ev for ev in check.evidence}
    english = t.language == "en"
    for graph in check.graphs:
        for conflict in graph.conflicts if graph.claim_id == claim.id and english else ():
            ev = evidence.get(conflict.evidence_id)
            source = by_doc.get(ev.document.id) if ev is not None else None
            if source is None:
                continue
            values = {"claimed": conflict.claim_value, "actual": conflict.evidence_value}
            said = [
                sentence
                for sentence in _sentences(check, claim, source.document_id)
                if conflict.evidence_value in sentence
                and same_role(claim.text, conflict.claim_value, sentence, conflict.evidence_value)
            ]
            for sentence in said:
                if bears_on(claim.text, sentence, stance):
                    body = t.gettext(CONFLICT, source=source.name, quote=sentence, **values)
                    yield "conflict", body, source, sentence
            if said:
                short = t.gettext(CONFLICT_SHORT, source=source.name, **values)
                yield "conflict", short, source, ""
    for review in _reviews(check, claim):
        source = next((s for s in sources if s.url == review.url), None)
        if source is None or catalogue_code(review.language) != t.language:
            continue
        if review.headline and review.headline.strip() != review.claim_reviewed.strip():
            label = review.label.value if review.label else Label.FALSE.value
            body = t.gettext(
                FACT_CHECKED, source=source.name, verdict=t.verdict(label), headline=review.headline
            )
            yield "fact-check", body, source, review.headline
    yield from _reviewed_pages(check, claim, sources, t)
    if not english:
        return
    for sentence, source in _refuting(check, claim, by_doc, stance):
        if bears_on(claim.text, sentence, stance):
            yield "quote", t.gettext(CONTRARY, source=source.name, quote=sentence), source, sentence


def _reviewed_pages(
    check: Check, claim: Claim, sources: Sequence[Source], t: Translator
) -> Iterable[tuple[str, str, Source, str]]:
    """Yield fact-check corrections from cited pages that carry their own ClaimReview (an
    ingested fact-check article): rated false or misleading, about the post's figures, their
    title in the note's language (it shares two content words with the claim)."""
    said = numbers_in(claim.text) | numbers_in(check.post.text)
    documents = {ev.document.id: ev.document for ev in check.evidence}
    for source in sources:
        doc = documents.get(source.document_id)
        review = doc.claim_review if doc is not None else None
        if doc is None or review is None or review.label not in (Label.FALSE, Label.MISLEADING):
            continue
        title = doc.title.strip()
        if title == review.claim_reviewed.strip() or not numbers_in(review.claim_reviewed) <= said:
            continue
        if len(_content(title) & _content(claim.text)) < 2:
            continue
        verdict = t.verdict(review.label.value)
        body = t.gettext(FACT_CHECKED, source=source.name, verdict=verdict, headline=title)
        yield "fact-check", body, source, title


def _reviews(check: Check, claim: Claim) -> list[FactCheck]:
    """Return the rated fact-checks accepted for the claim that are about the same figures: a
    review of "500 metres" is no correction of a post that says 330 (the post is right)."""
    said = numbers_in(claim.text) | numbers_in(check.post.text)
    return [
        m.match.fact_check
        for m in check.fact_checks
        if m.match.accepted
        and m.claim_id == claim.id
        and m.match.fact_check.label is not None
        and numbers_in(m.match.fact_check.claim_reviewed) <= said
    ]


def _refuting(
    check: Check, claim: Claim, by_doc: dict[str, Source], stance: StanceModel | None
) -> list[tuple[str, Source]]:
    """Return candidate refuting sentences for the claim: those the check quoted (strongest
    first), then every sentence of the cited sources' passages (with a stance model, the most
    refuting first)."""
    evidence = {ev.id: ev for ev in check.evidence if ev.claim_id == claim.id}
    found: list[tuple[float, str, Source]] = []
    for quote in check.quotes:
        ev = evidence.get(quote.evidence_id)
        source = by_doc.get(ev.document.id) if ev is not None else None
        if source is None or quote.stance is not Stance.REFUTES:
            continue
        for sentence in split_sentences(quote.text) or [quote.text]:
            found.append((-(quote.strength or 0.0), sentence.strip(), source))
    found.sort(key=lambda f: f[0])
    rest = [
        (sentence, source)
        for source in by_doc.values()
        for sentence in _sentences(check, claim, source.document_id)
    ]
    if stance is not None and rest:
        probs = stance.probabilities([(claim.text, sentence) for sentence, _ in rest])
        order = sorted(range(len(rest)), key=lambda i: -float(probs[i][1]))
        rest = [rest[i] for i in order]
    pairs = [(s, src) for _, s, src in found] + rest
    return list({(s, src.url): (s, src) for s, src in pairs}.values())
