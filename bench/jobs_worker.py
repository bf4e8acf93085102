"""One process of `factbot bench jobs`: the real WorkerPool with a stand-in pipeline.

`--engine builtin` (the default) claims rows of the jobs table; `--engine saq` runs a saq
worker on PostgreSQL (bots.runtime.workers.saq_engine), and `--relay` runs the relay that hands the
jobs table's rows to saq. Every mode stops once no job is queued or running.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
from pathlib import Path

from bots.runtime.service import stop_when_idle, worker_config
from bots.runtime.workers.pool import Outcome, WorkerPool
from bots.settings import Settings
from storage import Store
from storage.jobs import Job


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


def bench_settings(db: str, database_url: str | None, engine: str = "builtin") -> Settings:
    """The bench's database and engine, with one lease, heartbeat and poll for every run."""
    return Settings(
        data_dir=Path(db).parent,
        database_url=database_url,
        queue={"engine": engine, "relay_seconds": 0.05},
        jobs={
            "lease_seconds": 30.0,
            "heartbeat_seconds": 10.0,
            "poll_seconds": 0.01,
            "shutdown_timeout": 5.0,
            "backoff_initial": 0.0,
            "backoff_max": 0.0,
        },
    )


async def main(
    db: str,
    latency: float,
    concurrency: int,
    name: str,
    database_url: str | None = None,
    engine: str = "builtin",
) -> None:
    if engine == "saq" and database_url is None:
        raise ValueError("the bench runs saq on PostgreSQL: pass --database-url")
    settings = bench_settings(db, database_url, engine)
    with Store.open(db, database_url=database_url) as store:
        stop = asyncio.Event()
        config = worker_config(settings.jobs, concurrency=concurrency)
        pool = WorkerPool(store, {"check": StandInCheck(store, latency, name)}, config, name=name)
        if engine == "saq":
            from bots.runtime.workers.saq_engine import run_saq_worker

            work = run_saq_worker(pool, settings, stop)
        else:
            work = pool.run(stop)
        await asyncio.gather(work, stop_when_idle(store, stop, poll=0.05))


async def relay(db: str, database_url: str) -> None:
    """Hand the jobs table's rows to saq until no job is queued or running."""
    from bots.runtime.workers.saq_engine import Relay, open_queue

    settings = bench_settings(db, database_url, "saq")
    with Store.open(db, database_url=database_url) as store:
        stop = asyncio.Event()
        hand = Relay(store, open_queue(settings), settings)
        await asyncio.gather(hand.run(stop), stop_when_idle(store, stop, poll=0.05))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("db")
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--name", default="w")
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--engine", choices=["builtin", "saq"], default="builtin")
    parser.add_argument("--relay", action="store_true", help="run saq's relay, not a worker")
    args = parser.parse_args()
    if (args.relay or args.engine == "saq") and not args.database_url:
        parser.error("saq runs on PostgreSQL here: pass --database-url")
    # saq warns at each stop that its idle slots were cancelled (its grace period is ours).
    logging.getLogger("saq").setLevel(logging.ERROR)
    if args.relay:
        asyncio.run(relay(args.db, args.database_url))
    else:
        asyncio.run(
            main(args.db, args.latency, args.concurrency, args.name, args.database_url, args.engine)
        )
