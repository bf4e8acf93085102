"""Scores of an AVeriTeC run, each with what it needs to be read right.

The per-label figures are `sklearn.metrics`', accuracy and macro-F1 the same arithmetic in numpy
(the bootstrap computes each 2,000 times); accuracy and macro-F1 come
with 95 % percentile-bootstrap intervals (`scipy.stats.bootstrap`: claims resampled with
replacement, a seeded generator: the same outcomes and seed give the same interval); a sample of
100 claims leaves intervals about ±0.1 wide, so a difference smaller than that is not a finding.
Besides the usual per-label figures the report counts the errors that cost most
(accurate→false: a true claim called false; false→accurate), how each claim was decided
(fact-check review, model, no evidence, fallback, verdict rules), every model failure, timeout
and fallback per stage, the share of cited references that are the claim's own gold evidence,
and the share of decided claims whose shown quote's stance agrees with the verdict.

Per-label F1 is sklearn's exact 2·tp / (2·tp + fp + fn); the hand-written 2·P·R / (P + R) it
replaced could land a float error on the other side of a rounding tie (0.21874999… for 7/32),
so a per-label F1 that is exactly a half at the fifth decimal can now read 0.0001 higher than a
report made before. Every other figure, the intervals included, is the same to the digit.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy import stats
from sklearn.metrics import precision_recall_fscore_support

from bots.evaluation.averitec import GOLD_LABELS, Outcome, StageFailures
from pipeline.records.codec import to_plain
from pipeline.records.domain import Label

BOOTSTRAP_RESAMPLES = 2000
_GOLD_CODES = [list(Label).index(label) for label in GOLD_LABELS]


def accuracy_of(gold: np.ndarray, predicted: np.ndarray) -> float:
    """Return the share of claims whose predicted label is the gold one."""
    return float(np.mean(gold == predicted)) if len(gold) else 0.0


def macro_f1_of(gold: np.ndarray, predicted: np.ndarray) -> float:
    """Return the mean F1 over the four gold labels (0 for a label never predicted right).

    sklearn's arithmetic (2·tp / (2·tp + fp + fn) per label, then their mean) in plain numpy
    counts: the bootstrap calls this 2,000 times a figure, and sklearn's input checks made
    those calls 12 of a 17-second eval of 8 claims (`tests/pipeline/test_eval_figures.py`
    holds it equal to `sklearn.metrics.f1_score`).
    """
    if not len(gold):
        return 0.0
    scores = []
    for code in _GOLD_CODES:
        is_gold, is_predicted = gold == code, predicted == code
        tp = int(np.sum(is_gold & is_predicted))
        wrong = int(np.sum(is_gold ^ is_predicted))  # fp + fn
        scores.append(2 * tp / (2 * tp + wrong) if tp or wrong else 0.0)
    return float(np.mean(np.array(scores, dtype=np.float64)))


def codes(outcomes: Sequence[Outcome]) -> tuple[np.ndarray, np.ndarray]:
    """Return the gold and predicted labels of outcomes as integer arrays."""
    order = list(Label)
    gold = np.array([order.index(o.claim.gold) for o in outcomes], dtype=np.int64)
    predicted = np.array([order.index(o.predicted) for o in outcomes], dtype=np.int64)
    return gold, predicted


def bootstrap_interval(
    gold: np.ndarray,
    predicted: np.ndarray,
    metric: Callable[[np.ndarray, np.ndarray], float],
    *,
    seed: int = 0,
    resamples: int = BOOTSTRAP_RESAMPLES,
    level: float = 0.95,
) -> tuple[float, float]:
    """Return the percentile-bootstrap interval of metric over claims resampled with replacement.

    `scipy.stats.bootstrap` with `paired=True` and `method="percentile"`: each resample draws
    n claim indexes with `default_rng(seed).integers(0, n, (resamples, n))` and the bounds are
    the linear-interpolated (1 - level) / 2 and (1 + level) / 2 quantiles, so the figures are
    those of the numpy loop this replaced. One claim (which scipy refuses) gives a point.
    """
    return _interval((gold, predicted), metric, seed=seed, resamples=resamples, level=level)


def _interval(
    columns: tuple[np.ndarray, ...],
    metric: Callable[..., float],
    *,
    seed: int,
    resamples: int,
    level: float,
) -> tuple[float, float]:
    """Return the paired percentile-bootstrap interval of metric over the columns' rows."""
    n = len(columns[0])
    if n == 0:
        return (0.0, 0.0)
    if n == 1:
        value = round(metric(*columns), 4)
        return (value, value)
    result = stats.bootstrap(
        columns,
        metric,
        paired=True,
        vectorized=False,
        n_resamples=resamples,
        confidence_level=level,
        method="percentile",
        rng=np.random.default_rng(seed),
    )
    low, high = result.confidence_interval
    return (round(float(low), 4), round(float(high), 4))


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


def _failures(outcomes: Sequence[Outcome]) -> dict[str, dict[str, int]]:
    """Return failures, timeouts, invalid answers and fallbacks added up per stage."""
    totals: dict[str, Counter[str]] = {}
    for o in outcomes:
        for stage, f in o.stages.items():
            totals.setdefault(stage, Counter()).update(to_plain(f))
    keys = list(to_plain(StageFailures()))
    return {stage: {k: int(c[k]) for k in keys} for stage, c in sorted(totals.items())}


