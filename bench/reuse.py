"""Latency and memory of the reuse look-up over many stored checks (`python -m bench.reuse`).

For each size N a temporary database gets N fingerprints. Real texts (CoAID claim titles,
AVeriTeC dev claims, MUSE posts) are embedded once; the first rows carry their real keys and
vectors, further rows reuse those vectors with a little noise and get keys of their own, so the
vector search scans N distinct rows. A fresh `ReuseIndex` then answers three kinds of post, one
after another, each timed from the call to the answer:

- ``exact``: a stored text pasted again (hash look-ups only, no embedding);
- ``near``: a retweet of a stored text with a new link and hashtags (embedding + vector search);
- ``miss``: a text that is not stored (embedding + vector search, nothing found).

`ReuseIndex.warm()` loads the matrix from SQLite first (``cold_load_ms``); look-ups then read
only new rows. ``parts`` times the embedding and the scan of N vectors on their own. Peak memory
is tracemalloc's peak (numpy arrays included) while a fresh index loads and answers ten posts (a
separate pass: tracing slows allocation), and the maximum resident size (with the model).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import tempfile
import time
import tracemalloc
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from bench.reuse_calibration import DATA, averitec_items, coaid_items, muse_items
from bots.runtime.checking.reuse import ReuseIndex, normalise, post_print
from bots.settings import ReuseSettings
from pipeline.embedding.embedder import SentenceTransformerEmbedder
from pipeline.records.domain import Post, new_id
from pipeline.util.clock import SYSTEM
from storage import Store
from storage.reuse import Fingerprint

GOAL_MS = 50.0


def corpus(data: Path, limit: int) -> list[str]:
    """Return up to limit distinct real claim and post texts."""
    _, coaid = coaid_items(data)
    _, muse = muse_items(data)
    texts = [t for _, t in muse] + [t for _, t in averitec_items(data)] + [t for _, t in coaid]
    return list(dict.fromkeys(t for t in texts if normalise(t)))[:limit]


def percentile(values: Sequence[float], q: float) -> float:
    """Return the q-th percentile (0-100) of values, in the values' unit, rounded."""
    return round(float(np.percentile(np.asarray(values), q)), 2)


async def fill(
    store: Store,
    texts: Sequence[str],
    vectors: npt.NDArray[np.float32],
    n: int,
    model: str,
) -> None:
    """Store n fingerprints: real keys and vectors first, noisy copies after."""
    now = SYSTEM.now()
    rng = np.random.default_rng(0)
    rows = []
    for i in range(n):
        created = now - timedelta(hours=23 * i / max(n, 1))
        if i < len(texts):
            keys = await post_print(
                Post(id=str(i), platform="bench", platform_id=str(i), text=texts[i])
            )
            text_hash, claims_hash, numbers, vec = (
                keys.text_hash,
                keys.claims_hash,
                keys.numbers,
                vectors[i],
            )
        else:
            noise = np.asarray(rng.normal(0.0, 0.05, size=vectors.shape[1]), dtype=np.float32)
            noisy = vectors[i % len(texts)] + noise
            vec = noisy / np.linalg.norm(noisy)
            text_hash, claims_hash, numbers = f"t{i}", f"c{i}", frozenset()
        rows.append(
            Fingerprint(
                check_id=f"check{i}",
                platform="bench",
                platform_id=str(i),
                text_hash=text_hash,
                claims_hash=claims_hash,
                numbers=numbers,
                before=None,
                bound_at=created,
                created_at=created,
                model=model,
                embedding=vec,
            )
        )
    store.reuse.add_all(rows)


