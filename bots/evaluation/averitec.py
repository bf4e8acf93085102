"""AVeriTeC evaluation: run the pipeline on real claims and score its verdicts.

Gold mode judges each claim against only its own question-answer evidence. Retrieval mode pools
every claim's evidence into one index, so the pipeline must find its own among distractors.
Each answer becomes a document at its source URL (answers sharing a URL are merged); the
question is its title. Labels map as in docs/architecture/design.md.
"""

from __future__ import annotations

import json
import random
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from pipeline.credibility.domains import registrable_domain, unwrap_archive
from pipeline.errors import EmptyPostError
from pipeline.records.domain import (
    Basis,
    Check,
    Document,
    Label,
    Post,
    Stance,
    document_id_for,
    new_id,
)

LABEL_MAP = {
    "Supported": Label.ACCURATE,
    "Refuted": Label.FALSE,
    "Conflicting Evidence/Cherrypicking": Label.MISLEADING,
    "Not Enough Evidence": Label.UNVERIFIABLE,
}
GOLD_LABELS = [Label.ACCURATE, Label.FALSE, Label.MISLEADING, Label.UNVERIFIABLE]


@dataclass(frozen=True)
class EvalClaim:
    """One AVeriTeC claim with its gold label and evidence documents."""

    index: int
    text: str
    gold: Label
    documents: tuple[Document, ...]


def _answer_text(answer: dict[str, Any]) -> str:
    text = str(answer.get("answer") or "").strip()
    explanation = str(answer.get("boolean_explanation") or "").strip()
    return f"{text}. {explanation}" if explanation else text


def _domain(url: str) -> str:
    """Return the publisher domain of an evidence URL, leniently (the data has odd hosts)."""
    original = unwrap_archive(url)
    try:
        return registrable_domain(original)
    except ValueError:
        return (urlsplit(original).hostname or "unknown").lower()


def load_averitec(path: Path, *, limit: int | None = None) -> list[EvalClaim]:
    """Read AVeriTeC claims and turn their answers into documents."""
    data = json.loads(path.read_text(encoding="utf-8"))
    claims: list[EvalClaim] = []
    for i, item in enumerate(data[:limit] if limit else data):
        texts: dict[str, list[str]] = defaultdict(list)
        titles: dict[str, str] = {}
        for question in item.get("questions") or []:
            for answer in question.get("answers") or []:
                url = answer.get("source_url") or ""
                if answer.get("answer_type") == "Unanswerable" or not url.startswith("http"):
                    continue
                texts[url].append(f"{question['question']} {_answer_text(answer)}")
                titles.setdefault(url, str(question["question"]))
        documents = tuple(
            Document(
                id=document_id_for(url),
                url=url,
                domain=_domain(url),
                title=titles[url],
                text="\n".join(parts),
            )
            for url, parts in texts.items()
        )
        claims.append(
            EvalClaim(
                index=i, text=item["claim"], gold=LABEL_MAP[item["label"]], documents=documents
            )
        )
    return claims


def stratified_sample(claims: Sequence[EvalClaim], n: int, *, seed: int = 0) -> list[EvalClaim]:
    """Return n claims drawn evenly across gold labels (as far as each has claims), in data order.

    A documented subset for runs too slow for the whole set (the model path on 2 cores): the
    same n and seed always give the same claims, and every label is represented even where the
    data is skewed (AVeriTeC dev is 61 % Refuted).
    """
    if n <= 0:
        raise ValueError("the sample size must be positive")
    rng = random.Random(seed)
    groups: dict[Label, list[EvalClaim]] = defaultdict(list)
    for claim in claims:
        groups[claim.gold].append(claim)
    for group in groups.values():
        rng.shuffle(group)
    picked: list[EvalClaim] = []
    while len(picked) < min(n, len(claims)):
        for label in GOLD_LABELS:
            if groups.get(label) and len(picked) < n:
                picked.append(groups[label].pop())
    return sorted(picked, key=lambda c: c.index)


def calibration_part(claims: Sequence[EvalClaim], n: int, *, seed: int = 0) -> list[EvalClaim]:
    """Return the claims outside `stratified_sample(claims, n, seed=seed)`, in data order.

    Thresholds are calibrated on this part and reported on the sample, so a reported figure
    never comes from the data its threshold was fitted to.
    """
    held = {c.index for c in stratified_sample(claims, n, seed=seed)}
    return [c for c in claims if c.index not in held]


def claim_post(claim: EvalClaim) -> Post:
    """Return the post that stands for a claim."""
    return Post(id=new_id(), platform="averitec", platform_id=str(claim.index), text=claim.text)


