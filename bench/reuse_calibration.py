"""Calibrate the near-duplicate threshold of the reuse path on public data (`python -m
bench.reuse_calibration`).

A near duplicate must be the same claim reworded or re-shared, never another claim on the same
topic, so the pairs are:

Positives (the same claim, worded differently; pairs equal after `normalise` are left out, the
exact keys already catch them):

- ``coaid-headline``: CoAID real-news rows, the headline as listed (`claim_title`) against the
  page's own title (`title`): the same story re-published with an edited headline.
- ``coaid-claim``: CoAID fake-news rows, the fact-checker's wording of the claim (`claim_title`)
  against the headline of the article that spread it (`title`).
- Both CoAID kinds are kept only when the two share at least half of the shorter one's content
  words (`pipeline.util.text.keywords`): many scraped titles are not the story at all ("Access
  denied | www.webmd.com ...", "CNN.com - Transcripts"). The filter is lexical, so it does not
  favour the embedding being calibrated, but it does leave out rewordings with few shared words,
  so recall on paraphrases that share little vocabulary is lower than reported.
- ``muse-reshare``: each of MUSE's 247 real X posts against three re-shares of it: a quote-share
  with a comment in front, the first three quarters of its words with an ellipsis, and a
  retweet with a new link and hashtags.

Hard negatives (a different claim on the same topic): for every CoAID `claim_title` (all of it is
COVID-19 news), AVeriTeC dev claim and MUSE post, the nearest other item of the same data set and
split by cosine whose numbers agree (`numbers_agree`, as the index requires), i.e. what the index
would return when no copy is stored. Items with the same normalised text are the same claim and
never paired as negatives. A positive counts as reused only when its numbers agree too.

Split: by sha256 of the group key (the normalised CoAID claim title, the AVeriTeC claim, the
MUSE tweet id), even first byte calibrates, odd is held out; negatives are searched within a
split. The threshold is the lowest on a 0.01 grid whose false-reuse rate on the calibration
negatives is at most `MAX_FALSE_REUSE`; the held-out split reports precision, recall and the
false-reuse rate with 95% Wilson intervals.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import hashlib
import json
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from bots.runtime.checking.reuse import (
    EMBED_CHARS,
    PostPrint,
    normalise,
    numbers_agree,
    numbers_in,
    post_print,
)
from pipeline.embedding.backends import build_embedder
from pipeline.embedding.embedder import LocalEmbedder
from pipeline.records.domain import Post
from pipeline.util.text import clean_post_text, keywords

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
MAX_FALSE_REUSE = 0.005  # at most 1 in 200 posts without a stored copy gets a wrong answer
GRID = [round(0.50 + 0.01 * i, 2) for i in range(50)]
COMMENTS = ("This needs to be seen.", "Is this true??", "Wow.", "Everyone should read this:")


@dataclass(frozen=True)
class Pair:
    """Two texts and whether they carry the same claim."""

    source: str
    split: str  # "calibrate" or "held-out"
    a: str
    b: str
    same: bool


def split_of(key: str) -> str:
    """Return the split of a group key (stable across runs and machines)."""
    return "calibrate" if hashlib.sha256(key.encode()).digest()[0] % 2 == 0 else "held-out"


def embed_text(text: str) -> str:
    """Return the text the reuse index embeds for a post."""
    return clean_post_text(text)[:EMBED_CHARS]


def _shares_words(a: str, b: str) -> bool:
    ka, kb = set(keywords(a, limit=64)), set(keywords(b, limit=64))
    return bool(ka and kb) and len(ka & kb) / min(len(ka), len(kb)) >= 0.5


def coaid_items(data: Path) -> tuple[list[Pair], list[tuple[str, str]]]:
    """Return CoAID positive pairs and (group key, claim title) items for negatives."""
    pairs: list[Pair] = []
    items: dict[str, str] = {}
    with (data / "corpus" / "coaid" / "news.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            claim, title = row["claim_title"].strip(), row["title"].strip().strip('"').strip()
            key = normalise(claim)
            if not key:
                continue
            items.setdefault(key, claim)
            if not normalise(title) or normalise(title) == key:
                continue
            # Scraped titles are often not the story ("Access denied | ...", "CNN.com -
            # Transcripts"): only titles sharing half the content words are positives.
            if not _shares_words(claim, title):
                continue
            if row["label"] == "fake":
                pairs.append(Pair("coaid-claim", split_of(key), claim, title, True))
            elif row["type"] == "article":
                pairs.append(Pair("coaid-headline", split_of(key), claim, title, True))
    return pairs, list(items.items())


def reshares(text: str, n: int) -> list[str]:
    """Return three re-shares of a post: quote-share, truncation and retweet with tags."""
    tokens = text.split()
    cut = " ".join(tokens[: max(3, math.ceil(len(tokens) * 0.75))]) + "…"
    return [
        f"{COMMENTS[n % len(COMMENTS)]} {text}",
        cut,
        f"RT @user{n}: {text} https://t.co/x{n} #viral #share",
    ]


def muse_items(data: Path) -> tuple[list[Pair], list[tuple[str, str]]]:
    """Return MUSE re-share pairs and (tweet id, text) items for negatives."""
    posts: dict[str, str] = {}
    with (data / "eval" / "muse" / "posts.csv").open(encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            posts.setdefault(row["post_tweet_id"], row["post_text"])
    pairs = []
    for n, (tweet, text) in enumerate(posts.items()):
        for variant in reshares(text, n):
            if normalise(variant) != normalise(text):
                pairs.append(Pair("muse-reshare", split_of(tweet), text, variant, True))
    return pairs, [(normalise(text), text) for text in posts.values()]


def averitec_items(data: Path) -> list[tuple[str, str]]:
    """Return (normalised claim, claim) items of AVeriTeC dev for negatives."""
    claims = json.loads((data / "eval" / "averitec" / "dev.json").read_text(encoding="utf-8"))
    return list(
        {normalise(c["claim"]): c["claim"] for c in claims if normalise(c["claim"])}.items()
    )


def nearest_negatives(
    source: str, items: Sequence[tuple[str, str]], vectors: npt.NDArray[np.float32]
) -> list[tuple[Pair, float]]:
    """Pair every item with its most similar other item of the same split; return with cosines."""
    splits = np.array([split_of(key) for key, _ in items])
    keys = np.array([key for key, _ in items])
    numbers = [numbers_in(key) for key, _ in items]
    sims = vectors @ vectors.T
    out = []
    for i, (key, text) in enumerate(items):
        row = np.where((splits == splits[i]) & (keys != key), sims[i], -np.inf)
        for j in np.argsort(-row):
            if numbers_agree(numbers[i], numbers[j]) or not np.isfinite(row[j]):
                break
        pair = Pair(source, str(splits[i]), text, items[int(j)][1], False)
        out.append((pair, float(row[j])))
    return out


def wilson(successes: int, total: int, z: float = 1.96) -> tuple[float, float]:
    """Return the 95% Wilson score interval of a proportion."""
    if total == 0:
        return (0.0, 1.0)
    p = successes / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / (1 + z * z / total)
    return (round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4))


def exact_keys(texts: Iterable[str]) -> dict[str, PostPrint]:
    """Return the reuse keys (text and claims hashes) of each text, as `ReuseIndex` has them."""

    async def run(unique: list[str]) -> list[PostPrint]:
        return [
            await post_print(Post(id=str(n), platform="bench", platform_id=str(n), text=t))
            for n, t in enumerate(unique)
        ]

    unique = sorted(set(texts))
    return dict(zip(unique, asyncio.run(run(unique)), strict=True))


def end_to_end(
    scored: Iterable[tuple[Pair, float]], threshold: float, keys: dict[str, PostPrint]
) -> dict[str, Any]:
    """Return how often a pair is reused by any reason (same text or claims, or near duplicate)."""
    found = {True: [0, 0], False: [0, 0]}
    for p, s in scored:
        a, b = keys[p.a], keys[p.b]
        exact = (a.text_hash is not None and a.text_hash == b.text_hash) or (
            a.claims_hash is not None and a.claims_hash == b.claims_hash
        )
        found[p.same][0] += int(exact or s >= threshold)
        found[p.same][1] += 1
    (tp, pos), (fp, neg) = found[True], found[False]
    return {
        "recall": round(tp / pos, 4) if pos else None,
        "recall_ci": wilson(tp, pos),
        "false_reuse_rate": round(fp / neg, 4) if neg else None,
        "false_reuse_ci": wilson(fp, neg),
    }


def figures(scored: Iterable[tuple[Pair, float]], threshold: float) -> dict[str, Any]:
    """Return precision, recall and false-reuse rate (with Wilson intervals) at a threshold."""
    rows = list(scored)
    tp = sum(1 for p, s in rows if p.same and s >= threshold)
    fn = sum(1 for p, s in rows if p.same and s < threshold)
    fp = sum(1 for p, s in rows if not p.same and s >= threshold)
    tn = sum(1 for p, s in rows if not p.same and s < threshold)
    by_source: dict[str, dict[str, int]] = {}
    for p, s in rows:
        entry = by_source.setdefault(p.source, {"pairs": 0, "reused": 0})
        entry["pairs"] += 1
        entry["reused"] += int(s >= threshold)
    return {
        "positives": tp + fn,
        "negatives": fp + tn,
        "precision": round(tp / (tp + fp), 4) if tp + fp else None,
        "precision_ci": wilson(tp, tp + fp),
        "recall": round(tp / (tp + fn), 4) if tp + fn else None,
        "recall_ci": wilson(tp, tp + fn),
        "false_reuse_rate": round(fp / (fp + tn), 4) if fp + tn else None,
        "false_reuse_ci": wilson(fp, fp + tn),
        "by_source": by_source,
    }


def choose(scored: Sequence[tuple[Pair, float]]) -> float:
    """Return the lowest grid threshold with calibration false-reuse rate <= MAX_FALSE_REUSE."""
    negatives = [s for p, s in scored if not p.same]
    for t in GRID:
        if sum(1 for s in negatives if s >= t) <= MAX_FALSE_REUSE * len(negatives):
            return t
    return GRID[-1]


def _agree(pair: Pair) -> bool:
    return numbers_agree(numbers_in(normalise(pair.a)), numbers_in(normalise(pair.b)))


def _embed(
    texts: Sequence[str], embedder: LocalEmbedder, cache: Path | None
) -> npt.NDArray[np.float32]:
    """Embed texts, reading and writing an .npz cache of earlier runs when given one."""
    known: dict[str, npt.NDArray[np.float32]] = {}
    if cache is not None and cache.exists():
        with np.load(cache) as saved:
            known = dict(zip(saved["texts"].tolist(), saved["vectors"], strict=True))
    missing = [t for t in texts if t not in known]
    if missing:
        # Post against post: both are queries to a model with roles (e5).
        known.update(zip(missing, embedder.embed_sync(missing, role="query"), strict=True))
        if cache is not None:
            np.savez(cache, texts=np.array(list(known)), vectors=np.stack(list(known.values())))
    return np.stack([known[t] for t in texts])


def calibrate(data: Path, *, embedder: LocalEmbedder, cache: Path | None = None) -> dict[str, Any]:
    """Build the pairs, embed them, choose the threshold and report both splits."""
    started = time.perf_counter()
    coaid_pairs, coaid_negs = coaid_items(data)
    muse_pairs, muse_negs = muse_items(data)
    negative_sets = {
        "coaid-nearest": coaid_negs,
        "averitec-nearest": averitec_items(data),
        "muse-nearest": muse_negs,
    }
    positives = coaid_pairs + muse_pairs
    texts = sorted({embed_text(t) for p in positives for t in (p.a, p.b)})
    for items in negative_sets.values():
        texts.extend(embed_text(text) for _, text in items)
    unique = sorted(set(texts))
    vectors = _embed(unique, embedder, cache)
    at = {text: vectors[i] for i, text in enumerate(unique)}
    scored: list[tuple[Pair, float]] = [
        (p, float(at[embed_text(p.a)] @ at[embed_text(p.b)]) if _agree(p) else -1.0)
        for p in positives
    ]
    for source, items in negative_sets.items():
        matrix = np.stack([at[embed_text(text)] for _, text in items])
        scored.extend(nearest_negatives(source, items, matrix))
    calibration = [(p, s) for p, s in scored if p.split == "calibrate"]
    held_out = [(p, s) for p, s in scored if p.split == "held-out"]
    threshold = choose(calibration)
    hardest = sorted((r for r in held_out if not r[0].same), key=lambda r: -r[1])[:5]
    missed = sorted((r for r in held_out if r[0].same), key=lambda r: r[1])[:5]
    return {
        "embedder": embedder.name,
        "rule": f"lowest threshold with calibration false-reuse rate <= {MAX_FALSE_REUSE}",
        "threshold": threshold,
        "calibrate": figures(calibration, threshold),
        "held_out": figures(held_out, threshold),
        "held_out_any_reason": end_to_end(
            held_out, threshold, exact_keys(t for p, _ in held_out for t in (p.a, p.b))
        ),
        "held_out_curve": {
            str(t): {
                k: v
                for k, v in figures(held_out, t).items()
                if k in ("precision", "recall", "false_reuse_rate")
            }
            for t in (0.80, 0.85, 0.88, 0.90, 0.92, 0.95)
        },
        "hardest_held_out_negatives": [[round(s, 3), p.a[:100], p.b[:100]] for p, s in hardest],
        "weakest_held_out_positives": [[round(s, 3), p.a[:100], p.b[:100]] for p, s in missed],
        "seconds": round(time.perf_counter() - started, 1),
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Print the calibration as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=DATA, help="the shared data folder")
    parser.add_argument("--cache", type=Path, help="an .npz file of embeddings kept between runs")
    parser.add_argument(
        "--backend",
        choices=("torch", "onnx", "e5"),
        default="torch",
        help="embedding backend (torch: the model the threshold was first calibrated on)",
    )
    args = parser.parse_args(argv)
    embedder = build_embedder(args.backend)
    result = calibrate(args.data, embedder=embedder, cache=args.cache)
    print(json.dumps(result, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
