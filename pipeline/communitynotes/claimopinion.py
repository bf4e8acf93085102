"""ClaimOpinion, measured: does a note address the post's claim directly, with a source that
supports it, in neutral words that state facts rather than opinion?

X's evaluator answers `claim_opinion_score` (negative: the note is opinion or off the claim)
and, in test mode, a High / Medium / Low bucket. factbot's score reads the (post, note) pair
with its own models:

- **addresses** (0..1): the stance model's probability that the note refutes the post's
  claim, read as a whole, sentence by sentence and quote by quote, the most decisive reading
  kept (a note that answers the claim directly reads as refuting it; one about something else
  reads as not enough info). The stance model reads English; for a note
  in another language it is the multilingual embedder's cosine of claim and note, mapped onto
  0..1 between `COSINE_FLOOR` and `COSINE_FULL` (0 without an embedder);
- **supported** (0..1): the same reading of the source sentence the note quotes against the
  claim (for a note resting on a published fact-check rated false or misleading: 1);
- **states**: the claim detector reads the note's first sentence as a statement, not an
  opinion or a question (`checkworthiness` > 0.2);
- **markers**: words of opinion or loaded language (first-person stances, judgement adverbs,
  insults of a view, "!", two or more words in capitals the post does not have), in en, es,
  pt, fr, de.

    score = 2 × (0.6 × addresses + 0.4 × supported) − 1 − 0.5 × markers − (0.5 unless states)

clipped to −1..1. Buckets: high ≥ 0.5, low < 0 (where X's drops begin), medium between.
X does not publish its bucket edges; these are factbot's, and `agreement` reports how the
two compare wherever a test-mode run recorded both.

Failure policy: pure; the models' own failures propagate (a missing model file is a
`ConfigError` naming the fix).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from pipeline.claims.heuristic import checkworthiness
from pipeline.embedding.embedder import Role, Vectors
from pipeline.util.text import URL_RE, split_sentences
from pipeline.verifier.stance import REFUTES, StanceModel

HIGH, LOW = 0.5, 0.0
COSINE_FLOOR, COSINE_FULL = 0.80, 0.92
LEVELS = ("high", "medium", "low")
_OPINION = (
    r"\b(?:i|we) (?:think|believe|feel|guess|suspect)\b|\bin my (?:view|opinion)\b",
    r"\bobviously\b|\bclearly\b|\bsadly\b|\bunfortunately\b|\bof course\b|\bprobably\b",
    r"\bridiculous\b|\babsurd\b|\bshameful\b|\bdisgusting\b|\bpropaganda\b|\bfake news\b",
    r"\blies\b|\blie\b|\bliars?\b|\bterrible\b|\bawful\b|\bidiotic\b|\bstupid\b",
    r"\b(?:creo|pienso|opino) que\b|\bobviamente\b|\bclaramente\b|\bmentira\w*\b|\bridícul\w*",
    r"\b(?:acho|penso) que\b|\bobviamente\b|\bmentiros\w*\b",
    r"\bje (?:pense|crois)\b|\bà mon avis\b|\bévidemment\b|\bmensonge\w*\b|\bridicule\b",
    r"\bich (?:glaube|denke|finde)\b|\boffensichtlich\b|\blüge\w*\b|\blächerlich\b",
    r"!",
)
_OPINION_RE = [re.compile(p, re.IGNORECASE) for p in _OPINION]
_CAPS_RE = re.compile(r"\b[A-Z]{4,}\b")
_QUOTED_RE = re.compile(r"[“«„\"]\s*([^”»“\"]+?)\s*[”»“\"]")


class Encoder(Protocol):
    """The part of `pipeline.embedding.embedder.Embedder` the scorer uses."""

    def embed_sync(self, texts: Sequence[str], *, role: Role = ...) -> Vectors:
        """Return one L2-normalised vector per text."""
        ...


@dataclass(frozen=True)
class OpinionScore:
    """factbot's ClaimOpinion reading of one (post, note) pair."""

    score: float  # -1..1, comparable with X's claim_opinion_score
    bucket: str  # high / medium / low
    addresses: float
    supported: float
    states: bool
    markers: tuple[str, ...]

    def detail(self) -> dict[str, object]:
        """Return the reading as JSON-ready fields (stored with the note)."""
        return {
            "claim_opinion_local": round(self.score, 4),
            "addresses": round(self.addresses, 4),
            "supported": round(self.supported, 4),
            "states": self.states,
            "opinion_markers": list(self.markers),
        }


