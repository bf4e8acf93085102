"""Domain records: frozen dataclasses with ids that refer to each other by id.

They are changed with `dataclasses.replace`; pydantic is used only at the edges (settings,
payloads). Every record here round-trips through `storage`.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal, get_args

from pipeline.records.factchecks import ClaimMatch
from pipeline.records.image import ImageReport
from pipeline.records.labels import Label as Label  # re-exported: every record module names it here
from pipeline.records.search_status import SearchStatus
from pipeline.util.i18n import N_, Translator, translator


def new_id() -> str:
    """Return a fresh random id (32 hex characters)."""
    return uuid.uuid4().hex


def content_hash(text: str) -> str:
    """Return the sha256 of text, used to make ingest idempotent."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def document_id_for(url: str) -> str:
    """Return the stable id of the document at url."""
    return hashlib.sha256(url.encode("utf-8")).hexdigest()[:32]


def utcnow() -> datetime:
    """Return the current time, timezone-aware in UTC."""
    return datetime.now(UTC)


class Tier(StrEnum):
    """Credibility priority of a publisher (MUSE's three tiers plus the rest)."""

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"
    UNRATED = "unrated"
    UNUSABLE = "unusable"  # rated, but mixed/low factuality or strong bias: never cited
    BLOCKED = "blocked"  # on a block list: never cited

    @property
    def rank(self) -> int:
        """Sort key: lower is more credible."""
        return _TIER_RANK[self]

    @property
    def citable(self) -> bool:
        """Whether evidence from this tier may be cited (UNRATED depends on a setting)."""
        return self not in (Tier.UNUSABLE, Tier.BLOCKED)


_TIER_RANK = {
    Tier.HIGH: 0,
    Tier.MEDIUM: 1,
    Tier.LOW: 2,
    Tier.UNRATED: 3,
    Tier.UNUSABLE: 4,
    Tier.BLOCKED: 5,
}


class Stance(StrEnum):
    """How a piece of evidence bears on a claim."""

    SUPPORTS = "supports"
    REFUTES = "refutes"
    CONTEXT = "context"
    UNKNOWN = "unknown"


class Relation(StrEnum):
    """How a narrative (a cluster of evidence) bears on a claim, as the model judge assesses it."""

    SUPPORTS = "supports"
    CONFLICTS = "conflicts"
    IRRELEVANT = "irrelevant"


class Basis(StrEnum):
    """How a claim's label was decided (reported by the evaluation, logged with the check)."""

    REVIEW = "fact-check review"  # a rated fact-check's ClaimReview matched the claim
    MODEL = "model"  # the model judge's reading, through the tiered rule in code
    NO_EVIDENCE = "no evidence"  # nothing credible about the claim: unverifiable
    NO_MATCH = "no matching fact-check"  # the no-model judge found evidence but no review
    FALLBACK = "fallback"  # the model judge failed; the no-model judge decided
    RULES = "verdict rules"  # code overruled the judge on explicit evidence
    VERIFIER = "stance model"  # factbot's trained verifier, decided by thresholds in code
    # left open by the verifier: credible evidence about the claim points both ways
    CONTESTED = "evidence disagrees"
    # left open by the verifier: the evidence only reports or repeats the claim
    REPORTS = "only reports"
    # the claim's language is one the stance model cannot read, and nothing else decided it
    LANGUAGE = "language not read"
    # a matched published fact-check and newer credible evidence disagree: left open, both said
    CONFLICT = "fact-check and evidence disagree"
    UNKNOWN = "unknown"  # not recorded (a check loaded from storage)


FACETS = ("who", "what", "when", "where", "why", "how")

# What a request asks to have checked, stored with its post (posts.kind):
# - post: a post read from a platform (a mention's target, a monitored post);
# - text: text given directly (the API, the dashboard, the CLI), with or without images;
# - image: images given directly with no text;
# - page: the page at `Post.url`; the post's text is only the URL until the check fetches it
#   (`pipeline.inputs.posts.with_requested_page`).
PostKind = Literal["post", "text", "image", "page"]
POST_KINDS: tuple[PostKind, ...] = get_args(PostKind)
MAX_LEADS = 5  # `Post.leads` a check fetches for one post, whoever suggested them


