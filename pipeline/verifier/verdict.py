"""Verdicts from evidence: a claim's label from the stance model's readings of its evidence.

The stance model (`pipeline.verifier.stance`) reads each citable passage retrieved for a claim
and gives calibrated probabilities that it supports or refutes the claim; a passage's quote is
its sentence with the strongest stance, verbatim. A passage that repeats the claim to call it
false, or names its winner as the loser, is read in code as a refutation without support
(`pipeline.verifier.frames`), whatever the model made of it. Code then decides, with thresholds
chosen on AVeriTeC *train* (`bench.verifier_thresholds`; never on dev, the data reported on):

- the strongest support S and the strongest refutation R over the claim's citable evidence
  (`sides`);
- both S >= `support` and R >= `refute`: evidence points both ways. The side whose best source
  is in a more credible tier wins (CRAVE's tier order: an unrated page that "confirms" what a
  rated newsroom refutes cannot make the claim `misleading`); between equally credible sides,
  `misleading` when the weaker side still reaches `mixed`, else the stronger side decides;
- R >= `refute` -> `false`; S >= `support` -> `accurate`;
- otherwise nothing credible is decisive -> `unverifiable` (no evidence cited).

A language model has no part in this decision, so a page's or post's instructions have no
channel into it: text is only ever scored as evidence for or against the claim. The rules in
`pipeline.judge.rules` (graph conflicts, citations) and a matching fact-check review
(`pipeline.run._reviews_first`) still have the last word, as on every path.

`settle` is the hybrid judge's arbiter: where the model judge and a confident verifier disagree,
code takes the verifier's verdict.

Failure policy: a missing or altered model raises `ConfigError` at first use (the composition
root loads it at start); nothing here raises on evidence text.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

from pipeline.judge.claimreview import combine
from pipeline.records.domain import (
    Basis,
    Claim,
    ClaimVerdict,
    Evidence,
    Label,
    Quote,
    Stance,
    Verdict,
)
from pipeline.util.cpu import CpuPool, run_cpu
from pipeline.verifier import frames
from pipeline.verifier.stance import PassageStance, StanceModel

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Thresholds:
    """Where calibrated stance probabilities become a label.

    Asymmetric by design: `accurate` needs support of at least `support` **and** the strongest
    refutation below `veto`, so a claim that anything credible contradicts is never endorsed;
    `false` needs a refutation of at least `refute`. The defaults are the ones of least cost on
    AVeriTeC *train* under the default `Costs` (`python -m bench.verifier_thresholds`; never on
    dev, the data reported on; docs/results/2026-12-05-verifier-contrast.md). `confident` is
    fitted by the same bench: the lowest deciding probability from which the verifier's verdicts
    on train are right at least 70 % of the time; 1.0 when none is: the hybrid judge's model is
    never overruled, it sees the verifier's readings instead.
    """

    support: float = 0.9  # prose; question-answer evidence keeps 0.95 (`qa_support`)
    refute: float = 0.8
    mixed: float = 0.9
    veto: float = 0.5  # accurate only while the strongest refutation stays below this
    # A passage bears on the claim (counts on either side, and may veto) only when it is about
    # it: its relevance within `margin` of the best passage's for the claim, and at least
    # `coverage` of the claim's content words in it. A passage that shares only a phrase with
    # the claim, far less relevant than the page that states it, never vetoes it.
    margin: float = 0.15
    coverage: float = 0.5
    # Question-answer evidence ("Did X? No. …", AVeriTeC's form) is read at its own thresholds:
    # its readings are mapped so that these reach `support` and `refute` (`on_scale`).
    qa_support: float = 0.95
    qa_refute: float = 0.8
    confident: float = 1.0  # hybrid: the verifier overrules the model judge from here; 1: never
    # hybrid: the stance model quotes a passage for the model judge once its stronger side
    # reaches this (the model reads the quote with its probability and decides itself)
    quote: float = 0.4


@dataclass(frozen=True)
class Costs:
    """What each kind of error costs when thresholds are fitted (`bench.verifier_thresholds`).

    Endorsing misinformation (a false claim called `accurate`) and calling a true claim `false`
    are the errors a fact-checking bot must not make: they cost more than any other mistake, and
    more than declining to decide (`unverifiable` where the truth is decisive). A right label
    costs 0. Operators who would rather abstain more, or less, change these and refit.
    """

    false_as_accurate: float = 4.0
    true_as_false: float = 4.0
    wrong: float = 1.0  # any other wrong decisive label (e.g. misleading for false)
    unverifiable: float = 1.0  # no decision where the gold label is decisive

    def of(self, gold: Label, predicted: Label) -> float:
        """Return the cost of answering `predicted` where the truth is `gold`."""
        if predicted is gold:
            return 0.0
        if predicted is Label.ACCURATE and gold is not Label.ACCURATE:
            return self.false_as_accurate if gold is Label.FALSE else max(self.wrong, 1.0)
        if predicted is Label.FALSE and gold is Label.ACCURATE:
            return self.true_as_false
        if predicted is Label.UNVERIFIABLE:
            return self.unverifiable
        return self.wrong


@dataclass(frozen=True)
class Reading:
    """The stance model's reading of one evidence item for its claim."""

    evidence_id: str
    stance: PassageStance


