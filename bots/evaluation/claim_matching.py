"""`factbot eval claim-matching`: ranking and match-decision figures on posts with gold reviews.

Posts are JSON lines `{"id", "text", "gold": [fact-check URLs]}` (the CheckThat! 2A/2B shape).
Per post the matcher returns its ranked reviews and the decision on the first. The report:
- ranking: `map_at_1`, `map_at_5` (CheckThat!'s measure: average precision over the first five,
  divided by the number of gold reviews), `recall_at_5` (share of gold reviews in the first 5);
- the decision: `match_coverage` (posts with an accepted match), `match_precision` (accepted
  matches that are gold), and with `drop_gold` (the gold reviews were left out of the index, so
  every accepted match is wrong) `false_match_rate`;
- `verdict_agreement`: where the gold review has a rating factbot maps, the share of accepted
  gold matches... of accepted matches whose verdict equals the gold review's mapped label
  (null when no gold review has one);
- `errors` (posts the matcher failed on), latency p50/p95 per post, and 95 % intervals:
  percentile bootstrap over posts for the means, Wilson intervals for the shares.

Failure policy: a post the matcher raises on is counted in `errors` and scored as no answer.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.errors import InputError
from pipeline.records.domain import Label
from pipeline.records.factchecks import FactCheckMatch

BOOTSTRAP_RESAMPLES = 2000


@dataclass(frozen=True)
class MatchingPost:
    """One evaluation post and the URLs of the fact-checks it repeats."""

    id: str
    text: str
    gold: tuple[str, ...]


@dataclass(frozen=True)
class MatchingOutcome:
    """What the matcher answered for one post."""

    post: MatchingPost
    ranked: tuple[FactCheckMatch, ...] = ()
    seconds: float = 0.0
    error: str | None = None
    gold_labels: tuple[Label | None, ...] = field(default_factory=tuple)


def read_posts(path: Path) -> list[MatchingPost]:
    """Return the posts of a JSON-lines file; a line without id, text or gold is an InputError."""
    posts: list[MatchingPost] = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                gold = row["gold"]
                if isinstance(gold, str):
                    gold = [gold]
                posts.append(MatchingPost(str(row["id"]), str(row["text"]), tuple(map(str, gold))))
            except (ValueError, KeyError, TypeError) as exc:
                raise InputError(
                    f"{path}:{number}: not a post with id, text and gold ({exc})"
                ) from exc
    return posts


def _average_precision(urls: Sequence[str], gold: set[str], k: int) -> float:
    hits, total = 0, 0.0
    for rank, url in enumerate(urls[:k], start=1):
        if url in gold:
            hits += 1
            total += hits / rank
    return total / len(gold) if gold else 0.0


def wilson(part: int, whole: int, z: float = 1.96) -> tuple[float, float] | None:
    """Return the Wilson 95 % interval of part / whole (None when whole is 0)."""
    if not whole:
        return None
    p = part / whole
    centre = (p + z * z / (2 * whole)) / (1 + z * z / whole)
    half = z * math.sqrt(p * (1 - p) / whole + z * z / (4 * whole * whole)) / (1 + z * z / whole)
    return (round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4))


def _bootstrap(values: np.ndarray, seed: int) -> tuple[float, float] | None:
    if not len(values):
        return None
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), (BOOTSTRAP_RESAMPLES, len(values)))].mean(axis=1)
    return (round(float(np.quantile(means, 0.025)), 4), round(float(np.quantile(means, 0.975)), 4))


def score(
    outcomes: Sequence[MatchingOutcome],
    *,
    drop_gold: bool,
    gold_labels: Mapping[str, Label | None],
    seed: int = 0,
) -> dict[str, Any]:
    """Return the report's figures for outcomes (see the module docstring)."""
    ap1, ap5, rec5 = [], [], []
    accepted = correct = agree = rated = 0
    latencies = [o.seconds * 1000 for o in outcomes if o.error is None]
    for o in outcomes:
        gold = set(o.post.gold)
        urls = [m.fact_check.url for m in o.ranked]
        ap1.append(_average_precision(urls, gold, 1))
        ap5.append(_average_precision(urls, gold, 5))
        rec5.append(len(gold & set(urls[:5])) / len(gold) if gold else 0.0)
        head = o.ranked[0] if o.ranked else None
        if head is None or not head.accepted:
            continue
        accepted += 1
        if head.fact_check.url in gold:
            correct += 1
        wanted = {gold_labels.get(u) for u in o.post.gold} - {None}
        if wanted:
            rated += 1
            agree += head.fact_check.label in wanted
    n = len(outcomes)
    report: dict[str, Any] = {
        "posts": n,
        "map_at_1": round(float(np.mean(ap1)), 4) if n else None,
        "map_at_5": round(float(np.mean(ap5)), 4) if n else None,
        "recall_at_5": round(float(np.mean(rec5)), 4) if n else None,
        "match_coverage": round(accepted / n, 4) if n else None,
        "match_precision": None if drop_gold or not accepted else round(correct / accepted, 4),
        "false_match_rate": round(accepted / n, 4) if drop_gold and n else None,
        "verdict_agreement": round(agree / rated, 4) if rated else None,
        "verdict_agreement_posts": rated,
        "errors": sum(1 for o in outcomes if o.error is not None),
        "latency_p50_ms": round(float(np.percentile(latencies, 50)), 1) if latencies else None,
        "latency_p95_ms": round(float(np.percentile(latencies, 95)), 1) if latencies else None,
        "intervals": {
            "map_at_1": _bootstrap(np.asarray(ap1), seed),
            "map_at_5": _bootstrap(np.asarray(ap5), seed),
            "recall_at_5": _bootstrap(np.asarray(rec5), seed),
            "match_coverage": wilson(accepted, n),
            "match_precision": None if drop_gold else wilson(correct, accepted),
            "false_match_rate": wilson(accepted, n) if drop_gold else None,
            "verdict_agreement": wilson(agree, rated),
        },
        "drop_gold": drop_gold,
    }
    return report


def gold_urls(posts: Iterable[MatchingPost]) -> set[str]:
    """Return every gold URL of posts."""
    return {url for p in posts for url in p.gold}