@dataclass(frozen=True)
class Post:
    """A social-media post (or a text or page given directly) to be checked."""

    id: str
    platform: str
    platform_id: str
    text: str
    url: str | None = None
    author: str | None = None
    created_at: datetime | None = None
    links: tuple[str, ...] = ()
    image_refs: tuple[str, ...] = ()
    # The platform's own language field until a check identifies it (pipeline/inputs/language.py):
    # then ISO 639-1, zh-Hans/zh-Hant or und.
    language: str | None = None
    kind: PostKind = "post"
    # Pages a third party suggested as evidence (the people who asked X for a Community Note, a
    # moderator, whoever calls the API or the CLI): fetched beside the search results and read
    # like them, never the post's own links (pipeline/inputs/leads.py says what is kept).
    leads: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in POST_KINDS:
            raise ValueError(
                f"unknown post kind {self.kind!r}; the kinds are {', '.join(POST_KINDS)}"
            )
        if len(self.leads) > MAX_LEADS:
            raise ValueError(
                f"a post carries at most {MAX_LEADS} leads, not {len(self.leads)} "
                "(pipeline.inputs.leads.with_leads keeps the first)"
            )


@dataclass(frozen=True)
class Claim:
    """One check-worthy statement drawn from a post."""

    id: str
    post_id: str
    position: int
    text: str
    # ISO 639-1, zh-Hans/zh-Hant or und (pipeline/inputs/language.py); None: not identified
    language: str | None = None


@dataclass(frozen=True)
class ClaimReview:
    """A schema.org ClaimReview found on a fact-check page."""

    claim_reviewed: str
    rating: str  # the reviewer's own words, e.g. "Pants on Fire"
    label: Label | None  # the rating mapped to our labels, None when it cannot be mapped
    reviewer: str | None = None
    url: str | None = None
    date_published: datetime | None = None


@dataclass(frozen=True)
class Document:
    """A retrieved or ingested page."""

    id: str
    url: str
    domain: str  # canonical registrable domain (or path-scoped entry) used for credibility
    title: str
    text: str
    published_at: datetime | None = None
    fetched_at: datetime | None = None
    publisher: str | None = None
    claim_review: ClaimReview | None = None


@dataclass(frozen=True)
class Passage:
    """A chunk of a document's text, the unit of retrieval."""

    id: str
    document_id: str
    position: int
    text: str


@dataclass(frozen=True)
class ImageTrace:
    """What an evidence item says about a post's image: an earlier appearance of it (CRAVE).

    `conflict` is "" when the appearance fits the event the post describes, "date" when it
    predates that event by more than the margin (or its caption dates it earlier), "place"
    when its caption names a place that cannot be the post's; `detail` says it in words.
    """

    image_id: str  # the post's image
    image_url: str  # the earlier copy
    distance: int  # pHash bits apart, never above the match threshold
    published_at: datetime | None
    caption: str = ""
    conflict: str = ""
    detail: str = ""


@dataclass(frozen=True)
class Evidence:
    """A passage judged relevant to a claim, with its credibility."""

    id: str
    claim_id: str
    passage: Passage
    document: Document
    relevance: float
    tier: Tier
    stance: Stance = Stance.UNKNOWN
    image: ImageTrace | None = None  # set on image-provenance evidence only


@dataclass(frozen=True)
class Quote:
    """A verbatim paragraph of an evidence passage that refutes or gives context to a claim."""

    evidence_id: str
    text: str  # must occur verbatim in the evidence passage (checked before use)
    stance: Stance  # REFUTES, CONTEXT or SUPPORTS
    # The stance model's calibrated probability of `stance`, when the verifier chose the quote
    # (the model's extraction stage gives none).
    strength: float | None = None


@dataclass(frozen=True)
class Narrative:
    """A cluster of evidence telling one story about a claim (CRAVE)."""

    id: str
    claim_id: str
    evidence_ids: tuple[str, ...]
    representative_id: str  # the evidence item nearest the cluster's centroid


@dataclass(frozen=True)
class FacetCheck:
    """One 5W1H facet of a claim compared with a narrative."""

    facet: str  # one of FACETS
    status: str  # "consistent", "conflicting" or "missing"
    note: str = ""


@dataclass(frozen=True)
class Assessment:
    """The model judge's reading of one narrative against one claim."""

    claim_id: str
    narrative_id: str
    relation: Relation
    facets: tuple[FacetCheck, ...]
    rationale: str