@dataclass(frozen=True)
class Decided:
    """The verifier's verdict, the evidence with stances, the quotes and every reading."""

    verdict: Verdict
    evidence: tuple[Evidence, ...]
    quotes: tuple[Quote, ...]
    readings: tuple[Reading, ...]


_QA = re.compile(r"\?\s+\S")


def evidence_form(text: str) -> str:
    """Return "qa" for question-answer evidence (a question, then its answer), else "prose"."""
    return "qa" if _QA.search(text) else "prose"


def _stretch(p: float, at: float, to: float) -> float:
    """Map p monotonically so that `at` lands on `to` (0 and 1 stay where they are)."""
    if at <= 0.0 or at >= 1.0 or at == to:
        return p
    return p * to / at if p <= at else to + (p - at) * (1.0 - to) / (1.0 - at)


def on_scale(reading: PassageStance, form: str, t: Thresholds) -> tuple[float, float]:
    """Return (supports, refutes) of a reading on the prose thresholds' scale.

    Prose readings are as read; a question-answer reading is stretched so that its form's own
    thresholds (`qa_support`, `qa_refute`) meet `support` and `refute`.
    """
    if form != "qa":
        return reading.supports, reading.refutes
    return (
        _stretch(reading.supports, t.qa_support, t.support),
        _stretch(reading.refutes, t.qa_refute, t.refute),
    )


QUESTION_COVERAGE = 0.1  # the share of the claim's content words a question must hold


def asks_about(claim: str, text: str, form: str) -> bool:
    """Return whether question-answer evidence asks about the claim: its question holds some of
    the claim's content words (a tenth: a name or a key noun of a long claim). An annotator's
    question and answer are written about the claim ("Did Hunter Biden have energy-sector
    experience? No. …"); a web page opening on another question ("Who invented the telephone?
    …" against a claim about the Moon landing) is not."""
    if form != "qa":
        return False
    question = text.split("?", 1)[0]
    return frames.coverage(claim, question) >= QUESTION_COVERAGE


def bearing(relevance: Sequence[float], covered: Sequence[float], t: Thresholds) -> list[bool]:
    """Return which of a claim's passages bear on it: about it, not sharing only a phrase.

    A passage bears when its relevance is within `margin` of the claim's most relevant passage
    and it holds at least `coverage` of the claim's content words.
    """
    top = max(relevance, default=0.0)
    return [
        r >= top - t.margin and c >= t.coverage for r, c in zip(relevance, covered, strict=True)
    ]


