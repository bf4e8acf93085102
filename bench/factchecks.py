"""The fact-check index at scale: storing, loading and matching N reviews (issue 50's goals).

    python -m bench.factchecks --reviews 200000 --queries 200
    python -m bench.factchecks --reviews 200000 --database-url postgresql://me@127.0.0.1:5432/fc
    python -m bench.factchecks --reviews 0 --embed 1000
    python -m bench.factchecks --reviews 0 --import 200000 --real 20000 --e5 2000

Synthetic reviews (claims of 8-20 words drawn from a 30,000-word vocabulary, two random unit
vectors each, one a model) are written through the real `FactCheckRepo` in batches, as an import
writes them after embedding; then the real `FactCheckMatcher` builds its snapshot (BM25 matrix,
both vector matrices) and matches `--queries` claims, each embedded by the real MiniLM and e5.
Printed as JSON: store writes per second, snapshot seconds, match p50/p95 ms a claim (the
embedding of the claim included), the process's resident memory before and after the snapshot.
`--embed N` times the two real embedders on N synthetic claims, batched as an import batches
them, so the cost of embedding a feed of any size can be read off it. `--database-url` runs it
on PostgreSQL (give an empty database). `--import N` times an import of N reviews in two
passes, e5 deferred (bench/factcheck_imports.py).
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

from bench.factcheck_imports import run_import
from pipeline.embedding.backends import build_embedder
from pipeline.factchecks.matching import FactCheckMatcher
from pipeline.records.factchecks import FactCheck
from storage import Store

QUERIES = [
    "Drinking bleach cures covid, share before they delete it",
    "5G towers are spreading the coronavirus",
    "Obama declared Islam the official religion of America",
    "McDonald's is getting rid of the dollar menu next year",
    "Beber lejía cura el covid-19",
    "Bill Gates wants to put microchips in vaccines",
]


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _unit(rng: np.random.Generator, n: int) -> npt.NDArray[np.float32]:
    v = rng.standard_normal((n, 384)).astype(np.float32)
    unit: npt.NDArray[np.float32] = v / np.linalg.norm(v, axis=1, keepdims=True)
    return unit


def fill(store: Store, reviews: int, models: list[str], seed: int = 0) -> float:
    """Write `reviews` synthetic reviews with a vector per model; return reviews per second."""
    rng, words = np.random.default_rng(seed), random.Random(seed)
    vocabulary = [f"w{n}" for n in range(30_000)]
    started, batch = time.perf_counter(), 2_000
    for start in range(0, reviews, batch):
        count = min(batch, reviews - start)
        vectors = {m: _unit(rng, count) for m in models}
        rows = []
        for i in range(count):
            claim = " ".join(words.choices(vocabulary, k=words.randint(8, 20)))
            review = FactCheck(
                url=f"https://factcheck.example/{start + i}",
                claim_reviewed=claim,
                publisher="Bench",
                language="en",
            )
            rows.append((review, f"h{start + i}", {m: vectors[m][i] for m in models}))
        store.fact_checks.upsert_fact_checks(rows)
    return reviews / max(time.perf_counter() - started, 1e-9)


def main() -> None:
    """Run the benchmark and print its figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reviews", type=int, default=200_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--embed", type=int, default=0)
    parser.add_argument("--database-url")
    parser.add_argument("--threads", type=int, default=1, help="each embedder's threads")
    parser.add_argument("--import", dest="imported", type=int, default=0, help="feed reviews")
    parser.add_argument("--real", type=int, default=20_000, help="of them, really embedded")
    parser.add_argument("--e5", type=int, default=2_000, help="reviews e5's pass is timed on")
    parser.add_argument("--feed", type=Path, help="a real feed to time the import on instead")
    args = parser.parse_args()
    embedders = [build_embedder(b, threads=args.threads) for b in ("onnx", "e5")]
    for e in embedders:
        e.embed_sync(["warm up"], role="query")
    out: dict[str, object] = {"reviews": args.reviews}
    if args.embed:
        texts = [
            f"Claim number {n}: the council voted to ban cars on {n % 28} May"
            for n in range(args.embed)
        ]
        for e in embedders:
            started = time.perf_counter()
            for i in range(0, len(texts), 256):
                e.embed_sync(texts[i : i + 256], role="query")
            out[f"embed_ms_per_review[{e.name}]"] = round(
                (time.perf_counter() - started) / len(texts) * 1000, 2
            )
    with tempfile.TemporaryDirectory() as tmp:
        store = Store.open(Path(tmp) / "factbot.db", database_url=args.database_url)
        if args.imported:
            minilm, e5 = embedders
            out.update(
                run_import(
                    store,
                    Path(tmp),
                    reviews=args.imported,
                    real=min(args.real, args.imported),
                    e5_reviews=args.e5,
                    minilm=minilm,
                    e5=e5,
                    feed=args.feed,
                )
            )
        if args.reviews:
            out["store_reviews_per_s"] = round(
                fill(store, args.reviews, [e.name for e in embedders])
            )
        if args.reviews or args.imported:  # after --import: e5's vectors are partial
            matcher = FactCheckMatcher(store.fact_checks, embedders)
            before = _rss_mb()
            started = time.perf_counter()
            matcher.match_sync(["warm up"], limit=5)
            out["snapshot_s"] = round(time.perf_counter() - started, 2)
            out["rss_before_snapshot_mb"] = round(before)
            out["rss_after_snapshot_mb"] = round(_rss_mb())
            times = []
            for n in range(args.queries):
                started = time.perf_counter()
                matcher.match_sync([QUERIES[n % len(QUERIES)] + f" {n}"], limit=5)
                times.append((time.perf_counter() - started) * 1000)
            if times:
                out["match_p50_ms"] = round(float(np.percentile(times, 50)), 1)
                out["match_p95_ms"] = round(float(np.percentile(times, 95)), 1)
        store.close()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