@dataclass(frozen=True)
class ClaimVerdict:
    """The verdict on one claim, tied to the evidence that decided it."""

    claim_id: str
    label: Label
    rationale: str
    evidence_ids: tuple[str, ...] = ()
    shown: bool = True  # False when the citation check removed the claim from the reply
    # How the label was decided: reported by the evaluation, stored with the claim (m020), so
    # a loaded check equals the saved one; checks stored before m020 load as UNKNOWN.
    basis: Basis = Basis.UNKNOWN


@dataclass(frozen=True)
class Verdict:
    """The overall verdict on a post and the verdict on each claim."""

    label: Label
    claims: tuple[ClaimVerdict, ...]


@dataclass(frozen=True)
class Reference:
    """A numbered reference in a correction; always a retrieved document."""

    number: int
    document_id: str
    url: str
    title: str


@dataclass(frozen=True)
class CorrectionQuote:
    """A verified verbatim excerpt of a cited document, shown under a claim."""

    text: str
    reference: int  # the number of the Reference it comes from
    stance: Stance = Stance.UNKNOWN  # the extraction stage's reading of the quote


def claim_head(t: Translator, number: int, claim: str, verdict: str, strong: str = "") -> str:
    """Return an item's opening, 'Claim 1, "…": false.', the heading and verdict in strong."""
    heading = t.gettext(N_("Claim {number}"), number=number)
    return t.gettext(
        '{heading}, "{claim}": {verdict}.',
        heading=f"{strong}{heading}{strong}",
        claim=claim,
        verdict=f"{strong}{verdict}{strong}",
    )


@dataclass(frozen=True)
class CorrectionItem:
    """One shown claim of a correction: its verdict, why, and the references it cites."""

    claim_number: int  # 1-based position of the claim in the post
    claim: str  # link-scrubbed and shortened claim text
    label: Label
    explanation: str  # without reference markers; renderers place them
    references: tuple[int, ...] = ()  # Reference numbers, in citation order
    quote: CorrectionQuote | None = None
    language: str = "en"  # the reply's catalogue (pipeline.util.i18n): its templates' language

    @property
    def cited(self) -> tuple[int, ...]:
        """Return every reference number the item cites, its quote's included."""
        if self.quote is None or self.quote.reference in self.references:
            return self.references
        return (*self.references, self.quote.reference)

    def explained(self, escape: Callable[[str], str] = str) -> str:
        """Return the explanation followed by the item's reference markers, escape applied."""
        t = translator(self.language)
        marks = [f"[{n}]" for n in self.references]
        if self.label is Label.UNVERIFIABLE and self.references:
            # An unverifiable claim's references are the nearest sources, not proof.
            return t.ngettext(
                "{explanation}; the most relevant source found is {sources}.",
                "{explanation}; the most relevant sources found are {sources}.",
                len(marks),
                explanation=escape(self.explanation.rstrip(".。।")),
                sources=t.join(marks),
            )
        text = escape(self.explanation)
        if marks and not t.space:  # Chinese, Japanese: "…示しています[1][2]。", not "。[1]"
            body = text.rstrip("。.")
            return t.isolate(f"{body}{''.join(marks)}{text[len(body) :]}")
        return t.isolate(f"{text}{t.space}{' '.join(marks)}".rstrip())

    @property
    def text(self) -> str:
        """Return the item as the one plain line the full correction text shows."""
        t = translator(self.language)
        head = claim_head(t, self.claim_number, self.claim, t.verdict(self.label.value))
        line = f"{head}{t.space}{self.explained()}".rstrip()
        if self.quote is not None:
            line += t.space + t.gettext(
                'Source: "{quote}" [{reference}]',
                quote=self.quote.text,
                reference=self.quote.reference,
            )
        return t.isolate(line)


@dataclass(frozen=True)
class Correction:
    """The reply: a headline, one item per shown claim, a note and numbered references.

    It is structured so each platform can render and fit it (`pipeline.reply.render`); `text`
    is the full plain text, never cut. A correction loaded from before items were stored has
    its old text as `headline` and no items.
    """

    label: Label
    headline: str  # "This post is ..."
    items: tuple[CorrectionItem, ...] = ()
    note: str = ""  # about claims the citation check hid, or empty
    references: tuple[Reference, ...] = ()
    # Why factbot could not search at all (no evidence source reachable), or "" when it
    # searched: "found nothing credible" and "could not look" are different answers.
    could_not_search: str = ""
    language: str = "en"  # the catalogue it is written in (pipeline.util.i18n)

    @property
    def text(self) -> str:
        """Return the full plain text: headline, one line per item, then the note."""
        lines = [self.headline, *(item.text for item in self.items)]
        if self.note:
            lines.append(self.note)
        return "\n".join(lines)