def sides(readings: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """Return (S, R): the strongest support and the strongest refutation over the readings.

    A passage may count on both sides (a page that confirms part of a claim and contradicts
    another). Counting each passage on its stronger side only was measured worse on AVeriTeC
    train (`bench.verifier_thresholds`: macro-F1 0.25 against 0.28 within the same bound on true
    claims called false, 6.7 % against 2.7 % of them called false).
    """
    support = max((s for s, _ in readings), default=0.0)
    refute = max((r for _, r in readings), default=0.0)
    return support, refute


def label_from(support: float, refute: float, thresholds: Thresholds) -> Label:
    """Return the label of a claim whose strongest support and refutation are given.

    `accurate` only while the refutation stays below `veto`: support that something credible
    contradicts is contested, never an endorsement (`unverifiable`, or `misleading` when both
    sides reach `mixed`).
    """
    t = thresholds
    supported, refuted = support >= t.support, refute >= t.refute
    endorsable = supported and refute < t.veto
    if supported and refuted:
        if min(support, refute) >= t.mixed:
            return Label.MISLEADING
        if support > refute:
            return Label.ACCURATE if endorsable else Label.UNVERIFIABLE
        return Label.FALSE
    if refuted:
        return Label.FALSE
    if endorsable:
        return Label.ACCURATE
    return Label.UNVERIFIABLE


def deciding(label: Label, support: float, refute: float) -> float:
    """Return the probability a verifier label rests on (0 for `unverifiable`).

    `false` rests on the strongest refutation, `accurate` on the strongest support, `misleading`
    on the stronger of the two. The hybrid judge's `confident` is compared with it.
    """
    if label is Label.FALSE:
        return refute
    if label is Label.ACCURATE:
        return support
    if label is Label.MISLEADING:
        return max(support, refute)
    return 0.0


def _stance_of(reading: PassageStance, thresholds: Thresholds) -> Stance:
    if reading.refutes >= thresholds.refute and reading.refutes >= reading.supports:
        return Stance.REFUTES
    if reading.supports >= thresholds.support:
        return Stance.SUPPORTS
    return Stance.UNKNOWN


def _quote(reading: Reading, stance: Stance) -> Quote:
    p = reading.stance.refutes if stance is Stance.REFUTES else reading.stance.supports
    text = reading.stance.quote
    if stance is Stance.REFUTES and reading.stance.against:
        text = reading.stance.against  # the sentence that contradicts, not the one that states
    return Quote(reading.evidence_id, text, stance, strength=round(p, 3))


# Why a claim was left open, in the words of the rationale (the reply says it in each language).
REASONS = {
    Basis.NO_EVIDENCE: "No credible evidence about this claim was found.",
    Basis.CONTESTED: "Credible evidence about this claim points both ways.",
    Basis.REPORTS: "The evidence found only reports or repeats this claim; none confirms or "
    "refutes it.",
    Basis.VERIFIER: "Evidence about this claim was found, but none of it supports or "
    "contradicts it clearly.",
}


def open_reason(
    claim: str, mine: Sequence[Reading], passages: Sequence[str], t: Thresholds
) -> Basis:
    """Return why a claim was left unverifiable, truly.

    - nothing credible bears on it (`mine` empty: no passage, or none about it): no evidence;
    - support reached `support` but a refutation reached `veto`, or both sides are strong:
      the evidence is contested;
    - a passage only reports or repeats the claim (`frames.reported`) and nothing decides:
      reports only;
    - else evidence was found, but none is decisive.
    """
    if not mine:
        return Basis.NO_EVIDENCE
    support, refute = sides([(r.stance.supports, r.stance.refutes) for r in mine])
    if (support >= t.support and refute >= t.veto) or min(support, refute) >= t.mixed:
        return Basis.CONTESTED
    if any(frames.reported(claim, text) is not None for text in passages):
        return Basis.REPORTS
    return Basis.VERIFIER


_INTRO = {
    Label.ACCURATE: "Credible evidence supports the claim",
    Label.FALSE: "Credible evidence contradicts the claim",
    Label.MISLEADING: "Credible evidence both supports and contradicts the claim",
}


class VerifierJudge:
    """factbot's own judge: stance model readings, decided by thresholds in code."""

    name = "verifier"

    def __init__(
        self,
        stance: StanceModel,
        *,
        thresholds: Thresholds | None = None,
        cpu: CpuPool | None = None,
    ) -> None:
        self.stance = stance
        self.thresholds = thresholds or Thresholds()
        self.cpu = cpu

    async def judge(
        self, claims: Sequence[Claim], evidence: Sequence[Evidence]
    ) -> tuple[Verdict, tuple[Evidence, ...]]:
        """Return the verdict and the evidence with stances (the `Judge` shape)."""
        decided = await self.decide(claims, evidence)
        return decided.verdict, decided.evidence

    async def read(self, claims: Sequence[Claim], evidence: Sequence[Evidence]) -> list[Reading]:
        """Return the reading of each citable evidence item for its claim.

        The stance model's, except where a page repeats the claim to call it false: that page
        refutes it, read in code (`pipeline.verifier.frames`).
        """
        readings: list[Reading] = []
        for claim in claims:
            mine = [e for e in evidence if e.claim_id == claim.id and e.tier.citable]
            if not mine:
                continue
            found = await run_cpu(
                self.cpu, frames.read, self.stance, claim.text, [e.passage.text for e in mine]
            )
            readings += [Reading(e.id, s) for e, s in zip(mine, found, strict=True)]
        return readings

    async def quotes(self, claims: Sequence[Claim], evidence: Sequence[Evidence]) -> list[Quote]:
        """Return a quote of each citable evidence item the stance model finds decisive.

        The hybrid judge's extraction stage: the sentence with the strongest stance, verbatim,
        with the stance (supports or refutes, as `_stance_of` reads it at the `quote` bar, lower
        than the verdict's: the model judge decides) and its probability.
        """
        quotes = []
        for reading in await self.read(claims, evidence):
            t = self.thresholds
            stance = _stance_of(
                reading.stance, dataclasses.replace(t, support=t.quote, refute=t.quote)
            )
            if stance is not Stance.UNKNOWN and reading.stance.quote:
                quotes.append(_quote(reading, stance))
        return quotes

    async def decide(self, claims: Sequence[Claim], evidence: Sequence[Evidence]) -> Decided:
        """Read every claim's citable evidence and decide each claim."""
        readings = await self.read(claims, evidence)
        by_id = {e.id: e for e in evidence}
        t = self.thresholds
        verdicts: list[ClaimVerdict] = []
        quotes: list[Quote] = []
        stances: dict[str, Stance] = {}
        for claim in claims:
            mine = self.bearing_readings(claim, readings, by_id)
            for r in readings:
                if by_id[r.evidence_id].claim_id == claim.id:
                    stances[r.evidence_id] = Stance.UNKNOWN  # read, but not about the claim
            for r in mine:
                stances[r.evidence_id] = _stance_of(r.stance, t)
            support, refute = sides([(r.stance.supports, r.stance.refutes) for r in mine])
            label = label_from(support, refute, t)
            if label is not Label.UNVERIFIABLE and support >= t.support and refute >= t.refute:
                # Both sides reach their thresholds: the more credible tier wins outright.
                rank = {r.evidence_id: by_id[r.evidence_id].tier.rank for r in mine}
                best_support = min(
                    rank[r.evidence_id] for r in mine if r.stance.supports >= t.support
                )
                best_refute = min(rank[r.evidence_id] for r in mine if r.stance.refutes >= t.refute)
                if best_support < best_refute:
                    label = Label.ACCURATE
                elif best_refute < best_support:
                    label = Label.FALSE
            if label is Label.UNVERIFIABLE:
                found = [by_id[r.evidence_id] for r in readings]
                mine_all = [e for e in found if e.claim_id == claim.id]
                why = open_reason(claim.text, mine, [e.passage.text for e in mine_all], t)
                verdicts.append(ClaimVerdict(claim.id, label, REASONS[why], basis=why))
                log.info(
                    "claim decided",
                    extra={"claim_id": claim.id, "label": label.value, "rule": why.value},
                )
                continue
            verdict, cited = self._verdict(claim, label, mine, support, refute)
            verdicts.append(verdict)
            quotes += cited
            log.info(
                "claim decided",
                extra={
                    "claim_id": claim.id,
                    "label": label.value,
                    "rule": "verifier",
                    "support": round(support, 3),
                    "refute": round(refute, 3),
                },
            )
        judged = tuple(
            dataclasses.replace(e, stance=stances[e.id]) if e.id in stances else e for e in evidence
        )
        post = Verdict(label=combine([v.label for v in verdicts]), claims=tuple(verdicts))
        return Decided(post, judged, tuple(quotes), tuple(readings))

    def bearing_readings(
        self, claim: Claim, readings: Sequence[Reading], by_id: dict[str, Evidence]
    ) -> list[Reading]:
        """Return the claim's readings that bear on it, on the prose thresholds' scale.

        A passage sharing only a phrase with the claim (far less relevant than the claim's best
        passage, or without its key words) is left out: it neither supports, refutes nor vetoes
        (`bearing`). Question-answer evidence whose question asks about the claim ("Did X? No.
        …", `asks_about`) always bears, read at its own thresholds (`on_scale`): its answers
        rarely repeat the claim's words ("No, the records show otherwise."), and leaving them
        out made many of AVeriTeC's claims "no evidence".
        """
        t = self.thresholds
        mine = [r for r in readings if by_id[r.evidence_id].claim_id == claim.id]
        texts = [by_id[r.evidence_id].passage.text for r in mine]
        keep = bearing(
            [by_id[r.evidence_id].relevance for r in mine],
            [frames.coverage(claim.text, text) for text in texts],
            t,
        )
        out = []
        for r, text, kept in zip(mine, texts, keep, strict=True):
            form = evidence_form(text)
            if not kept and not asks_about(claim.text, text, form):
                continue
            s, f = on_scale(r.stance, form, t)
            stance = dataclasses.replace(r.stance, probs=(s, f, max(0.0, 1.0 - s - f)))
            out.append(Reading(r.evidence_id, stance))
        return out

    def _verdict(
        self,
        claim: Claim,
        label: Label,
        mine: Sequence[Reading],
        support: float,
        refute: float,
    ) -> tuple[ClaimVerdict, list[Quote]]:
        t = self.thresholds
        refuting = sorted(
            (r for r in mine if r.stance.refutes >= t.refute), key=lambda r: -r.stance.refutes
        )
        supporting = sorted(
            (r for r in mine if r.stance.supports >= t.support), key=lambda r: -r.stance.supports
        )
        groups: list[tuple[Stance, list[Reading]]] = [(Stance.REFUTES, refuting)]
        if label is Label.ACCURATE:
            groups = [(Stance.SUPPORTS, supporting)]
        elif label is Label.MISLEADING:
            groups.append((Stance.SUPPORTS, supporting))
        cited: list[str] = []
        quotes: list[Quote] = []
        for stance, group in groups:
            for r in group:
                if r.evidence_id not in cited:
                    cited.append(r.evidence_id)
                    quotes.append(_quote(r, stance))
        lead = quotes[0].text if quotes else ""
        strength = refute if label is Label.FALSE else support
        if label is Label.MISLEADING:
            strength = min(support, refute)
        rationale = f"{_INTRO[label]} (stance model, p = {strength:.2f}): “{lead}”"
        return (
            ClaimVerdict(
                claim.id, label, rationale, evidence_ids=tuple(cited), basis=Basis.VERIFIER
            ),
            quotes,
        )


def settle(model: Verdict, verifier: Decided, thresholds: Thresholds) -> tuple[Verdict, list[str]]:
    """Return the hybrid verdict: the model judge's, except where a confident verifier differs.

    The verifier is confident about a claim when it is decisive and its deciding probability
    reaches `thresholds.confident`. Returns the verdict and the ids of the claims it changed.
    """
    by_claim = {cv.claim_id: cv for cv in verifier.verdict.claims}
    strength = {
        cv.claim_id: deciding(
            cv.label,
            *sides(
                [
                    (r.stance.supports, r.stance.refutes)
                    for r in verifier.readings
                    if r.evidence_id in cv.evidence_ids
                ]
            ),
        )
        for cv in verifier.verdict.claims
    }
    changed: list[str] = []
    claims: list[ClaimVerdict] = []
    for cv in model.claims:
        mine = by_claim.get(cv.claim_id)
        if (
            mine is not None
            and mine.label is not Label.UNVERIFIABLE
            and mine.label is not cv.label
            and thresholds.confident < 1.0
            and strength.get(cv.claim_id, 0.0) >= thresholds.confident
        ):
            log.warning(
                "model verdict settled towards the verifier",
                extra={"claim": cv.claim_id, "model": cv.label.value, "verifier": mine.label.value},
            )
            changed.append(cv.claim_id)
            cv = mine
        claims.append(cv)
    return Verdict(label=combine([c.label for c in claims]), claims=tuple(claims)), changed
