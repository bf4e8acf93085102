"""Language identification on short posts: accuracy, `und` where it belongs, latency, memory.

`python -m bench.languages` reads the fixture of real-looking posts
(tests/fixtures/languages/posts.jsonl: sentences in 28 languages and variants, two-word posts
with and without the platform's language field, and the bad inputs that must be `und`), warms
a `LanguageIdentifier` once (lingua's models preloaded), then identifies every post `--rounds`
times, timing each call. It reports

- ``sentence_accuracy``: the share of sentence posts given their language;
- ``und_correct``: the share of posts that should be `und` and are (no language is invented);
- ``und_false``: posts given `und` that have a language;
- each miss, and p50/p95/max latency in milliseconds over every call, and ``p95_post_ms``:
  the 95th percentile over posts of each post's median time, which a busy machine (other jobs
  on its cores; ``load_average`` is reported) inflates far less than single calls;
- ``long_text``: the characters from which the trigram models decide (`--long-text`, 0: never);
- ``p95_cpu_ms``: the 95th percentile of each call's CPU time (the thread's own), the work
  a call does whatever the machine's load;
- ``added_rss_mb``: resident memory added by loading the models (read from /proc), and
  ``warm_seconds``, the one-time load.

Goals (issue 40): sentence accuracy >= 0.95, every `und` right, p95 <= 2 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.inputs.language import LONG_TEXT, UNDETERMINED, LanguageIdentifier

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "languages"
GOALS = {"sentence_accuracy": 0.95, "und_correct": 1.0, "p95_ms": 2.0}


def resident_mb() -> float:
    """Return this process's resident memory in MB (VmRSS), 0 where /proc is missing."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return 0.0
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def run(
    posts: Sequence[dict[str, Any]], *, rounds: int, low_accuracy: bool, long_text: int = LONG_TEXT
) -> dict[str, Any]:
    """Identify every post `rounds` times and return the figures."""
    before = resident_mb()
    identifier = LanguageIdentifier(low_accuracy=low_accuracy, long_text=long_text)
    started = time.perf_counter()
    identifier.warm()
    warm = time.perf_counter() - started
    added = resident_mb() - before
    per_post: list[list[float]] = [[] for _ in posts]
    cpu: list[float] = []  # this thread's CPU time per call: the work, without waiting for a core
    found: list[str] = []
    for n in range(rounds):
        for i, post in enumerate(posts):
            c0, t0 = time.thread_time(), time.perf_counter()
            code = identifier.identify(post["text"], hint=post["hint"]).code
            per_post[i].append((time.perf_counter() - t0) * 1000)
            cpu.append((time.thread_time() - c0) * 1000)
            if n == 0:
                found.append(code)
    times = [t for ts in per_post for t in ts]
    sentences = [(p, f) for p, f in zip(posts, found, strict=True) if p["kind"] == "sentence"]
    should_be_und = [(p, f) for p, f in zip(posts, found, strict=True) if p["expected"] == "und"]
    has_language = [(p, f) for p, f in zip(posts, found, strict=True) if p["expected"] != "und"]
    latency = np.asarray(times)
    figures = {
        "mode": "low" if low_accuracy else "high",
        "long_text": long_text,
        "posts": len(posts),
        "languages": sorted({p["expected"] for p in posts} - {UNDETERMINED}),
        "sentence_accuracy": round(
            sum(p["expected"] == f for p, f in sentences) / len(sentences), 3
        ),
        "all_accuracy": round(
            sum(p["expected"] == f for p, f in zip(posts, found, strict=True)) / len(posts), 3
        ),
        "und_correct": round(
            sum(f == UNDETERMINED for _, f in should_be_und) / len(should_be_und), 3
        ),
        "und_false": sum(f == UNDETERMINED for _, f in has_language),
        "misses": [
            {"text": p["text"][:60], "expected": p["expected"], "found": f}
            for p, f in zip(posts, found, strict=True)
            if p["expected"] != f
        ],
        "calls": len(times),
        "p50_ms": round(float(np.percentile(latency, 50)), 3),
        "p95_ms": round(float(np.percentile(latency, 95)), 3),
        "max_ms": round(float(latency.max()), 3),
        "p95_cpu_ms": round(float(np.percentile(cpu, 95)), 3),
        "p95_post_ms": round(float(np.percentile([np.median(ts) for ts in per_post], 95)), 3),
        "load_average": [round(x, 1) for x in os.getloadavg()],
        "warm_seconds": round(warm, 2),
        "added_rss_mb": round(added, 1),
    }
    figures["goals_met"] = {
        "sentence_accuracy": figures["sentence_accuracy"] >= GOALS["sentence_accuracy"],
        "und_correct": figures["und_correct"] >= GOALS["und_correct"],
        "p95_ms": figures["p95_ms"] <= GOALS["p95_ms"],
        "p95_post_ms": figures["p95_post_ms"] <= GOALS["p95_ms"],
    }
    return figures


def main(argv: Sequence[str] | None = None) -> None:
    """Print the figures as JSON."""
    parser = argparse.ArgumentParser(description="language identification on short posts")
    parser.add_argument("--fixture", type=Path, default=FIXTURE / "posts.jsonl")
    parser.add_argument("--rounds", type=int, default=20, help="passes over the fixture")
    parser.add_argument("--low-accuracy", action="store_true", help="lingua's trigram-only mode")
    parser.add_argument(
        "--long-text",
        type=int,
        default=LONG_TEXT,
        help="characters from which the trigram models decide in the high mode (0: never)",
    )
    args = parser.parse_args(argv)
    posts = [json.loads(line) for line in args.fixture.open(encoding="utf-8") if line.strip()]
    print(
        json.dumps(
            run(
                posts, rounds=args.rounds, low_accuracy=args.low_accuracy, long_text=args.long_text
            ),
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
