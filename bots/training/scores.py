"""Pair-level scores of a stance model: accuracy, macro-F1 and per-class F1 (sklearn)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
from sklearn.metrics import accuracy_score, f1_score

from pipeline.verifier.stance import LABELS


def pair_metrics(gold: Sequence[int], predicted: Sequence[int]) -> dict[str, Any]:
    """Return accuracy, macro-F1 over the labels present in gold, per-class F1, and counts."""
    present = sorted(set(gold))
    per_class = f1_score(
        gold, predicted, labels=list(range(len(LABELS))), average=None, zero_division=0
    )
    return {
        "pairs": len(gold),
        "accuracy": float(accuracy_score(gold, predicted)) if len(gold) else 0.0,
        "macro_f1": float(
            f1_score(gold, predicted, labels=present, average="macro", zero_division=0)
        )
        if len(gold)
        else 0.0,
        "f1": {LABELS[i]: float(per_class[i]) for i in range(len(LABELS)) if i in present},
        "gold": {LABELS[i]: int(sum(1 for g in gold if g == i)) for i in present},
    }


def expected_calibration_error(probs: np.ndarray, gold: Sequence[int], bins: int = 10) -> float:
    """Return the expected calibration error of the top-class probability."""
    if len(gold) == 0:
        return 0.0
    confidence = probs.max(axis=1)
    correct = probs.argmax(axis=1) == np.asarray(gold)
    edges = np.linspace(0.0, 1.0, bins + 1)
    error = 0.0
    for low, high in itertools.pairwise(edges):
        inside = (confidence > low) & (confidence <= high)
        if inside.any():
            error += inside.mean() * abs(correct[inside].mean() - confidence[inside].mean())
    return float(error)
