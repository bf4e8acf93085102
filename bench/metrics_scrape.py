"""What a `/metrics` scrape costs on a large database: `python -m bench.metrics_scrape`.

Fills a fresh database with N checks and M jobs (rows shaped like real ones: 12 stage timings,
3 model stages, 3 web search providers, one failing), then times the collector that
`GET /metrics` runs: the first scrape of a process (it sums every stored check) and later ones
(nothing new: the jobs, the reply ledger and the cursor's empty range). Wall time and the
process's CPU time are printed; on a loaded machine the CPU time is the comparable figure.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest

from bots.api.metrics import StoreCollector
from pipeline.util.clock import SYSTEM
from storage import Store

STAGES = (
    "claims", "queries", "retrieval", "relevance", "ranking", "judgement",
    "graph", "correction", "reachability", "images", "quotes", "refine",
)  # fmt: skip
AT = "2026-12-01T00:00:00+00:00"


def fill(store: Store, checks: int, jobs: int) -> None:
    """Insert `checks` checks of one post and `jobs` jobs (1 in 100 still queued)."""
    timings = json.dumps([[s, 0.123] for s in STAGES])
    usage = json.dumps(
        [
            {"stage": s, "calls": 1, "input_tokens": 800, "output_tokens": 60, "cost_usd": 2e-4}
            for s in ("claims", "extraction", "judge")
        ]
    )
    providers = [
        {"provider": p, "reachable": p != "brave", "reason": "", "seconds": 0.1}
        for p in ("searxng", "brave", "wikipedia")
    ]
    search = json.dumps({"live": "partial", "providers": providers, "reverse_image": []})
    conn = store.db.conn
    with conn:
        conn.execute(
            "INSERT INTO posts (id, platform, platform_id, text) VALUES ('p', 'api', 'p', 'x')"
        )
        conn.executemany(
            "INSERT INTO checks (id, post_id, created_at, verdict, judge, correction, refs, "
            "timings, usage, search_status) VALUES (?,?,?,?,?,?,?,?,?,?)",
            [
                (
                    f"c{i}",
                    "p",
                    AT,
                    ("false", "accurate", "misleading")[i % 3],
                    ("model", "no-model")[i % 2],
                    "text",
                    "[]",
                    timings,
                    usage,
                    search,
                )
                for i in range(checks)
            ],
        )
        conn.executemany(
            "INSERT INTO jobs (id, kind, payload, status, attempts, created_at, updated_at) "
            "VALUES (?,?,?,?,?,?,?)",
            [
                (
                    f"j{i}",
                    ("check", "reply:slack", "reply:discord")[i % 3],
                    "{}",
                    "done" if i % 100 else "queued",
                    1,
                    AT,
                    AT,
                )
                for i in range(jobs)
            ],
        )


def main() -> None:
    """Fill a database, then time three scrapes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checks", type=int, default=100_000)
    parser.add_argument("--jobs", type=int, default=200_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, Store.open(Path(folder) / "f.db") as store:
        fill(store, args.checks, args.jobs)
        registry = CollectorRegistry(auto_describe=False)
        registry.register(
            StoreCollector(lambda: store, clock=SYSTEM, reuse=lambda: (0, {}), alive_within=15)
        )
        for label in ("first scrape", "later scrape", "later scrape"):
            wall, cpu = time.perf_counter(), time.process_time()
            body = generate_latest(registry)
            print(
                f"{label}: {time.perf_counter() - wall:.3f} s wall, "
                f"{time.process_time() - cpu:.3f} s CPU, {len(body)} bytes "
                f"({args.checks} checks, {args.jobs} jobs)"
            )


if __name__ == "__main__":
    main()
