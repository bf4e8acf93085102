"""Thresholds measured for each embedder, where its cosines are not all-MiniLM-L6-v2's.

Every cosine threshold in the settings was fitted on all-MiniLM-L6-v2 (the onnx and torch
backends). multilingual-e5-small scores unrelated sentences ~0.7 and paraphrases ~0.9, so each
threshold has its own value for it, measured on the same data and by the same rule as
MiniLM's (docs/results/2026-12-05-crosslingual.md has the figures):

- ``relevance``: the claim-passage cosine with the best passage F1 on the AVeriTeC dev claims
  outside the reported sample (400 claims, 989 passages; `factbot eval relevance
  --outside-sample 100 --seed 0`): 0.86 (MiniLM: 0.60).
- ``verifier_relevance``: the cosine that keeps the same share of claim-passage pairs on that
  part as MiniLM's fitted 0.20 keeps (10.6 %; 96 % of own passages under both): 0.785. The
  verifier's thresholds themselves read stance probabilities, not cosines, and are unchanged.
- ``near_duplicate``: `python -m bench.reuse_calibration --backend e5`, the same rule as MiniLM's
  0.97 (the lowest threshold with at most 0.5 % false reuse on the calibration split): 0.99;
  held out, precision 1.0, recall 0.30, false reuse 0 of 2,395 (MiniLM at 0.97: 0.975, 0.33,
  0.25 %).
- ``review_match``: `FACTBOT_EMBEDDING__BACKEND=e5 python -m bench.review_calibration`, the
  same rule as MiniLM's 0.84 (at most 0.5 % false matches on the calibration half): 0.95;
  held out, precision 1.0, recall 0.25, no false match of 342 (MiniLM at 0.84: 1.0, 0.23, 0).
  MiniLM's 0.84 on e5 would adopt a neighbouring claim's rating for 76 % of them.
- ``graph``: False: graph verification's node and action thresholds (RAV's 0.8 / 0.5) were
  never fitted, and on e5's scale nearly every node pair passes 0.8; its parser is English
  (spaCy's en_core_web_sm) anyway. Off unless FACTBOT_GRAPH__ENABLED is set.

The settings apply these where the operator has not set the threshold (bots/settings).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Calibration:
    """The thresholds one embedder was measured for."""

    relevance: float
    verifier_relevance: float
    near_duplicate: float
    review_match: float
    graph: bool


# Keyed by FACTBOT_EMBEDDING__BACKEND; backends not listed keep the settings' own defaults.
CALIBRATIONS: dict[str, Calibration] = {
    "e5": Calibration(
        relevance=0.86,
        verifier_relevance=0.785,
        near_duplicate=0.99,
        review_match=0.95,
        graph=False,
    ),
}
