"""`factbot eval relevance` reports where each claim's own evidence ranks, whatever the scale."""

from __future__ import annotations

import numpy as np

from bots.evaluation.averitec import relevance_calibration


def _unit(*rows: list[float]) -> np.ndarray:
    m = np.array(rows, dtype=np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_ranks_count_the_best_own_passage_and_skip_claims_without_evidence() -> None:
    claims = _unit([1, 0, 0], [0, 1, 0], [0, 0, 1])
    # claim 0: its own passage first; claim 1: another claim's passage beats its own; claim 2:
    # no passage of its own, left out of the ranking.
    passages = _unit([1, 0.1, 0], [0.2, 1, 0], [0, 0.5, 0.3])
    owners = np.array([0, 0, 1])
    report = relevance_calibration(claims, passages, owners)
    ranking = report["ranking"]
    assert ranking["claims"] == 2
    assert ranking["recall_at_1"] == 0.5 and ranking["recall_at_5"] == 1.0
    assert ranking["mrr"] == 0.75
    grid = [row["threshold"] for row in report["thresholds"]]
    assert grid[0] == 0.2 and grid[-1] == 0.95 and len(grid) == 76


def test_a_shift_of_every_cosine_leaves_the_ranking_alone() -> None:
    rng = np.random.default_rng(0)
    claims, passages = rng.normal(size=(5, 8)), rng.normal(size=(12, 8))
    owners = np.arange(12) % 5
    plain = relevance_calibration(claims, passages, owners)["ranking"]
    # One more column, constant in each matrix, adds the same amount to every score of a claim
    # (3 x 1): the ranks within its row do not change.
    shifted = relevance_calibration(
        np.hstack([claims, np.full((5, 1), 3.0)]), np.hstack([passages, np.ones((12, 1))]), owners
    )["ranking"]
    assert plain == shifted
