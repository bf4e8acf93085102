"""One worker process of `factbot bench jobs`: the real WorkerPool with a stand-in pipeline."""

from __future__ import annotations

import argparse
import asyncio

from bots.runtime.service import stop_when_idle
from bots.runtime.worker import Outcome, WorkerConfig, WorkerPool
from storage import Store
from storage.jobs import Backoff, Job


class StandInCheck:
    """Waits like a check would, then writes one result row with the job's completion."""

    def __init__(self, store: Store, latency: float, name: str) -> None:
        self.store = store
        self.latency = latency
        self.name = name

    async def run(self, job: Job) -> Outcome:
        await asyncio.sleep(self.latency)

        def write() -> None:
            self.store.db.execute(
                "INSERT INTO bench_results (job_id, worker) VALUES (?, ?)", [job.id, self.name]
            )

        return Outcome(result_id=str(job.payload.get("check_id")), store=write)


async def main(
    db: str, latency: float, concurrency: int, name: str, database_url: str | None = None
) -> None:
    with Store.open(db, database_url=database_url) as store:
        config = WorkerConfig(
            concurrency=concurrency,
            lease_seconds=30.0,
            heartbeat_seconds=10.0,
            poll_seconds=0.01,
            shutdown_timeout=5.0,
            backoff=Backoff(initial=0.0, maximum=0.0),
        )
        pool = WorkerPool(store, {"check": StandInCheck(store, latency, name)}, config, name=name)
        stop = asyncio.Event()
        await asyncio.gather(pool.run(stop), stop_when_idle(store, stop, poll=0.05))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("db")
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--name", default="w")
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    asyncio.run(main(args.db, args.latency, args.concurrency, args.name, args.database_url))
