"""AVeriTeC evaluation: run the pipeline on real claims and score its verdicts.

Gold mode judges each claim against only its own question-answer evidence. Retrieval mode pools
every claim's evidence into one index, so the pipeline must find its own among distractors.
Each answer becomes a document at its source URL (answers sharing a URL are merged); the
question is its title. Labels map as in DESIGN.md.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from pipeline.credibility.domains import registrable_domain, unwrap_archive
from pipeline.errors import EmptyPostError
from pipeline.records import Document, Label, Post, document_id_for, new_id

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


def claim_post(claim: EvalClaim) -> Post:
    """Return the post that stands for a claim."""
    return Post(id=new_id(), platform="averitec", platform_id=str(claim.index), text=claim.text)


@dataclass
class Outcome:
    """What the pipeline said about one claim."""

    claim: EvalClaim
    predicted: Label
    seconds: float
    references: int
    retrieved_references: int
    found_own_evidence: bool
    evidence_documents: int = 0
    own_evidence_documents: int = 0
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    error: str | None = None


def score(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """Return accuracy, macro-F1, per-label figures, confusion, reference and latency stats."""
    predicted_labels = sorted(
        {o.predicted for o in outcomes} | set(GOLD_LABELS), key=list(Label).index
    )
    confusion = {g.value: {p.value: 0 for p in predicted_labels} for g in GOLD_LABELS}
    for o in outcomes:
        confusion[o.claim.gold.value][o.predicted.value] += 1
    per_label: dict[str, dict[str, float]] = {}
    f1s = []
    for label in GOLD_LABELS:
        tp = sum(1 for o in outcomes if o.predicted is label and o.claim.gold is label)
        fp = sum(1 for o in outcomes if o.predicted is label and o.claim.gold is not label)
        fn = sum(1 for o in outcomes if o.predicted is not label and o.claim.gold is label)
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        f1s.append(f1)
        per_label[label.value] = {
            "precision": round(precision, 4),
            "recall": round(recall, 4),
            "f1": round(f1, 4),
            "support": tp + fn,
        }
    latencies = np.array([o.seconds for o in outcomes]) if outcomes else np.zeros(1)
    n_claims = max(len(outcomes), 1)
    refs = sum(o.references for o in outcomes)
    good_refs = sum(o.retrieved_references for o in outcomes)
    return {
        "claims": len(outcomes),
        "accuracy": round(
            sum(o.predicted is o.claim.gold for o in outcomes) / max(len(outcomes), 1), 4
        ),
        "macro_f1": round(float(np.mean(f1s)), 4),
        "per_label": per_label,
        "confusion": confusion,
        "predicted": dict(Counter(o.predicted.value for o in outcomes)),
        "references": refs,
        "references_retrieved_share": round(good_refs / refs, 4) if refs else 1.0,
        "own_evidence_found_share": round(
            sum(o.found_own_evidence for o in outcomes) / max(len(outcomes), 1), 4
        ),
        # Of the documents kept as evidence, the share that belong to the claim itself (a lower
        # bound on precision: other claims' evidence can be relevant too).
        "own_evidence_precision": round(
            sum(o.own_evidence_documents for o in outcomes)
            / max(sum(o.evidence_documents for o in outcomes), 1),
            4,
        ),
        "errors": sum(1 for o in outcomes if o.error),
        "model_calls_per_claim": round(sum(o.model_calls for o in outcomes) / n_claims, 2),
        "input_tokens_per_claim": round(sum(o.input_tokens for o in outcomes) / n_claims, 1),
        "output_tokens_per_claim": round(sum(o.output_tokens for o in outcomes) / n_claims, 1),
        "cost_usd_per_claim": round(sum(o.cost_usd for o in outcomes) / n_claims, 6),
        "latency_p50_s": round(float(np.percentile(latencies, 50)), 4),
        "latency_p95_s": round(float(np.percentile(latencies, 95)), 4),
        "per_claim": [
            {
                "index": o.claim.index,
                "gold": o.claim.gold.value,
                "predicted": o.predicted.value,
                "seconds": round(o.seconds, 2),
                "model_calls": o.model_calls,
                "references": o.references,
            }
            for o in outcomes
        ],
    }


async def evaluate(
    claims: Sequence[EvalClaim],
    *,
    run: Callable[[EvalClaim], Any],
    on_claim: Callable[[], object] | None = None,
) -> list[Outcome]:
    """Run every claim through `run` (which returns a Check) and record the outcomes."""
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
                    retrieved_references=0,
                    found_own_evidence=False,
                    error=str(exc),
                )
            )
            if on_claim:
                on_claim()
            continue
        seconds = time.perf_counter() - start
        retrieved = {e.document.id: e.document.url for e in check.evidence}
        references = check.correction.references
        good = sum(1 for r in references if retrieved.get(r.document_id) == r.url)
        own = {d.url for d in claim.documents}
        outcomes.append(
            Outcome(
                claim=claim,
                predicted=check.verdict.label,
                seconds=seconds,
                references=len(references),
                retrieved_references=good,
                found_own_evidence=bool(own & set(retrieved.values())),
                evidence_documents=len(retrieved),
                own_evidence_documents=len(own & set(retrieved.values())),
                model_calls=sum(u.calls for u in check.usage),
                input_tokens=sum(u.input_tokens for u in check.usage),
                output_tokens=sum(u.output_tokens for u in check.usage),
                cost_usd=sum(u.cost_usd for u in check.usage),
            )
        )
        if on_claim:
            on_claim()
    return outcomes


def relevance_calibration(
    claim_vectors: np.ndarray, passage_vectors: np.ndarray, owners: np.ndarray
) -> dict[str, Any]:
    """Return precision/recall/F1 of cosine thresholds separating own from other evidence."""
    sims = claim_vectors @ passage_vectors.T
    positive = owners[None, :] == np.arange(len(claim_vectors))[:, None]
    rows = []
    for threshold in np.arange(0.2, 0.81, 0.05):
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
    return {"thresholds": rows, "best_f1": best, "positives": int(positive.sum())}
