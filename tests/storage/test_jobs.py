"""The durable job queue: leases, heartbeats, attempts, dead jobs, exactly-once results."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pipeline.records.domain import Post
from storage import Store
from storage.codec import post_from_row, post_row
from storage.jobs import Backoff, LeaseLostError
from tests.support.clock import FakeClock

LEASE = 30.0


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def db(tmp_path: Path, clock: FakeClock, open_store: Callable[..., Store]) -> Iterator[Store]:
    with open_store(tmp_path / "jobs.db", clock=clock) as opened:
        yield opened


def _post(n: int = 1, platform: str = "slack") -> Post:
    return Post(id=f"p{n}", platform=platform, platform_id=f"msg{n}", text=f"Claim number {n}.")


def test_a_job_and_its_post_are_stored_together_and_deduplicated(db: Store) -> None:
    job, created = db.jobs.enqueue("check", {"a": 1}, dedupe_key="slack:evt1", post=_post())
    again, created_again = db.jobs.enqueue("check", {"a": 2}, dedupe_key="slack:evt1", post=_post())
    assert created and not created_again and again.id == job.id and again.payload == {"a": 1}
    assert job.post_id == "p1" and db.jobs.post("p1") == _post()
    assert db.db.execute("SELECT count(*) FROM posts").fetchone()[0] == 1
    # Another event about the same platform post reuses the stored post.
    other, _ = db.jobs.enqueue(
        "check", {}, dedupe_key="slack:evt2", post=Post("p9", "slack", "msg1", "x")
    )
    assert other.post_id == "p1"
    assert [e.status for e in db.jobs.events(job.id)] == ["queued"]


def test_a_posts_leads_survive_storage_and_a_later_requests_leads_are_added(db: Store) -> None:
    leads = ("https://who.int/bleach", "https://www.cdc.gov/poison")
    post = dataclasses.replace(_post(), leads=leads)
    job, _ = db.jobs.enqueue("check", {}, dedupe_key="x:1", post=post)
    loaded = db.jobs.post(job.post_id or "")
    assert loaded == post and loaded.leads == leads and loaded.links == ()
    # The same platform post asked again with another lead (and one it had): added once.
    again = dataclasses.replace(
        _post(), id="p2", leads=("https://who.int/bleach", "https://a.org/b")
    )
    other, _ = db.jobs.enqueue("check", {}, dedupe_key="x:2", post=again)
    assert other.post_id == job.post_id
    assert db.jobs.post(job.post_id or "").leads == (*leads, "https://a.org/b")


def test_a_post_copied_as_json_before_leads_loads_without_any() -> None:
    row = post_row(_post())  # as the monitor keeps a candidate's post
    del row["leads"]
    assert post_from_row(row) == _post()


def test_a_claimed_job_is_not_claimed_again_while_its_lease_lasts(
    db: Store, clock: FakeClock
) -> None:
    job, _ = db.jobs.enqueue("check", {})
    first = db.jobs.claim("w1", lease=LEASE)
    assert first is not None and first.id == job.id and first.attempts == 1
    assert first.lease_owner == "w1" and first.status == "running"
    clock.advance(LEASE - 1)
    assert db.jobs.claim("w2", lease=LEASE) is None
    assert db.jobs.heartbeat(first, "w1", lease=LEASE)  # renewed: LEASE more from now
    clock.advance(LEASE - 1)
    assert db.jobs.claim("w2", lease=LEASE) is None


def test_a_dead_workers_job_is_claimed_again_after_its_lease_and_completes_once(
    db: Store, clock: FakeClock
) -> None:
    db.jobs.enqueue("check", {})
    first = db.jobs.claim("w1", lease=LEASE)
    assert first is not None
    clock.advance(LEASE + 1)  # w1 stopped heartbeating (it was killed)
    second = db.jobs.claim("w2", lease=LEASE)
    assert second is not None and second.id == first.id and second.attempts == 2
    writes: list[str] = []
    db.jobs.complete(second, "w2", result_id="c1", store=lambda: writes.append("w2"))
    # w1 wakes up and tries to finish: its lease is gone, nothing of it is written.
    with pytest.raises(LeaseLostError):
        db.jobs.complete(first, "w1", result_id="c1", store=lambda: writes.append("w1"))
    assert not db.jobs.heartbeat(first, "w1", lease=LEASE)
    with pytest.raises(LeaseLostError):
        db.jobs.fail(first, "w1", "late")
    done = db.jobs.get(first.id)
    assert done is not None and done.status == "done" and done.result_id == "c1"
    assert writes == ["w2"]


def test_results_roll_back_with_a_failed_completion(db: Store) -> None:
    db.jobs.enqueue("check", {})
    job = db.jobs.claim("w1", lease=LEASE)
    assert job is not None

    def broken() -> None:
        db.db.execute(
            "INSERT INTO workers (id, pid, host, started_at, heartbeat_at) "
            "VALUES ('x', 1, 'h', 't', 't')"
        )
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        db.jobs.complete(job, "w1", result_id="c1", store=broken)
    assert db.db.execute("SELECT count(*) FROM workers").fetchone()[0] == 0
    again = db.jobs.get(job.id)
    assert again is not None and again.status == "running"  # still w1's: it can fail it


def test_failures_back_off_then_the_job_is_dead_with_its_error(db: Store, clock: FakeClock) -> None:
    backoff = Backoff(initial=10, factor=4, maximum=100)
    job, _ = db.jobs.enqueue("check", {}, max_attempts=3)
    waits = []
    for attempt in (1, 2, 3):
        claimed = db.jobs.claim("w", lease=LEASE)
        assert claimed is not None and claimed.attempts == attempt
        status = db.jobs.fail(claimed, "w", f"boom {attempt}", backoff=backoff)
        if attempt < 3:
            assert status == "queued"
            stored = db.jobs.get(job.id)
            assert stored is not None and stored.run_after is not None
            waits.append((stored.run_after - clock.now()).total_seconds())
            assert db.jobs.claim("w", lease=LEASE) is None  # not before the back-off
            clock.advance(waits[-1])
        else:
            assert status == "dead"
    assert waits == [10.0, 40.0]
    dead = db.jobs.get(job.id)
    assert dead is not None and dead.status == "dead" and dead.last_error == "boom 3"
    assert db.jobs.claim("w", lease=LEASE) is None
    assert db.jobs.counts()["dead"] == 1
    assert db.jobs.retry(job.id)  # an operator queues it again
    assert db.jobs.claim("w", lease=LEASE) is not None


def test_a_permanent_error_is_dead_at_once(db: Store) -> None:
    db.jobs.enqueue("check", {}, max_attempts=5)
    claimed = db.jobs.claim("w", lease=LEASE)
    assert claimed is not None
    assert db.jobs.fail(claimed, "w", "EmptyPostError: nothing", permanent=True) == "dead"


def test_a_job_whose_worker_keeps_dying_ends_dead(db: Store, clock: FakeClock) -> None:
    job, _ = db.jobs.enqueue("check", {}, max_attempts=2)
    for _ in range(2):
        assert db.jobs.claim("w", lease=LEASE) is not None
        clock.advance(LEASE + 1)
    assert db.jobs.claim("w", lease=LEASE) is None
    dead = db.jobs.get(job.id)
    assert dead is not None and dead.status == "dead" and "lease expired" in (dead.last_error or "")


def test_a_job_handed_back_keeps_its_attempts(db: Store) -> None:
    db.jobs.enqueue("check", {})
    claimed = db.jobs.claim("w", lease=LEASE)
    assert claimed is not None and db.jobs.release(claimed, "w")
    again = db.jobs.claim("w2", lease=LEASE)
    assert again is not None and again.attempts == 1
    assert not db.jobs.release(claimed, "w")  # no longer w's


def test_jobs_are_claimed_oldest_first_and_by_kind(db: Store, clock: FakeClock) -> None:
    ids = []
    for n in range(3):
        ids.append(db.jobs.enqueue("check" if n != 1 else "other", {"n": n})[0].id)
        clock.advance(1)
    first = db.jobs.claim("w", lease=LEASE, kinds=("check",))
    second = db.jobs.claim("w", lease=LEASE, kinds=("check",))
    assert first is not None and second is not None
    assert [first.id, second.id] == [ids[0], ids[2]]
    assert db.jobs.claim("w", lease=LEASE, kinds=("check",)) is None


def test_progress_events_come_back_in_order(db: Store) -> None:
    job, _ = db.jobs.enqueue("check", {})
    db.jobs.progress(job.id, "claims", "started")
    db.jobs.progress(job.id, "claims", "done", seconds=0.5)
    events = db.jobs.events(job.id)
    assert [(e.stage, e.status) for e in events] == [
        ("job", "queued"),
        ("claims", "started"),
        ("claims", "done"),
    ]
    assert events[-1].detail == {"seconds": 0.5}
    assert db.jobs.events(job.id, after=events[0].seq)[0].stage == "claims"


def test_a_reply_is_reserved_once_and_only_a_sure_failure_frees_it(db: Store) -> None:
    first = db.replies.reserve("slack", "C1/123.4", "correction", check_id="c1")
    assert first is not None and first.status == "pending"
    assert db.replies.reserve("slack", "C1/123.4", "correction") is None  # redelivery: no send
    db.replies.mark_failed(first.id, "channel_not_found")
    retry = db.replies.reserve("slack", "C1/123.4", "correction", check_id="c2")
    assert retry is not None and retry.id == first.id and retry.check_id == "c2"
    db.replies.mark_sent(retry.id, platform_reply_id="999.1")
    assert db.replies.reserve("slack", "C1/123.4", "correction") is None
    sent = db.replies.find("slack", "C1/123.4", "correction")
    assert sent is not None and sent.status == "sent" and sent.platform_reply_id == "999.1"
    # Another kind of reply to the same post is its own key.
    assert db.replies.reserve("slack", "C1/123.4", "review-note") is not None


def test_workers_alive_are_those_that_heartbeat(db: Store, clock: FakeClock) -> None:
    db.workers.register("a")
    db.workers.register("b")
    clock.advance(20)
    db.workers.heartbeat("a")
    assert [w.id for w in db.workers.alive(within=15)] == ["a"]
    db.workers.stopped("a")
    assert db.workers.alive(within=15) == []


@pytest.mark.parametrize("end", ["done", "dead"])
def test_a_job_waiting_for_another_runs_only_once_that_one_ended(db: Store, end: str) -> None:
    first, _ = db.jobs.enqueue("check", {}, max_attempts=1)
    waiting, _ = db.jobs.enqueue("reply", {}, waits_for=first.id)
    assert waiting.waits_for == first.id
    assert db.jobs.claim("w", lease=LEASE, kinds=("reply",)) is None  # first is queued
    claimed = db.jobs.claim("w", lease=LEASE, kinds=("check",))
    assert claimed is not None and claimed.id == first.id
    assert db.jobs.claim("w", lease=LEASE, kinds=("reply",)) is None  # first is running
    if end == "done":
        db.jobs.complete(claimed, "w")
    else:
        assert db.jobs.fail(claimed, "w", "boom") == "dead"
    after = db.jobs.claim("w", lease=LEASE)
    assert after is not None and after.id == waiting.id


def test_a_sent_replys_private_destination_is_forgotten(db: Store) -> None:
    payload = {"destination": {"platform": "slack", "private": {"token": "x"}}, "n": 1}
    job, _ = db.jobs.enqueue("reply", payload)
    other, _ = db.jobs.enqueue("reply", {"n": 2})
    db.jobs.forget_private(job.id)
    db.jobs.forget_private(other.id)  # no destination: an empty one, on both engines
    kept = db.jobs.get(job.id)
    assert kept is not None
    assert kept.payload == {"destination": {"platform": "slack", "private": {}}, "n": 1}
    assert db.jobs.get(other.id).payload == {"n": 2, "destination": {"private": {}}}  # type: ignore[union-attr]