def score(outcomes: Sequence[Outcome], *, seed: int = 0) -> dict[str, Any]:
    """Return the run's figures: accuracy and macro-F1 with intervals, errors, how claims were
    decided, failures per stage, evidence and quote checks, cost and latency."""
    predicted_labels = sorted(
        {o.predicted for o in outcomes} | set(GOLD_LABELS), key=list(Label).index
    )
    confusion = {g.value: {p.value: 0 for p in predicted_labels} for g in GOLD_LABELS}
    for o in outcomes:
        confusion[o.claim.gold.value][o.predicted.value] += 1
    gold, predicted = codes(outcomes)
    precision, recall, f1, support = (
        precision_recall_fscore_support(gold, predicted, labels=_GOLD_CODES, zero_division=0.0)
        if outcomes
        else np.zeros((4, len(GOLD_LABELS)))
    )
    per_label = {
        label.value: {
            "precision": round(float(precision[i]), 4),
            "recall": round(float(recall[i]), 4),
            "f1": round(float(f1[i]), 4),
            "support": int(support[i]),
        }
        for i, label in enumerate(GOLD_LABELS)
    }
    latencies = np.array([o.seconds for o in outcomes]) if outcomes else np.zeros(1)
    n_claims = max(len(outcomes), 1)
    decided = [o for o in outcomes if o.predicted is not Label.UNVERIFIABLE]
    cited = sum(o.references for o in outcomes)
    quoted = sum(o.quoted for o in outcomes)
    return {
        "claims": len(outcomes),
        "gold_labels": {g.value: int(np.sum(gold == list(Label).index(g))) for g in GOLD_LABELS},
        "accuracy": round(accuracy_of(gold, predicted), 4),
        "accuracy_ci95": bootstrap_interval(gold, predicted, accuracy_of, seed=seed),
        "macro_f1": round(macro_f1_of(gold, predicted), 4),
        "macro_f1_ci95": bootstrap_interval(gold, predicted, macro_f1_of, seed=seed),
        "bootstrap": {"resamples": BOOTSTRAP_RESAMPLES, "seed": seed, "level": 0.95},
        "per_label": per_label,
        "confusion": confusion,
        "accurate_called_false": confusion["accurate"].get("false", 0),
        "false_called_accurate": confusion["false"].get("accurate", 0),
        "predicted": dict(Counter(o.predicted.value for o in outcomes)),
        "decided_by": dict(Counter(o.decided_by for o in outcomes)),
        "claims_with_fallback": sum(1 for o in outcomes if o.fallback),
        "model_failures_by_stage": _failures(outcomes),
        "references": cited,
        # Of the references cited, the share that are the claim's own gold evidence (in
        # retrieval mode the rest are other claims' documents; a lower bound on precision).
        "cited_gold_share": _share(sum(o.cited_gold for o in outcomes), cited),
        # Of the decided claims shown with a quote, the share whose quote's stance agrees
        # with the label (accurate: supports; false: refutes; misleading: refutes or context).
        "decided_claims_quoted": quoted,
        "quote_stance_agrees_share": _share(sum(o.quote_agrees for o in outcomes), quoted),
        "decided_posts": len(decided),
        "own_evidence_found_share": round(
            sum(o.found_own_evidence for o in outcomes) / n_claims, 4
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
                "decided_by": o.decided_by,
                "fallback": o.fallback,
                "seconds": round(o.seconds, 2),
                "model_calls": o.model_calls,
                "references": o.references,
            }
            for o in outcomes
        ],
    }


def compare(
    first: Sequence[Outcome], second: Sequence[Outcome], *, seed: int = 0
) -> dict[str, Any]:
    """Return two runs side by side on the claims both decided, with paired intervals.

    The difference (second - first) of macro-F1 and of accuracy comes with a 95 % paired
    bootstrap interval: the same claims are resampled for both runs, so the interval is much
    narrower than the two runs' own intervals would suggest. Raises ValueError when a claim
    carries another gold label in each run (not the same data).
    """
    mine = {o.claim.index: o for o in first}
    theirs = {o.claim.index: o for o in second}
    common = sorted(mine.keys() & theirs.keys())
    for index in common:
        if mine[index].claim.gold is not theirs[index].claim.gold:
            raise ValueError(f"claim {index} has another gold label in each run")
    gold, a = codes([mine[i] for i in common])
    _, b = codes([theirs[i] for i in common])

    def figures(metric: Callable[[np.ndarray, np.ndarray], float]) -> dict[str, Any]:
        def gain(g: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
            return metric(g, y) - metric(g, x)

        low, high = _interval(
            (gold, a, b), gain, seed=seed, resamples=BOOTSTRAP_RESAMPLES, level=0.95
        )
        return {
            "first": round(metric(gold, a), 4),
            "second": round(metric(gold, b), 4),
            "difference": round(gain(gold, a, b), 4),
            "interval": [low, high],
        }

    true_code = list(Label).index(Label.ACCURATE)
    false_code = list(Label).index(Label.FALSE)

    def true_called_false(predicted: np.ndarray) -> int:
        return int(np.sum((gold == true_code) & (predicted == false_code)))

    return {
        "claims": len(common),
        "only_in_first": len(mine.keys() - theirs.keys()),
        "only_in_second": len(theirs.keys() - mine.keys()),
        "macro_f1": figures(macro_f1_of),
        "accuracy": figures(accuracy_of),
        "right_only_in_first": int(np.sum((a == gold) & (b != gold))),
        "right_only_in_second": int(np.sum((b == gold) & (a != gold))),
        "changed": int(np.sum(a != b)),
        "accurate_to_false": {"first": true_called_false(a), "second": true_called_false(b)},
    }
