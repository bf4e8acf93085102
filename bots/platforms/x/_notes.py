"""A Community Note from a check, and the local scores of what X's admission measures.

Which checks get a note, and what it says, is `pipeline.communitynotes.drafting` (write / no
note needed / not enough evidence, leaning to no note; the specific correction first, in the
post's language, the best retrieved source first). This module maps the draft onto the API's
fields and scores it as X's admission evaluators would.

Mapping factbot's verdict and reasons to the API's fields (`misleading_tags`):

    false                       factual_error
    misleading                  missing_important_context
    reasons saying "outdated", "no longer", "out of date"    + outdated_information
    reasons saying "satire", "parody"                        + misinterpreted_satire
    a post with media, reasons saying "image", "photo", "video", "edited", "doctored",
      "manipulated", "altered"                               + manipulated_media
    reasons saying "disputed", "unproven", "no evidence"     + disputed_claim_as_fact

`is_media_note` is set when the claim was read from the post's image, not its text.

Local scores (high is better), what X's admission evaluators measure:

- UrlValidity: every URL of the note answers 200, fetched through the SSRF-safe fetcher
  (`pipeline.fetch.fetcher`) — `high`, else `low` (with each URL's status or error).
- ClaimOpinion: factbot's measured score of the (post, note) pair
  (`pipeline.communitynotes.claimopinion`: the stance model and the claim detector), in X's
  High / Medium / Low buckets; the number is kept beside the API's `claim_opinion_score`.
- HarassmentAbuse: a word list of insults and threats, an @handle aimed at someone, and
  second-person attacks ("you are a", "you people") — any hit is `low`, none `high`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pipeline.communitynotes.claimopinion import ClaimOpinionScorer, OpinionScore
from pipeline.communitynotes.drafting import NotePlan, plan_note
from pipeline.errors import FetchError, UnsafeURLError
from pipeline.fetch.fetcher import Fetcher
from pipeline.records.domain import Check, Label
from pipeline.reply.thread import x_weighted
from pipeline.verifier.stance import StanceModel

NOTE_CHARS = 280
MISLEADING = "misinformed_or_potentially_misleading"
# Insults and threats per language: English words are read only in English notes (the German
# article "die" is not a threat). A threat is the wish or intent aimed at someone ("go die",
# "I will kill"), never the word alone: "drinking bleach can kill" is the correction itself.
# An aimed @handle is abuse in every language.
_ABUSE = {
    "en": r"idiots?|morons?|stupid|dumb|clowns?|scum|trolls?|losers?|pathetic|shut up|"
    r"kill (?:yourself|urself)|kys|(?:i|we)(?:'ll| will| wanna| want to| are going to) kill|"
    r"(?:go|should|hope (?:you|u)|just|please) die|die in a (?:fire|hole|ditch)|"
    r"hate|disgrace|imbeciles?|garbage|you are an?|you're an?|you people",
    "es": r"idiotas?|imbéciles?|estúpid[oa]s?|payas[oa]s?|basura|cállate|muérete|odio",
    "pt": r"idiotas?|imbecis|imbecil|estúpid[oa]s?|palhaç[oa]s?|lixo|cala a boca|morra|ódio",
    "fr": r"idiots?|imbéciles?|crétins?|stupides?|clowns?|ordures?|ta gueule|crève|haine",
    "de": r"idioten?|trottel|dumm(?:kopf|e|er)?|clowns?|abschaum|halt die klappe|stirb|hass",
}
_ABUSE_RE = {k: re.compile(rf"\b(?:{v})\b", re.IGNORECASE) for k, v in _ABUSE.items()}
_HANDLE_RE = re.compile(r"(?<![\w@])@\w+")
_TAG_WORDS = {
    "outdated_information": ("outdated", "no longer", "out of date", "old footage"),
    "misinterpreted_satire": ("satire", "satirical", "parody"),
    "disputed_claim_as_fact": ("disputed", "unproven", "no evidence"),
}
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
    is_media_note: bool = False
    quote: str = ""  # the source's sentence the correction rests on
    language: str = "en"
    fact_checked: bool = False  # the first source is a published fact-check
    post: str = ""  # the post's text (ClaimOpinion reads the pair)


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


def write_note(
    check: Check,
    *,
    language: str | None = None,
    stance: StanceModel | None = None,
    min_sources: int = 1,
) -> tuple[NotePlan, Draft | None]:
    """Return the decision on a check and, when it is to write, the note with its API fields."""
    plan = plan_note(check, language=language, stance=stance, min_sources=min_sources)
    note = plan.draft
    if note is None:
        return plan, None
    reasons = " ".join(
        [v.rationale for v in check.verdict.claims if v.label is note.label]
        + [item.explanation for item in check.correction.items if item.claim == note.claim]
    )
    draft = Draft(
        text=note.text,
        urls=note.urls,
        claim=note.claim,
        classification=MISLEADING,
        misleading_tags=tags_for(note.label, reasons, has_media=bool(check.post.image_refs)),
        trustworthy_sources=True,
        is_media_note=note.is_media_note,
        quote=note.quote,
        language=note.language,
        fact_checked=note.source_kind == "fact-check",
        post=check.post.text,
    )
    return plan, draft


def claim_opinion(draft: Draft, scorer: ClaimOpinionScorer) -> OpinionScore:
    """Return factbot's ClaimOpinion reading of a draft on its post's claim."""
    return scorer.score(
        post=draft.post or draft.claim,
        claim=draft.claim,
        note=draft.text,
        quote=draft.quote,
        language=draft.language,
        fact_checked=draft.fact_checked,
    )


def harassment_abuse(note: str, language: str = "en") -> tuple[str, dict[str, Any]]:
    """Return the HarassmentAbuse level of a note in a language: low on any abusive marker of
    that language (or an aimed @handle), else high."""
    text = re.sub(r"https?://\S+", "", note)
    words = _ABUSE_RE.get(language)
    hits = [m.group(0) for m in words.finditer(text)] if words is not None else []
    hits += [m.group(0) for m in _HANDLE_RE.finditer(text)]
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


async def score(draft: Draft, fetcher: Fetcher, scorer: ClaimOpinionScorer) -> Scores:
    """Return the local admission scores of a draft."""
    urls, url_detail = await url_validity(draft.urls, fetcher)
    opinion = claim_opinion(draft, scorer)
    abuse, abuse_detail = harassment_abuse(draft.text, draft.language)
    length = x_weighted(draft.text)
    if not 1 <= length <= NOTE_CHARS:
        urls = "low"  # X refuses a note outside 1-280 characters: never submit it
    detail = {**url_detail, **opinion.detail(), **abuse_detail, "chars": length}
    return Scores(urls, opinion.bucket, abuse, detail)
