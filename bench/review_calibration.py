"""Calibrate the review-match threshold on public data (`python -m bench.review_calibration`).

The no-model judge, and the fact-check deferral of the model path, adopt a ClaimReview's rating
when its reviewed claim says what the post's claim says: cosine at least
`FACTBOT_RETRIEVAL__REVIEW_MATCH_THRESHOLD` and `same_claim` (same negation polarity, no number of
the post's claim missing). Adopting the rating of another claim's fact-check decides a verdict
wrongly, so the threshold is the lowest whose false-match rate on the calibration split is at most
`MAX_FALSE_MATCH`.

Pairs (CoAID, built as `bench.reuse_calibration` builds them):

- positives: a fact-checker's wording of a claim (`claim_title`) against the headline of an
  article that spread it (`title`): what a post says and what its fact-check reviewed. Kept
  only when the two share half the shorter one's content words (scraped titles are often not
  the story), so recall on rewordings that share few words is lower than reported;
- hard negatives: every fact-checked claim (CoAID's "fake" rows) against the nearest *other*
  one of its split that passes `same_claim` (all of CoAID is COVID-19: same topic, another
  claim), and the same for AVeriTeC dev claims. A neighbour that shares half the shorter one's
  content words is skipped: by the positives' own test it is the same claim (two fact-checkers'
  wordings of it), so the next nearest is taken. A negative stands for a post
  whose retrieved evidence holds a fact-check of a neighbouring claim.

Split: by sha256 of the normalised claim (`split_of`); even calibrates, odd is held out and
reported with 95% Wilson intervals.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from bench.reuse_calibration import (
    DATA,
    GRID,
    Pair,
    _shares_words,
    averitec_items,
    coaid_items,
    figures,
    split_of,
)
from bots.runtime.checking.reuse import normalise
from pipeline.judge.claimreview import same_claim

MAX_FALSE_MATCH = 0.005  # at most 1 in 200 posts beside another claim's fact-check adopts it


def nearest_negatives(
    source: str, items: Sequence[tuple[str, str]], vectors: npt.NDArray[np.float32]
) -> list[tuple[Pair, float]]:
    """Pair every item with its most similar other item of its split that passes same_claim."""
    splits = np.array([split_of(key) for key, _ in items])
    keys = np.array([key for key, _ in items])
    sims = vectors @ vectors.T
    out = []
    for i, (key, text) in enumerate(items):
        row = np.where((splits == splits[i]) & (keys != key), sims[i], -np.inf)
        for j in np.argsort(-row):
            if not np.isfinite(row[j]):
                break
            other = items[int(j)][1]
            if _shares_words(text, other):  # by the positives' own test, the same claim
                continue
            if same_claim(text, other):
                out.append((Pair(source, str(splits[i]), text, other, False), row[j]))
                break
    return [(p, float(s)) for p, s in out]


def _fact_checked(data: Path) -> set[str]:
    """Return the normalised claims CoAID has a fact-check of (its "fake" rows)."""
    with (data / "corpus" / "coaid" / "news.jsonl").open(encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    return {normalise(r["claim_title"].strip()) for r in rows if r["label"] == "fake"}


def choose(scored: Sequence[tuple[Pair, float]]) -> float:
    """Return the lowest grid threshold with calibration false-match rate <= MAX_FALSE_MATCH."""
    negatives = [s for p, s in scored if not p.same]
    for t in GRID:
        if sum(1 for s in negatives if s >= t) <= MAX_FALSE_MATCH * len(negatives):
            return t
    return GRID[-1]


def calibrate(data: Path, embed: Any) -> dict[str, Any]:
    """Build the pairs, embed them, choose the threshold and report both splits."""
    started = time.perf_counter()
    pairs, items = coaid_items(data)
    positives = [p for p in pairs if p.source == "coaid-claim"]
    coaid_claims = [(key, text) for key, text in items if key in _fact_checked(data)]
    negative_sets = {"coaid-nearest": coaid_claims, "averitec-nearest": averitec_items(data)}
    texts = {t for p in positives for t in (p.a, p.b)}
    for items in negative_sets.values():
        texts.update(text for _, text in items)
    unique = sorted(texts)
    vectors = np.asarray(embed(unique), dtype=np.float32)
    at = {text: vectors[i] for i, text in enumerate(unique)}
    # the post's claim is the article's headline (b), the reviewed claim the fact-checker's (a)
    scored: list[tuple[Pair, float]] = [
        (p, float(at[p.a] @ at[p.b]) if same_claim(p.b, p.a) else -1.0) for p in positives
    ]
    for source, items in negative_sets.items():
        matrix = np.stack([at[text] for _, text in items])
        scored.extend(nearest_negatives(source, items, matrix))
    calibration = [(p, s) for p, s in scored if p.split == "calibrate"]
    held_out = [(p, s) for p, s in scored if p.split == "held-out"]
    threshold = choose(calibration)
    hardest = sorted((r for r in held_out if not r[0].same), key=lambda r: -r[1])[:5]
    return {
        "rule": f"lowest threshold with calibration false-match rate <= {MAX_FALSE_MATCH}",
        "threshold": threshold,
        "calibrate": figures(calibration, threshold),
        "held_out": figures(held_out, threshold),
        "held_out_curve": {
            str(t): {
                k: v
                for k, v in figures(held_out, t).items()
                if k in ("precision", "recall", "false_reuse_rate")
            }
            for t in (0.65, 0.70, 0.75, 0.80, 0.85, 0.90)
        },
        "hardest_held_out_negatives": [[round(s, 3), p.a[:100], p.b[:100]] for p, s in hardest],
        "seconds": round(time.perf_counter() - started, 1),
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Print the calibration as JSON (`false_reuse_rate` here is the false-match rate)."""
    from bots.app.root import App
    from bots.settings import Settings

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=DATA, help="the shared data folder")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="factbot-reviews-") as tmp:
        app = App(Settings(data_dir=Path(tmp), log_level="WARNING"))
        try:
            embedder = app.embedder  # the service's (FACTBOT_EMBEDDING__BACKEND)
            # Claim against claim: both are queries to a model with roles (e5).
            result = calibrate(args.data, lambda texts: embedder.embed_sync(texts, role="query"))
            result["embedder"] = app.embedder.name
        finally:
            app.close()
    print(json.dumps(result, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
