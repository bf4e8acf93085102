"""A Community Note from a check, and the local scores of what X's admission measures.

Which checks get a note: the post's verdict is false or misleading, and a shown claim with
that verdict cites at least `min_sources` references whose evidence comes from a credible
publisher (tier high or medium). The note is that claim's explanation without factbot's
internal match scores (and the verified quote when it fits), then the URLs of those
references — only URLs the pipeline retrieved — within 280 characters as X counts them (a URL
counts 23).

Mapping factbot's verdict and reasons to the API's fields (`misleading_tags`):

    false                       factual_error
    misleading                  missing_important_context
    reasons saying "outdated", "no longer", "out of date"    + outdated_information
    reasons saying "satire", "parody"                        + misinterpreted_satire
    a post with media, reasons saying "image", "photo", "video", "edited", "doctored",
      "manipulated", "altered"                               + manipulated_media
    reasons saying "disputed", "unproven", "no evidence"     + disputed_claim_as_fact

Local scores (high is better), what the open-source admission evaluator measures:

- UrlValidity: every URL of the note answers 200, fetched through the SSRF-safe fetcher
  (`pipeline.fetch.fetcher`) — `high`, else `low` (with each URL's status or error).
- ClaimOpinion, a documented heuristic: the note *addresses the claim* when it shares at least
  two content words (4+ letters, not stop words) with the claim, or a third of the claim's; it
  *expresses opinion* through each marker found: first-person stances ("I think", "we
  believe"), judgement adverbs ("obviously", "clearly", "sadly"), loaded words ("lie",
  "propaganda", "ridiculous"), exhortations ("should", "must"), "!" and words in capitals
  that the claim does not have (shouting; the claim's own acronyms are not).
  high: addresses it with no marker; low: two markers or more, or one without addressing it;
  medium otherwise.
- HarassmentAbuse: a word list of insults and threats, an @handle aimed at someone, and
  second-person attacks ("you are a", "you people") — any hit is `low`, none `high`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pipeline.errors import FetchError, UnsafeURLError
from pipeline.fetch.fetcher import Fetcher
from pipeline.records.domain import Check, CorrectionItem, Label, Reference, Tier
from pipeline.reply.links import scrub_links
from pipeline.reply.thread import defuse_mentions, x_weighted

NOTE_CHARS = 280
MISLEADING = "misinformed_or_potentially_misleading"
CREDIBLE = (Tier.HIGH, Tier.MEDIUM)
_WORD_RE = re.compile(r"[a-z][a-z0-9']{3,}")
_STOP = frozenset(
    "this that with from have were they them their there which what when where about would "
    "could should into than then also been being some more most such only over very post "
    "claim claims says said does true false misleading sources source evidence".split()
)
_OPINION = (
    r"\bi (?:think|believe|feel|guess|suspect)\b",
    r"\bwe (?:think|believe|feel)\b",
    r"\bin my (?:view|opinion)\b",
    r"\bobviously\b",
    r"\bclearly\b",
    r"\bsadly\b",
    r"\bunfortunately\b",
    r"\bhopefully\b",
    r"\bof course\b",
    r"\bridiculous\b",
    r"\babsurd\b",
    r"\bshameful\b",
    r"\bdisgusting\b",
    r"\bpropaganda\b",
    r"\bfake news\b",
    r"\blies\b",
    r"\blie\b",
    r"\bliars?\b",
    r"\bshould\b",
    r"\bmust\b",
    r"\bterrible\b",
    r"\bawful\b",
    r"\bamazing\b",
    r"\bprobably\b",
    r"\bseems?\b",
    r"!",
)
_OPINION_RE = [re.compile(p, re.IGNORECASE) for p in _OPINION]
_CAPS_RE = re.compile(r"\b[A-Z]{4,}\b")
_ABUSE = (
    r"\bidiots?\b",
    r"\bmorons?\b",
    r"\bstupid\b",
    r"\bdumb\b",
    r"\bclowns?\b",
    r"\bscum\b",
    r"\btrolls?\b",
    r"\blosers?\b",
    r"\bpathetic\b",
    r"\bshut up\b",
    r"\bkill\b",
    r"\bdie\b",
    r"\bhate\b",
    r"\bdisgrace\b",
    r"\bimbeciles?\b",
    r"\bgarbage\b",
    r"\byou are an?\b",
    r"\byou're an?\b",
    r"\byou people\b",
    r"(?<![\w@])@\w+",
)
_ABUSE_RE = [re.compile(p, re.IGNORECASE) for p in _ABUSE]
_TAG_WORDS = {
    "outdated_information": ("outdated", "no longer", "out of date", "old footage"),
    "misinterpreted_satire": ("satire", "satirical", "parody"),
    "disputed_claim_as_fact": ("disputed", "unproven", "no evidence"),
}
_SCORE_RE = re.compile(r"\s*\(match \d+(?:\.\d+)?\)")  # the review matcher's own score
_MEDIA_WORDS = (
    "image",
    "photo",
    "picture",
    "video",
    "edited",
    "doctored",
    "manipulated",
    "altered",
)


@dataclass(frozen=True)
class Draft:
    """A note ready to score: its text, the API's fields, the claim it answers."""

    text: str
    urls: tuple[str, ...]
    claim: str
    classification: str
    misleading_tags: tuple[str, ...]
    trustworthy_sources: bool


@dataclass(frozen=True)
class Scores:
    """The local admission scores of a note, with what each was decided on."""

    url_validity: str
    claim_opinion: str
    harassment_abuse: str
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def passes(self) -> bool:
        """Return whether the note may be submitted: valid URLs, no abuse, not low on opinion."""
        return (
            self.url_validity == "high"
            and self.harassment_abuse == "high"
            and self.claim_opinion != "low"
        )


