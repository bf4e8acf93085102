"""The worker pool in one process: failures until dead, graceful stop, lost leases.

Each test runs on both engines (SQLite and PostgreSQL: `open_store`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bots.runtime.workers.pool import (
    Outcome,
    PermanentJobError,
    RetryLaterError,
    WorkerConfig,
    WorkerPool,
)
from storage import Store
from storage.jobs import Backoff, Job
from tests.support.clock import FakeClock


@pytest.fixture
def store(tmp_path: Path, open_store: Callable[..., Store]) -> Iterator[Store]:
    with open_store(tmp_path / "w.db") as opened:
        yield opened


def _config(**changes: float) -> WorkerConfig:
    base = {
        "concurrency": 1,
        "lease_seconds": 30.0,
        "heartbeat_seconds": 5.0,
        "poll_seconds": 0.01,
        "shutdown_timeout": 5.0,
        "registry_seconds": 0.05,
    }
    base.update(changes)
    return WorkerConfig(backoff=Backoff(initial=0, maximum=0), **base)  # type: ignore[arg-type]


class Failing:
    """A handler that fails every time, the way a broken dependency would."""

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.calls = 0

    async def run(self, job: Job) -> Outcome:
        self.calls += 1
        raise self.error


class Gate:
    """A handler that waits until the test opens the gate, then writes one result row."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.started = asyncio.Event()
        self.open = asyncio.Event()
        self.runs = 0

    async def run(self, job: Job) -> Outcome:
        self.runs += 1
        self.started.set()
        await self.open.wait()

        def write() -> None:
            self.store.db.execute(
                "INSERT INTO workers (id, pid, host, started_at, heartbeat_at) "
                "VALUES (?, 0, 'result', 't', 't')",
                [f"result-{job.id}"],
            )

        return Outcome(result_id=f"r-{job.id}", store=write)


async def _until(predicate: object, seconds: float = 10.0) -> None:
    async with asyncio.timeout(seconds):
        while not predicate():  # type: ignore[operator]  # noqa: ASYNC110 - polls the database
            await asyncio.sleep(0.01)


async def _run_until_dead(store: Store, handler: Failing) -> Job:
    job, _ = store.jobs.enqueue("check", {}, max_attempts=3)
    pool = WorkerPool(store, {"check": handler}, _config(), name="t")
    stop = asyncio.Event()
    task = asyncio.create_task(pool.run(stop))
    await _until(lambda: store.jobs.get(job.id).status == "dead")  # type: ignore[union-attr]
    stop.set()
    await task
    dead = store.jobs.get(job.id)
    assert dead is not None
    return dead


async def test_a_job_that_keeps_failing_ends_dead_with_its_error(store: Store) -> None:
    handler = Failing(RuntimeError("search is down"))
    dead = await _run_until_dead(store, handler)
    assert dead.attempts == 3 and handler.calls == 3
    assert dead.last_error == "RuntimeError: search is down"
    statuses = [e.status for e in store.jobs.events(dead.id) if e.stage == "job"]
    assert statuses == ["queued", "running", "queued", "running", "queued", "running", "dead"]


async def test_bad_input_is_dead_at_the_first_attempt(store: Store) -> None:
    handler = Failing(PermanentJobError("no post"))
    dead = await _run_until_dead(store, handler)
    assert dead.attempts == 1 and handler.calls == 1


async def test_a_peer_asking_to_wait_retries_after_that_wait_not_the_backoff(
    store: Store,
) -> None:
    clock = FakeClock()
    handler = Failing(RetryLaterError("X rate limit", retry_after=120.0))
    job, _ = store.jobs.enqueue("check", {}, max_attempts=3)
    pool = WorkerPool(store, {"check": handler}, _config(), name="t", clock=clock)
    store.jobs.clock = clock
    await pool.run_one(store.jobs.claim("t/0", lease=30, kinds=("check",)), "t/0")  # type: ignore[arg-type]
    queued = store.jobs.get(job.id)
    assert queued is not None and queued.status == "queued"
    assert queued.run_after is not None
    assert (queued.run_after - clock.now()).total_seconds() == 120.0  # the backoff here is 0
    assert store.jobs.claim("t/0", lease=30, kinds=("check",)) is None  # not due yet
    clock.advance(121)
    assert store.jobs.claim("t/0", lease=30, kinds=("check",)) is not None


async def test_stopping_lets_a_running_job_finish_within_the_timeout(store: Store) -> None:
    job, _ = store.jobs.enqueue("check", {})
    handler = Gate(store)
    pool = WorkerPool(store, {"check": handler}, _config(shutdown_timeout=5.0), name="t")
    stop = asyncio.Event()
    task = asyncio.create_task(pool.run(stop))
    await handler.started.wait()
    stop.set()
    await asyncio.sleep(0.05)
    handler.open.set()  # it finishes after the stop, within the timeout
    await task
    done = store.jobs.get(job.id)
    assert done is not None and done.status == "done" and done.result_id == f"r-{job.id}"


async def test_stopping_hands_back_what_does_not_finish_in_time(store: Store) -> None:
    first, _ = store.jobs.enqueue("check", {})
    store.jobs.enqueue("check", {})
    handler = Gate(store)
    pool = WorkerPool(store, {"check": handler}, _config(shutdown_timeout=0.1), name="t")
    stop = asyncio.Event()
    task = asyncio.create_task(pool.run(stop))
    await handler.started.wait()
    stop.set()
    await task  # the gate never opens
    back = store.jobs.get(first.id)
    assert back is not None and back.status == "queued" and back.attempts == 0
    assert store.jobs.counts() == {"queued": 2, "running": 0, "done": 0, "dead": 0}
    assert store.db.execute("SELECT count(*) FROM workers WHERE host = 'result'").fetchone()[0] == 0
    assert store.workers.alive(within=60) == []  # it said it stopped


async def test_a_job_whose_lease_was_taken_over_is_abandoned_without_a_result(
    tmp_path: Path, open_store: Callable[..., Store]
) -> None:
    clock = FakeClock()
    with open_store(tmp_path / "lease.db", clock=clock) as store:
        job, _ = store.jobs.enqueue("check", {})
        handler = Gate(store)
        config = _config(lease_seconds=30.0, heartbeat_seconds=0.05)
        pool = WorkerPool(store, {"check": handler}, config, name="slow", clock=clock)
        stop = asyncio.Event()
        task = asyncio.create_task(pool.run(stop))
        await handler.started.wait()
        clock.advance(31)  # the lease ran out before the next heartbeat (a long pause)
        other = store.jobs.claim("other", lease=30)
        assert other is not None and other.id == job.id
        await _until(lambda: not pool.running)  # the heartbeat saw it and gave the job up
        handler.open.set()
        stop.set()
        await task
        store.jobs.complete(other, "other", result_id="theirs")
        final = store.jobs.get(job.id)
        assert final is not None and final.result_id == "theirs" and handler.runs == 1
        assert (
            store.db.execute("SELECT count(*) FROM workers WHERE host='result'").fetchone()[0] == 0
        )