def bucket_of(score: float) -> str:
    """Return the ClaimOpinion bucket of a score (factbot's edges, for both scores)."""
    if score >= HIGH:
        return "high"
    return "low" if score < LOW else "medium"


def _body(note: str) -> str:
    return " ".join(URL_RE.sub("", note).split())


def markers_in(note: str, post: str) -> tuple[str, ...]:
    """Return the opinion and loaded-language markers of a note (the post's acronyms are not)."""
    body = _body(note)
    found = [m.group(0) for rx in _OPINION_RE for m in rx.finditer(body)]
    shouted = [w for w in _CAPS_RE.findall(body) if w not in post]
    if len(shouted) >= 2:  # one word in capitals is a name (NASA), two or more are shouting
        found += shouted
    return tuple(found)


class ClaimOpinionScorer:
    """Score notes with the stance model (English) and an embedder (other languages)."""

    def __init__(self, stance: StanceModel, embedder: Encoder | None = None) -> None:
        self.stance = stance
        self.embedder = embedder

    def _refutes(self, claim: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        probs = self.stance.probabilities([(claim, p) for p in passages])
        return [float(row[REFUTES]) for row in probs]

    def _near(self, claim: str, text: str) -> float:
        if self.embedder is None:
            return 0.0
        vectors = self.embedder.embed_sync([claim, text], role="query")
        cosine = float(np.dot(vectors[0], vectors[1]))
        return min(max((cosine - COSINE_FLOOR) / (COSINE_FULL - COSINE_FLOOR), 0.0), 1.0)

    def score(
        self,
        *,
        post: str,
        claim: str,
        note: str,
        quote: str = "",
        language: str = "en",
        fact_checked: bool = False,
    ) -> OpinionScore:
        """Return the ClaimOpinion reading of a note on a post's claim."""
        body = _body(note)
        if language == "en":
            parts = [body, *split_sentences(body), *_QUOTED_RE.findall(body)]
            readings = self._refutes(claim, [*parts, quote] if quote else parts)
            addresses = max(readings[: len(parts)])
            supported = readings[-1] if quote else 0.0
        else:
            addresses = self._near(claim, body)
            supported = self._near(claim, quote) if quote else 0.0
        if fact_checked:
            supported = 1.0
        first = (split_sentences(body) or [body])[0]
        states = checkworthiness(first) > 0.2
        markers = markers_in(note, post)
        raw = 2 * (0.6 * addresses + 0.4 * supported) - 1 - 0.5 * len(markers)
        raw -= 0.0 if states else 0.5
        value = min(max(raw, -1.0), 1.0)
        return OpinionScore(value, bucket_of(value), addresses, supported, states, markers)


@dataclass(frozen=True)
class Agreement:
    """How factbot's ClaimOpinion scores compare with the API's on the same notes."""

    notes: int
    bucket_agreement: float | None  # share of notes whose two buckets are the same
    correlation: float | None  # Pearson's r of the two scores (None under 3 notes)
    mean_abs_difference: float | None

    def to_json(self) -> dict[str, object]:
        """Return the agreement as a JSON object."""
        return dict(self.__dict__)


def agreement(pairs: Sequence[tuple[float, float]]) -> Agreement:
    """Return the agreement of (factbot's score, X's claim_opinion_score) pairs."""
    n = len(pairs)
    if not n:
        return Agreement(0, None, None, None)
    same = sum(bucket_of(a) == bucket_of(b) for a, b in pairs) / n
    diff = sum(abs(a - b) for a, b in pairs) / n
    r = None
    if n >= 3:
        ours, theirs = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
        if ours.std() > 0 and theirs.std() > 0:
            value = float(np.corrcoef(ours, theirs)[0, 1])
            r = None if math.isnan(value) else round(value, 4)
    return Agreement(n, round(same, 4), r, round(diff, 4))