@dataclass(frozen=True)
class StageTiming:
    """How long one stage of a check took."""

    stage: str
    seconds: float


@dataclass(frozen=True)
class ModelUsage:
    """Language-model calls, tokens and cost of one stage of one check."""

    stage: str
    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    seconds: float
    failures: int = 0  # calls that ended in an error (timeouts and invalid answers included)
    timeouts: int = 0  # failures because the model did not answer in time
    invalid: int = 0  # failures because the answer was still invalid after the retry
    fallbacks: int = 0  # times the stage fell back to its no-model path


@dataclass(frozen=True)
class GraphConflict:
    """A date, place or number of a claim that a matched node of the evidence contradicts."""

    kind: str  # "date", "place" or "number"
    claim_value: str  # as the claim says it: "2024", "Paris", "5,000 people"
    evidence_value: str  # as the evidence says it: "2012", "Lyon", "50 people"
    evidence_id: str
    reason: str = ""  # "a different year", "a city in another country", ...


@dataclass(frozen=True)
class ClaimGraph:
    """RAV's graph verification of one claim: what the evidence verified, contradicted, missed."""

    claim_id: str
    support: float  # the share of the claim's edges that a path in the evidence verifies
    verified: tuple[str, ...] = ()  # claim edges verified, as "subject -action-> object"
    conflicts: tuple[GraphConflict, ...] = ()
    unmatched: tuple[str, ...] = ()  # claim nodes no evidence node matched: searched again
    evidence_ids: tuple[str, ...] = ()  # the evidence whose graphs verified an edge


@dataclass(frozen=True)
class Injection:
    """Instruction-like text found in the post or a page, kept from every prompt and reply."""

    source: str  # "post" or "page"
    kind: str  # what the detector saw: "ignore-previous", "role-marker", "order-to-checker", ...
    disguise: str  # how it was hidden: "", "zero-width", "homoglyph", "base64", ... ("+"-joined)
    excerpt: str  # the normalised text around it, short
    url: str | None = None  # the page's address; None for the post
    document_id: str | None = None


@dataclass(frozen=True)
class Check:
    """A complete fact-check of one post."""

    id: str
    post: Post
    claims: tuple[Claim, ...]
    evidence: tuple[Evidence, ...]
    verdict: Verdict
    correction: Correction
    timings: tuple[StageTiming, ...] = ()
    judge: str = "no-model"
    created_at: datetime = field(default_factory=utcnow)
    before: datetime | None = None  # evidence was bounded to documents published before this
    usage: tuple[ModelUsage, ...] = ()  # per stage; empty for the no-model judge
    injections: tuple[Injection, ...] = ()  # instruction-like text found, and set aside
    graphs: tuple[ClaimGraph, ...] = ()  # graph verification per claim; empty when off
    search: SearchStatus = field(default_factory=SearchStatus)  # the evidence sources reached
    images: ImageReport = field(default_factory=ImageReport)  # what the image stage read
    narratives: tuple[Narrative, ...] = ()  # the evidence clusters the model judge read (CRAVE)
    assessments: tuple[Assessment, ...] = ()  # the model judge's reading of each narrative
    quotes: tuple[Quote, ...] = ()  # every quote extraction kept, shown in the reply or not
    # the published fact-check matched to each claim (pipeline.checking.published), accepted
    # or not, with its scores
    fact_checks: tuple[ClaimMatch, ...] = ()


@dataclass(frozen=True)
class SourceRating:
    """What factbot knows about one publisher, and where that came from."""

    domain: str  # normalised: registrable domain, a subdomain, or domain/path
    tier: Tier
    reason: str  # human-readable: which rule gave this tier
    origin: str  # the imported file, "seed" or "manual"
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Reachability:
    """Whether a URL answered recently, and why not when it did not."""

    url: str
    reachable: bool
    reason: str
    checked_at: datetime