def _credible_refs(check: Check, item: CorrectionItem) -> list[Reference]:
    by_number = {r.number: r for r in check.correction.references}
    tiers: dict[str, Tier] = {}
    for ev in check.evidence:
        best = tiers.get(ev.document.id)
        if best is None or ev.tier.rank < best.rank:
            tiers[ev.document.id] = ev.tier
    refs = [by_number[n] for n in item.cited if n in by_number]
    return [r for r in refs if tiers.get(r.document_id) in CREDIBLE]


def tags_for(label: Label, reasons: str, *, has_media: bool) -> tuple[str, ...]:
    """Return the API's misleading tags for a verdict and its reasons (see the table above)."""
    lowered = reasons.lower()
    tags = ["factual_error" if label is Label.FALSE else "missing_important_context"]
    for tag, words in _TAG_WORDS.items():
        if any(w in lowered for w in words):
            tags.append(tag)
    if has_media and any(w in lowered for w in _MEDIA_WORDS):
        tags.append("manipulated_media")
    return tuple(tags)


def _fit(body: str, urls: Sequence[str]) -> str:
    tail = " " + " ".join(urls)
    if x_weighted(body + tail) <= NOTE_CHARS:
        return body + tail
    words = body.split()
    while words and x_weighted(" ".join(words) + "…" + tail) > NOTE_CHARS:
        words.pop()
    return " ".join(words) + "…" + tail


def write_note(check: Check, *, min_sources: int = 1, max_urls: int = 2) -> Draft | None:
    """Return the note for a false or misleading check with credible evidence, or None."""
    if check.verdict.label not in (Label.FALSE, Label.MISLEADING):
        return None
    for item in check.correction.items:
        if item.label not in (Label.FALSE, Label.MISLEADING):
            continue
        refs = _credible_refs(check, item)
        if len(refs) < min_sources:
            continue
        urls = tuple(dict.fromkeys(r.url for r in refs))[:max_urls]
        explained = _SCORE_RE.sub("", item.explanation)  # a public note shows no internal score
        body = defuse_mentions(" ".join(scrub_links(explained).split()))
        if item.quote is not None:
            quoted = " ".join(scrub_links(item.quote.text).split())
            with_quote = f'{body.rstrip(".")}. The source says: "{quoted}"'
            if x_weighted(with_quote + " " + " ".join(urls)) <= NOTE_CHARS:
                body = with_quote
        reasons = " ".join(
            [item.explanation]
            + [v.rationale for v in check.verdict.claims if v.label is item.label]
        )
        return Draft(
            text=_fit(body, urls),
            urls=urls,
            claim=item.claim,
            classification=MISLEADING,
            misleading_tags=tags_for(item.label, reasons, has_media=bool(check.post.image_refs)),
            trustworthy_sources=True,
        )
    return None


def _content_words(text: str) -> set[str]:
    return {w for w in _WORD_RE.findall(scrub_links(text).lower()) if w not in _STOP}


def claim_opinion(note: str, claim: str) -> tuple[str, dict[str, Any]]:
    """Return the ClaimOpinion level of a note (see the module docstring) and its evidence."""
    text = re.sub(r"https?://\S+", "", note)
    claim_words, note_words = _content_words(claim), _content_words(text)
    shared = claim_words & note_words
    addresses = len(shared) >= 2 or (bool(claim_words) and len(shared) * 3 >= len(claim_words))
    markers = [m.group(0) for rx in _OPINION_RE for m in rx.finditer(text)]
    # shouting: a word in capitals the claim does not have (acronyms such as COVID it has)
    markers += [w for w in _CAPS_RE.findall(text) if w not in claim]
    if addresses and not markers:
        level = "high"
    elif len(markers) >= 2 or (markers and not addresses):
        level = "low"
    else:
        level = "medium"
    return level, {"shared_words": sorted(shared), "opinion_markers": markers}


def harassment_abuse(note: str) -> tuple[str, dict[str, Any]]:
    """Return the HarassmentAbuse level of a note: low on any abusive marker, else high."""
    text = re.sub(r"https?://\S+", "", note)
    hits = [m.group(0) for rx in _ABUSE_RE for m in rx.finditer(text)]
    return ("low" if hits else "high"), {"abuse_markers": hits}


async def url_validity(urls: Sequence[str], fetcher: Fetcher) -> tuple[str, dict[str, Any]]:
    """Return `high` when every URL answers 200 through the fetcher, else `low`, per URL."""
    statuses: dict[str, Any] = {}
    for url in urls:
        try:
            page = await fetcher.fetch(url)
        except (FetchError, UnsafeURLError) as exc:
            statuses[url] = str(exc)[:200]
            continue
        statuses[url] = page.status
    ok = bool(urls) and all(status == 200 for status in statuses.values())
    return ("high" if ok else "low"), {"urls": statuses}


async def score(draft: Draft, fetcher: Fetcher) -> Scores:
    """Return the local admission scores of a draft."""
    urls, url_detail = await url_validity(draft.urls, fetcher)
    opinion, opinion_detail = claim_opinion(draft.text, draft.claim)
    abuse, abuse_detail = harassment_abuse(draft.text)
    length = x_weighted(draft.text)
    if not 1 <= length <= NOTE_CHARS:
        urls = "low"  # X refuses a note outside 1-280 characters: never submit it
    return Scores(
        urls, opinion, abuse, {**url_detail, **opinion_detail, **abuse_detail, "chars": length}
    )
