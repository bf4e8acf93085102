"""Event-loop lag while the server's workers drain queued checks (issue 38's baseline).

`factbot serve` runs its worker pool in the API's event loop, and storage calls are synchronous:
every claim, heartbeat, stage event and completion holds the loop while the database answers.
This queues `--jobs` checks (a post and a job each, as the API stores them), then drains them
with the real `WorkerPool` (`--concurrency` slots; the handler waits `--latency` seconds in
place of the pipeline) while a ticker asks the loop for a wake-up every `--tick` seconds and
records how late it came. Printed as JSON: lag p50 / p99 / max in ms, wake-ups, checks per
second. `--database-url` runs it on PostgreSQL (a fresh database is not made: give an empty
one, or a throwaway server's).

    python -m bench.loop_lag --jobs 500
    python -m bench.loop_lag --jobs 500 --database-url postgresql://me@127.0.0.1:5432/lag
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from bots.runtime.service import stop_when_idle, worker_config
from bots.runtime.workers.pool import Outcome, WorkerPool
from bots.settings import JobSettings
from pipeline.records.domain import Post
from storage import Store
from storage.jobs import Job


class StandIn:
    """Waits as a check would, off the loop's CPU (the pipeline awaits its model and fetches)."""

    def __init__(self, latency: float) -> None:
        self.latency = latency

    async def run(self, job: Job) -> Outcome:
        await asyncio.sleep(self.latency)
        return Outcome(result_id=str(job.payload.get("check_id")))


async def _ticker(stop: asyncio.Event, tick: float, lags: list[float]) -> None:
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        asked = loop.time()
        await asyncio.sleep(tick)
        lags.append(loop.time() - asked - tick)


async def measure(
    store: Store, *, jobs: int, concurrency: int, latency: float, tick: float
) -> dict[str, float]:
    """Queue `jobs` checks, drain them with a pool in this loop, return the loop's lag."""
    for n in range(jobs):
        post = Post(id=f"p{n}", platform="bench", platform_id=str(n), text=f"Claim {n} is true.")
        store.jobs.enqueue("check", {"check_id": f"c{n}"}, post=post, dedupe_key=f"lag:{n}")

    settings = JobSettings(poll_seconds=0.01, heartbeat_seconds=1.0, backoff_initial=0.0)
    config = worker_config(settings, concurrency=concurrency)
    pool = WorkerPool(store, {"check": StandIn(latency)}, config, name="lag")
    stop = asyncio.Event()
    lags: list[float] = []
    started = time.perf_counter()
    await asyncio.gather(
        pool.run(stop), stop_when_idle(store, stop, poll=0.05), _ticker(stop, tick, lags)
    )
    wall = time.perf_counter() - started
    ordered = sorted(lags)

    def q(p: float) -> float:
        return round(1000 * ordered[min(len(ordered) - 1, int(p * len(ordered)))], 1)

    return {
        "lag_p50_ms": q(0.50),
        "lag_p99_ms": q(0.99),
        "lag_max_ms": round(1000 * ordered[-1], 1),
        "wakeups": len(ordered),
        "checks_per_second": round(pool.completed / wall, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--jobs", type=int, default=500)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--tick", type=float, default=0.005)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as tmp,
        Store.open(Path(tmp) / "node.db", database_url=args.database_url) as store,
    ):
        result = asyncio.run(
            measure(
                store,
                jobs=args.jobs,
                concurrency=args.concurrency,
                latency=args.latency,
                tick=args.tick,
            )
        )
    backend = "postgres" if args.database_url else "sqlite"
    print(json.dumps({"backend": backend, "jobs": args.jobs, **result}))


if __name__ == "__main__":
    main()
