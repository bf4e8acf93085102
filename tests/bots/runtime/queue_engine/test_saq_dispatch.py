"""Jobs handed from the jobs table (the outbox) to saq on a real PostgreSQL, run by saq workers.

The worker pool, the relay and saq are real; the job kind is one of the test's own (a handler
is the seam a job kind plugs into), so each test says what the work does and when it fails.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from bots.runtime.service import run_jobs, stop_when_idle, worker_config
from bots.runtime.workers.pool import JobHandler, Outcome, PermanentJobError, WorkerPool
from bots.runtime.workers.saq_engine import Relay, open_queue, run_saq_worker
from bots.settings import Settings
from storage import Store
from storage.jobs import Job


class Probe:
    """A job kind that records each run; `fail(job, n)` says whether the n-th run fails."""

    def __init__(self, fail: Callable[[Job, int], bool] = lambda job, n: False) -> None:
        self.runs: list[tuple[str, int]] = []
        self.fail = fail

    async def run(self, job: Job) -> Outcome:
        self.runs.append((job.id, job.attempts))
        await asyncio.sleep(0.05)
        if self.fail(job, len([r for r in self.runs if r[0] == job.id])):
            raise RuntimeError(f"probe failed on attempt {job.attempts}")
        return Outcome(result_id=f"r-{job.id}")


@pytest.fixture
def store(saq_settings: Settings, tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "factbot.db", database_url=saq_settings.queue_url) as opened:
        yield opened


async def _drive(
    store: Store,
    settings: Settings,
    probe: JobHandler,
    *,
    done: Callable[[], bool],
    relays: int = 1,
    seconds: float = 20.0,
) -> None:
    """Run `relays` relays and one saq worker until done() or the time is up."""
    stop = asyncio.Event()
    pool = WorkerPool(store, {"probe": probe}, worker_config(settings.jobs, concurrency=2))
    tasks = [
        asyncio.create_task(Relay(store, open_queue(settings), settings).run(stop))
        for _ in range(relays)
    ]
    tasks.append(asyncio.create_task(run_saq_worker(pool, settings, stop)))
    try:
        async with asyncio.timeout(seconds):
            while True:
                if done():
                    break
                await asyncio.sleep(0.05)
    finally:
        stop.set()
        await asyncio.gather(*tasks)


def _status(store: Store, *ids: str) -> set[str]:
    return {j.status for j in (store.jobs.get(i) for i in ids) if j is not None}


async def test_a_job_handed_to_saq_runs_once_and_completes(
    store: Store, saq_settings: Settings
) -> None:
    probe = Probe()
    job, _ = store.jobs.enqueue("probe", {"n": 1})
    await _drive(store, saq_settings, probe, done=lambda: _status(store, job.id) == {"done"})
    ended = store.jobs.get(job.id)
    assert ended is not None and ended.result_id == f"r-{job.id}" and ended.attempts == 1
    assert probe.runs == [(job.id, 1)]


async def test_two_relays_handing_on_the_same_jobs_run_each_once(
    store: Store, saq_settings: Settings
) -> None:
    probe = Probe()
    ids = [store.jobs.enqueue("probe", {"n": n})[0].id for n in range(12)]
    await _drive(
        store, saq_settings, probe, relays=2, done=lambda: _status(store, *ids) == {"done"}
    )
    assert sorted(probe.runs) == sorted((i, 1) for i in ids)


async def test_a_job_handed_on_again_by_hand_still_runs_once(
    store: Store, saq_settings: Settings
) -> None:
    from bots.runtime.workers.saq_engine import saq_job

    job, _ = store.jobs.enqueue("probe", {})
    queue = open_queue(saq_settings)
    await queue.connect()
    try:
        first = await queue.enqueue(saq_job(job, saq_settings))
        again = await queue.enqueue(saq_job(job, saq_settings))
    finally:
        await queue.disconnect()
    assert first is not None and again is None  # saq's key is the job id
    probe = Probe()
    await _drive(
        store, saq_settings, probe, relays=2, done=lambda: _status(store, job.id) == {"done"}
    )
    assert probe.runs == [(job.id, 1)]


async def test_a_reply_job_runs_only_after_its_check(store: Store, saq_settings: Settings) -> None:
    probe = Probe(fail=lambda job, n: job.payload.get("step") == "check" and n == 1)
    check, _ = store.jobs.enqueue("probe", {"step": "check"})
    reply, _ = store.jobs.enqueue("probe", {"step": "reply"}, waits_for=check.id)
    await _drive(
        store, saq_settings, probe, done=lambda: _status(store, check.id, reply.id) == {"done"}
    )
    # The check failed once and was retried after its back-off; the reply waited for it.
    assert probe.runs == [(check.id, 1), (check.id, 2), (reply.id, 1)]


async def test_a_failing_job_is_retried_with_backoff_then_dead_with_its_error(
    store: Store, saq_settings: Settings
) -> None:
    probe = Probe(fail=lambda job, n: True)
    job, _ = store.jobs.enqueue("probe", {}, max_attempts=3)
    await _drive(store, saq_settings, probe, done=lambda: _status(store, job.id) == {"dead"})
    dead = store.jobs.get(job.id)
    assert dead is not None and dead.attempts == 3
    assert dead.last_error == "RuntimeError: probe failed on attempt 3"
    assert probe.runs == [(job.id, 1), (job.id, 2), (job.id, 3)]
    retries = [e for e in store.jobs.events(job.id) if e.status == "queued" and e.stage == "job"]
    assert len(retries) == 3  # enqueued, then queued again after attempts 1 and 2
    gaps = [
        (b.at - a.at).total_seconds()
        for a, b in zip(store.jobs.events(job.id), store.jobs.events(job.id)[1:], strict=False)
        if a.status == "queued" and a.detail.get("retry_at") and b.status == "running"
    ]
    assert gaps and min(gaps) >= 0.4  # each retry waited for its back-off


async def test_a_permanent_error_is_dead_at_once(store: Store, saq_settings: Settings) -> None:
    class Refuses:
        async def run(self, job: Job) -> Outcome:
            raise PermanentJobError("bad input")

    job, _ = store.jobs.enqueue("probe", {})
    await _drive(store, saq_settings, Refuses(), done=lambda: _status(store, job.id) == {"dead"})
    dead = store.jobs.get(job.id)
    assert (
        dead is not None
        and dead.attempts == 1
        and dead.last_error == "PermanentJobError: bad input"
    )


async def test_doctor_reports_saqs_depth_and_an_unreachable_backend(
    store: Store, saq_settings: Settings
) -> None:
    from bots.runtime.workers.saq_engine import depth, saq_job

    job, _ = store.jobs.enqueue("probe", {})
    queue = open_queue(saq_settings)
    await queue.connect()
    try:
        await queue.enqueue(saq_job(job, saq_settings))
    finally:
        await queue.disconnect()
    found = await depth(saq_settings)
    assert found["queued"] == 1 and found["active"] == 0 and "error" not in found
    assert "factbot@" not in found["backend"] and found["backend"].startswith("127.0.0.1:")
    down = saq_settings.model_copy(update={"database_url": None})
    down.queue.url = SecretStr("postgresql://x@127.0.0.1:1/nowhere")
    gone = await depth(down, seconds=3)
    assert "error" in gone and gone["backend"] == "127.0.0.1:1/nowhere"


async def test_a_worker_asked_to_stop_as_it_starts_stops(
    store: Store, saq_settings: Settings
) -> None:
    # saq's start() replaces its stop event as it begins: a stop set before then (here an
    # empty queue seen at once while the worker and the relay connect; or SIGTERM during
    # start-up) must still stop the worker. It hung before the fix.
    pool = WorkerPool(store, {"probe": Probe()}, worker_config(saq_settings.jobs, concurrency=2))
    stop = asyncio.Event()
    started = time.monotonic()
    async with asyncio.timeout(30):
        await asyncio.gather(
            run_jobs(pool, saq_settings, stop, relay=True),
            stop_when_idle(store, stop, poll=0.05),
        )
    assert time.monotonic() - started < 5.0
    assert store.workers.alive(within=60) == []