class ReferenceInvariantError(AssertionError):
    """A reply cited a reference that is not a document the pipeline retrieved (a writer bug)."""


@dataclass(frozen=True)
class StageFailures:
    """One stage's model failures in one check (timeouts and invalid answers among them) and
    its fallbacks to the no-model path."""

    failures: int = 0
    timeouts: int = 0
    invalid: int = 0
    fallbacks: int = 0


@dataclass
class Outcome:
    """What the pipeline said about one claim."""

    claim: EvalClaim
    predicted: Label
    seconds: float
    references: int
    found_own_evidence: bool
    evidence_documents: int = 0
    own_evidence_documents: int = 0
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    error: str | None = None
    decided_by: str = Basis.NO_EVIDENCE.value  # how the post's label was decided
    fallback: bool = False  # a model stage fell back to its no-model path in this check
    stages: dict[str, StageFailures] = field(default_factory=dict)
    cited_gold: int = 0  # cited references that are the claim's own gold evidence
    quoted: int = 0  # decided claims (not unverifiable) shown with a quote
    quote_agrees: int = 0  # of those, quotes whose stance agrees with the claim's label
    cited: tuple[str, ...] = ()  # URLs of the references the reply cited, in order
    trace: dict[str, Any] = field(default_factory=dict)  # why: see `trace_of`; not scored


# the quote stances a claim's label can rest on
_AGREEING = {
    Label.ACCURATE: {Stance.SUPPORTS},
    Label.FALSE: {Stance.REFUTES},
    Label.MISLEADING: {Stance.REFUTES, Stance.CONTEXT},
    Label.PARTLY_ACCURATE: {Stance.SUPPORTS, Stance.REFUTES, Stance.CONTEXT},
}


def decided_by(check: Check) -> str:
    """Return how the post's label was decided: a fallback anywhere, else its deciding claim's."""
    claims = check.verdict.claims
    if any(cv.basis is Basis.FALLBACK for cv in claims):
        return Basis.FALLBACK.value
    deciding = [cv for cv in claims if cv.label is check.verdict.label] or list(claims)
    return deciding[0].basis.value if deciding else Basis.NO_EVIDENCE.value


def check_references(check: Check) -> None:
    """Raise ReferenceInvariantError when a reply cites anything but a retrieved document."""
    retrieved = {e.document.id: e.document.url for e in check.evidence}
    for ref in check.correction.references:
        if retrieved.get(ref.document_id) != ref.url:
            raise ReferenceInvariantError(
                f"reference [{ref.number}] {ref.url} is not a retrieved document (check {check.id})"
            )


TRACE_CHARS = 300
EXTRACTED_CHARS = 120  # a check may keep 5 quotes per document


def trace_of(check: Check) -> dict[str, Any]:
    """Return what decided a check, short enough for a journal line, for reading errors.

    Per claim: its label, how it was decided and the rationale; per narrative the judge read:
    its relation and rationale; the quotes the reply shows, with stance and publisher; every quote
    extraction kept (`extracted`: stance and the start of its text), which the verdict rules
    read; and the graph's conflicts. Not scored: the report is computed from the other fields.
    """
    domain = {r.number: urlsplit(r.url).hostname or "" for r in check.correction.references}
    return {
        "claims": [
            {
                "label": cv.label.value,
                "basis": cv.basis.value,
                "rationale": cv.rationale[:TRACE_CHARS],
            }
            for cv in check.verdict.claims
        ],
        "narratives": [
            {"relation": a.relation.value, "rationale": a.rationale[:TRACE_CHARS]}
            for a in check.assessments
        ],
        "quotes": [
            {
                "stance": item.quote.stance.value,
                "publisher": domain.get(item.quote.reference, ""),
                "text": item.quote.text[:TRACE_CHARS],
            }
            for item in check.correction.items
            if item.quote is not None
        ],
        "extracted": [
            {"stance": q.stance.value, "text": q.text[:EXTRACTED_CHARS]} for q in check.quotes
        ],
        "conflicts": [
            f"{c.kind}: {c.claim_value} vs {c.evidence_value}"
            for graph in check.graphs
            for c in graph.conflicts
        ],
    }