async def measure(
    n: int,
    *,
    texts: Sequence[str],
    vectors: npt.NDArray[np.float32],
    unseen: Sequence[str],
    embedder: SentenceTransformerEmbedder,
    queries: int,
) -> dict[str, Any]:
    """Fill a database with n fingerprints and time exact, near-duplicate and missing look-ups."""
    with tempfile.TemporaryDirectory() as tmp, Store.open(Path(tmp) / "reuse.db") as store:
        await fill(store, texts, vectors, n, embedder.name)
        index = ReuseIndex(store.reuse, embedder, ReuseSettings())
        real = texts[: min(n, len(texts))]
        # Spread the look-ups over the stored texts (a stride prime to their count).
        stored = [real[(i * 7919) % len(real)] for i in range(len(real))]
        started = time.perf_counter()
        loaded = index.warm()
        cold = (time.perf_counter() - started) * 1000
        kinds = {
            "exact": [stored[i % len(stored)] for i in range(queries)],
            "near": [
                f"RT @u{i}: {stored[i % len(stored)]} https://t.co/z{i} #viral #share"
                for i in range(queries)
            ],
            "miss": [unseen[i % len(unseen)] for i in range(queries)],
        }
        figures: dict[str, Any] = {"stored": n, "loaded": loaded, "cold_load_ms": round(cold, 1)}
        for kind, posts in kinds.items():
            times: list[float] = []
            reasons: dict[str, int] = {}
            for i, text in enumerate(posts):
                post = Post(id=new_id(), platform="bench-q", platform_id=f"{kind}{i}", text=text)
                started = time.perf_counter()
                hit = await index.find(post)
                times.append((time.perf_counter() - started) * 1000)
                reason = hit.reason if hit else "none"
                reasons[reason] = reasons.get(reason, 0) + 1
            figures[kind] = {
                "p50_ms": percentile(times, 50),
                "p95_ms": percentile(times, 95),
                "max_ms": round(max(times), 2),
                "answers": reasons,
            }
        figures["parts"] = await parts(index, embedder, kinds["miss"])
        # Memory in a separate pass: tracemalloc slows every allocation down.
        fresh = ReuseIndex(store.reuse, embedder, ReuseSettings())
        tracemalloc.start()
        fresh.warm()
        for text in kinds["miss"][:10]:
            await fresh.find(Post(id=new_id(), platform="bench-m", platform_id=text, text=text))
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        figures["traced_peak_mb"] = round(peak / 1e6, 1)
        figures["matrix_mb"] = round(fresh.loaded_bytes() / 1e6, 1)
        figures["within_goal"] = all(
            figures[k]["p95_ms"] <= GOAL_MS for k in ("exact", "near", "miss")
        )
        return figures


async def parts(
    index: ReuseIndex, embedder: SentenceTransformerEmbedder, texts: Sequence[str]
) -> dict[str, Any]:
    """Time the two costs of a look-up that embeds: the embedding and the scan of n vectors."""
    embed_ms: list[float] = []
    scan_ms: list[float] = []
    for text in texts:
        started = time.perf_counter()
        query = (await embedder.embed([text]))[0]
        embed_ms.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        now = SYSTEM.now()
        index.near_duplicate(query, numbers=frozenset(), need=now.timestamp(), now=now)
        scan_ms.append((time.perf_counter() - started) * 1000)
    return {
        "embed_p50_ms": percentile(embed_ms, 50),
        "embed_p95_ms": percentile(embed_ms, 95),
        "scan_p50_ms": percentile(scan_ms, 50),
        "scan_p95_ms": percentile(scan_ms, 95),
    }


async def run(
    sizes: Sequence[int],
    *,
    data: Path,
    queries: int,
    texts_limit: int,
    threads: int | None = None,
    embedder: SentenceTransformerEmbedder | None = None,
) -> dict[str, Any]:
    """Embed the corpus once and measure every size."""
    embedder = embedder or SentenceTransformerEmbedder(threads=threads)
    everything = corpus(data, texts_limit + texts_limit // 10)
    # Every 11th text is never stored, so misses come from the same mix of sources as hits.
    unseen = everything[::11]
    texts = [t for i, t in enumerate(everything) if i % 11]
    started = time.perf_counter()
    vectors = embedder.embed_sync(texts)
    embed_seconds = time.perf_counter() - started
    await embedder.embed(["warm up"])
    results = [
        await measure(
            n, texts=texts, vectors=vectors, unseen=unseen, embedder=embedder, queries=queries
        )
        for n in sizes
    ]
    return {
        "goal_ms": GOAL_MS,
        "embedder": embedder.name,
        "embedder_threads": threads,
        "real_texts": len(texts),
        "corpus_embed_seconds": round(embed_seconds, 1),
        "queries_per_kind": queries,
        "sizes": results,
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Print the figures as JSON."""
    parser = argparse.ArgumentParser(description="time ReuseIndex.find over N stored checks")
    parser.add_argument("--sizes", default="1000,10000,50000", help="comma-separated N")
    parser.add_argument("--queries", type=int, default=100, help="look-ups of each kind")
    parser.add_argument("--texts", type=int, default=2000, help="real texts to embed")
    parser.add_argument("--data", type=Path, default=DATA, help="the shared data folder")
    parser.add_argument("--threads", type=int, help="torch threads of the embedder")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    result = asyncio.run(
        run(
            sizes,
            data=args.data,
            queries=args.queries,
            texts_limit=args.texts,
            threads=args.threads,
        )
    )
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
