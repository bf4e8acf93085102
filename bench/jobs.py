"""`factbot bench jobs`: the durable queue under load, with worker processes on one database.

For each worker count, a fresh database gets `jobs` queued checks (a stored post and a job each,
as the API stores them); that many `python -m bench.jobs_worker` processes then drain it with the
real `WorkerPool`, whose handler stands in for the pipeline: it waits `latency` seconds and
writes one result row in the transaction that completes the job. Printed per worker count:
checks per minute, queue wait p50/p95 (claim time minus enqueue time), lost jobs (not done),
duplicated results (result rows beyond one per job), failed attempts, and the peak RSS of one
worker process.

`--backend postgres --database-url URL` runs the same on PostgreSQL (the scaled-out mode): each
run creates a fresh database on that server (the URL's user must be allowed to create one) and
drops it afterwards, and each worker process is a node with a data folder of its own.
`--engine saq` (PostgreSQL only) runs the queue engine of the scaled-out mode instead: one
more process runs the relay that hands the jobs table's rows to saq, and each worker process
is a saq worker that runs them through the same pool (bots.runtime.workers.saq_engine); its startup
(saq's tables, connections) is outside the measured drain, as the builtin workers' is.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import click

from pipeline.records.domain import Post
from storage import Store

CHECKOUT = Path(__file__).resolve().parents[1]


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


@contextmanager
def _database(server_url: str | None) -> Iterator[str | None]:
    """Yield a fresh PostgreSQL database's URL on server_url's server (None: SQLite)."""
    if server_url is None:
        yield None
        return
    import psycopg

    name = f"factbot_bench_{os.getpid()}_{time.monotonic_ns()}"
    with psycopg.connect(server_url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    try:
        yield urlunsplit(urlsplit(server_url)._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(server_url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def run_one(
    jobs: int,
    workers: int,
    latency: float,
    concurrency: int,
    server_url: str | None = None,
    engine: str = "builtin",
) -> dict[str, Any]:
    """Queue `jobs` checks, drain them with `workers` processes (and saq's relay), and return
    the figures."""
    with tempfile.TemporaryDirectory() as tmp, _database(server_url) as url:
        db = Path(tmp) / "bench.db"
        with Store.open(db, database_url=url) as store:
            store.db.execute("CREATE TABLE bench_results (job_id TEXT NOT NULL, worker TEXT)")
            for n in range(jobs):
                post = Post(
                    id=f"p{n}", platform="bench", platform_id=str(n), text=f"Claim {n} is true."
                )
                store.jobs.enqueue("check", {"check_id": f"c{n}"}, post=post, dedupe_key=str(n))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(CHECKOUT), *sys.path])}
        started = time.perf_counter()
        procs = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "bench.jobs_worker",
                    str(db if url is None else Path(tmp) / f"node{k}" / "bench.db"),
                    "--latency",
                    str(latency),
                    "--concurrency",
                    str(concurrency),
                    "--name",
                    f"w{k}",
                    *(["--database-url", url] if url else []),
                    *(["--engine", engine] if url else []),
                ],
                cwd=CHECKOUT,
                env=env,
            )
            for k in range(workers)
        ]
        if engine == "saq" and url is not None:
            relay = [sys.executable, "-m", "bench.jobs_worker", str(Path(tmp) / "relay" / "r.db")]
            relay += ["--relay", "--database-url", url]
            procs.append(subprocess.Popen(relay, cwd=CHECKOUT, env=env))
        for proc in procs:
            proc.wait()
        wall = time.perf_counter() - started
        peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        with Store.open(db, database_url=url) as store:
            rows = store.db.execute(
                "SELECT status, created_at, started_at, finished_at, attempts FROM jobs"
            ).fetchall()
            results = store.db.execute(
                "SELECT count(*), count(DISTINCT job_id) FROM bench_results"
            ).fetchone()
            per_worker = dict(
                store.db.execute("SELECT worker, count(*) FROM bench_results GROUP BY worker")
            )
    from datetime import datetime

    def ts(value: str) -> float:
        return datetime.fromisoformat(value).timestamp()

    done = [r for r in rows if r[0] == "done"]
    waits = [ts(r[2]) - ts(r[1]) for r in done]
    first = min(ts(r[2]) for r in done) if done else 0.0
    last = max(ts(r[3]) for r in done) if done else 0.0
    drain = max(last - first, 1e-9)
    return {
        "backend": "sqlite" if server_url is None else "postgres",
        "engine": engine,
        "workers": workers,
        "concurrency_per_worker": concurrency,
        "jobs": jobs,
        "latency_s": latency,
        "checks_per_minute": round(len(done) / drain * 60, 1),
        "bound_checks_per_minute": round(workers * concurrency / latency * 60, 1)
        if latency > 0
        else None,
        "drain_s": round(drain, 2),
        "wall_s_with_startup": round(wall, 2),
        "queue_wait_p50_s": round(_quantile(waits, 0.5), 3),
        "queue_wait_p95_s": round(_quantile(waits, 0.95), 3),
        "lost": jobs - len(done),
        "duplicated_results": int(results[0]) - int(results[1]),
        "extra_attempts": sum(r[4] - 1 for r in done),
        "results_per_worker": per_worker,
        "peak_rss_mb_one_worker": round(peak_kb / 1024, 1),
        "mean_queue_wait_s": round(statistics.fmean(waits), 3) if waits else None,
    }


@click.command("jobs")
@click.option("--jobs", "count", default=1000, show_default=True, help="Queued checks per run.")
@click.option("--workers", default="1,2,4", show_default=True, help="Worker process counts.")
@click.option(
    "--latency", default=0.05, show_default=True, help="Stand-in pipeline seconds per check."
)
@click.option("--concurrency", default=1, show_default=True, help="Jobs at once per process.")
@click.option("--report", "report_path", type=click.Path(path_type=Path), help="Write JSON here.")
@click.option(
    "--backend",
    type=click.Choice(["sqlite", "postgres"]),
    default="sqlite",
    show_default=True,
    help="The database the queue lives in.",
)
@click.option(
    "--engine",
    type=click.Choice(["builtin", "saq"]),
    default="builtin",
    show_default=True,
    help="The queue engine: builtin claims rows; saq (postgres only) adds a relay process.",
)
@click.option(
    "--database-url",
    envvar="FACTBOT_DATABASE_URL",
    help="postgres: a server where the bench may create and drop a database.",
)
def jobs_bench(
    count: int,
    workers: str,
    latency: float,
    concurrency: int,
    report_path: Path | None,
    backend: str,
    engine: str,
    database_url: str | None,
) -> None:
    """Drain queued checks with 1, 2 and 4 worker processes on one database.

    \b
    Examples:
      factbot bench jobs --jobs 1000 --workers 1,2,4 --latency 0.05
      factbot bench jobs --backend postgres --database-url postgresql://me@127.0.0.1/postgres
      factbot bench jobs --backend postgres --engine saq --database-url postgresql://…
    """
    if backend == "postgres" and not database_url:
        raise click.UsageError("--backend postgres needs --database-url (or FACTBOT_DATABASE_URL)")
    if engine == "saq" and backend != "postgres":
        raise click.UsageError("--engine saq runs on PostgreSQL: add --backend postgres")
    server = database_url if backend == "postgres" else None
    figures = [
        run_one(count, int(w), latency, concurrency, server, engine)
        for w in workers.split(",")
        if w.strip()
    ]
    text = json.dumps(figures, indent=2)
    click.echo(text)
    if report_path:
        report_path.write_text(text, encoding="utf-8")