def outcome_of(claim: EvalClaim, check: Check, seconds: float) -> Outcome:
    """Return the outcome of one checked claim (raising if a reference was not retrieved)."""
    check_references(check)
    retrieved = {e.document.id: e.document.url for e in check.evidence}
    references = check.correction.references
    own = {d.url for d in claim.documents}
    quoted = agrees = 0
    for item in check.correction.items:
        if item.label is Label.UNVERIFIABLE or item.quote is None:
            continue
        quoted += 1
        agrees += item.quote.stance in _AGREEING.get(item.label, set())
    stages = {
        u.stage: StageFailures(u.failures, u.timeouts, u.invalid, u.fallbacks) for u in check.usage
    }
    label = decided_by(check)
    return Outcome(
        claim=claim,
        predicted=check.verdict.label,
        seconds=seconds,
        references=len(references),
        found_own_evidence=bool(own & set(retrieved.values())),
        evidence_documents=len(retrieved),
        own_evidence_documents=len(own & set(retrieved.values())),
        model_calls=sum(u.calls for u in check.usage),
        input_tokens=sum(u.input_tokens for u in check.usage),
        output_tokens=sum(u.output_tokens for u in check.usage),
        cost_usd=sum(u.cost_usd for u in check.usage),
        decided_by=label,
        fallback=label == Basis.FALLBACK.value or any(u.fallbacks for u in check.usage),
        stages=stages,
        cited_gold=sum(1 for r in references if r.url in own),
        quoted=quoted,
        quote_agrees=agrees,
        cited=tuple(r.url for r in references),
        trace=trace_of(check),
    )


async def evaluate(
    claims: Sequence[EvalClaim],
    *,
    run: Callable[[EvalClaim], Any],
    on_claim: Callable[[], object] | None = None,
    on_outcome: Callable[[Outcome], object] | None = None,
) -> list[Outcome]:
    """Run every claim through `run` (which returns a Check) and record the outcomes.

    `on_outcome` sees each outcome as soon as it is decided (the resumable run's journal).

    A reference that is not a retrieved document stops the run (ReferenceInvariantError): it is
    a bug in the writer, never a figure to report.
    """
    outcomes: list[Outcome] = []
    for claim in claims:
        start = time.perf_counter()
        try:
            check = await run(claim)
        except EmptyPostError as exc:
            outcomes.append(
                Outcome(
                    claim=claim,
                    predicted=Label.UNVERIFIABLE,
                    seconds=time.perf_counter() - start,
                    references=0,
                    found_own_evidence=False,
                    error=str(exc),
                )
            )
        else:
            outcomes.append(outcome_of(claim, check, time.perf_counter() - start))
        if on_outcome:
            on_outcome(outcomes[-1])
        if on_claim:
            on_claim()
    return outcomes


def relevance_calibration(
    claim_vectors: np.ndarray, passage_vectors: np.ndarray, owners: np.ndarray
) -> dict[str, Any]:
    """Return precision/recall/F1 of cosine thresholds separating own from other evidence.

    The grid runs from 0.20 to 0.95 in steps of 0.01: multilingual-e5's cosines sit far higher
    than MiniLM's (unrelated text ~0.7). `ranking` is threshold-free: for each claim with evidence,
    the rank of its best own passage among all passages (recall@1, recall@5, MRR), which compares
    embedders whose cosines are not on one scale.
    """
    sims = claim_vectors @ passage_vectors.T
    positive = owners[None, :] == np.arange(len(claim_vectors))[:, None]
    rows = []
    for threshold in np.arange(0.2, 0.955, 0.01):
        predicted = sims >= threshold
        tp = int((predicted & positive).sum())
        fp = int((predicted & ~positive).sum())
        fn = int((~predicted & positive).sum())
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        rows.append(
            {
                "threshold": round(float(threshold), 2),
                "precision": round(precision, 4),
                "recall": round(recall, 4),
                "f1": round(f1, 4),
            }
        )
    best = max(rows, key=lambda r: r["f1"])
    return {
        "thresholds": rows,
        "best_f1": best,
        "positives": int(positive.sum()),
        "ranking": _own_evidence_ranks(sims, positive),
    }


def _own_evidence_ranks(sims: np.ndarray, positive: np.ndarray) -> dict[str, float]:
    """Return recall@1/@5 and MRR of each claim's best own passage among all passages."""
    ranks = []
    for row, own in zip(sims, positive, strict=True):
        if own.any():
            ranks.append(int((row > row[own].max()).sum()) + 1)
    rank = np.array(ranks) if ranks else np.ones(1)
    return {
        "claims": len(ranks),
        "recall_at_1": round(float((rank == 1).mean()), 4),
        "recall_at_5": round(float((rank <= 5).mean()), 4),
        "mrr": round(float((1.0 / rank).mean()), 4),
    }
