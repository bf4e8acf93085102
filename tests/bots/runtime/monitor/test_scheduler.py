"""The monitor's scheduler: one active process through the database lease, explicit APScheduler
job options, scans enqueued once per source and slot; date triggers at now, never intervals."""

from __future__ import annotations

from datetime import UTC, datetime

from apscheduler.triggers.date import DateTrigger

from bots.runtime.monitor.scan import SCAN
from bots.runtime.monitor.scheduler import (
    LEASE,
    MonitorScheduler,
    Periodic,
    periodic_dedupe,
    scan_dedupe,
)
from bots.settings import MonitorSettings
from storage import Store
from tests.support.clock import FakeClock

SOURCES = ("slack:channel:C1", "discord:channel:42")


def at_now(source: str) -> DateTrigger:
    return DateTrigger(run_date=datetime.now(UTC))


def make(store: Store, clock: FakeClock, holder: str, **settings: float) -> MonitorScheduler:
    monitor = MonitorSettings(enabled=True, lease_seconds=30, interval_seconds=300, **settings)
    return MonitorScheduler(store, monitor, SOURCES, holder=holder, clock=clock, trigger=at_now)


def scan_jobs(store: Store) -> list[tuple[str, str]]:
    rows = store.db.execute(
        "SELECT dedupe_key, json_extract(payload, '$.source') FROM jobs WHERE kind = ? "
        "ORDER BY dedupe_key",
        [SCAN],
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


async def test_a_second_scheduler_stands_by_and_takes_over_when_the_lease_lapses(
    tmp_path: object,
) -> None:
    clock = FakeClock(datetime(2026, 3, 2, 12, 0, tzinfo=UTC))
    with Store.open(f"{tmp_path}/a.db", clock=clock) as store:
        first, second = make(store, clock, "first"), make(store, clock, "second")
        assert await first.step() and first.active
        assert not await second.step() and not second.active
        await first.wait_events(2)  # one scan per source, enqueued by the active scheduler
        assert await second.enqueue_scan(SOURCES[0]) is None  # the fence: no lease, no job
        slot = int(clock.now().timestamp() // 300)
        assert scan_jobs(store) == sorted((scan_dedupe(s, slot), s) for s in SOURCES)

        clock.advance(10)  # the first renews within its lease; the second still waits
        assert await first.step() and not await second.step()
        clock.advance(31)  # the first stopped renewing (stalled, crashed): the lease lapses
        assert await second.step() and second.active
        assert not await first.step() and not first.active  # it finds the lease taken
        assert await first.enqueue_scan(SOURCES[0]) is None
        await second.wait_events(2)
        assert len(second.enqueued) == 0  # the same slot: the dedupe keys hold, no new rows
        assert len(scan_jobs(store)) == 2
        clock.advance(300)  # the next slot
        assert await second.step()
        assert await second.enqueue_scan(SOURCES[0]) is not None
        assert len(scan_jobs(store)) == 3
        second.close()  # a clean stop gives the lease up: the standby need not wait
        assert await first.step() and first.active
        first.close()
        assert not store.monitor.holds_lease(LEASE, "first")


async def test_every_scheduled_job_has_an_id_and_the_safety_options(tmp_path: object) -> None:
    clock = FakeClock()
    with Store.open(f"{tmp_path}/b.db", clock=clock) as store:
        scheduler = MonitorScheduler(
            store,
            MonitorSettings(enabled=True, misfire_grace_seconds=90),
            SOURCES,
            holder="only",
            clock=clock,
        )  # the production trigger: an interval
        assert await scheduler.step()
        assert scheduler._scheduler is not None
        jobs = {job.id: job for job in scheduler._scheduler.get_jobs()}
        assert set(jobs) == {f"scan:{s}" for s in SOURCES}
        for job in jobs.values():
            assert job.coalesce is True and job.max_instances == 1
            assert job.misfire_grace_time == 90
            assert job.trigger.interval.total_seconds() == 300
        assert await scheduler.step()  # renewing adds nothing (replace_existing, same ids)
        assert len(scheduler._scheduler.get_jobs()) == 2
        scheduler.close()


def test_factbot_monitor_says_what_is_missing(tmp_path: object) -> None:
    from click.testing import CliRunner

    from bots.cli.main import main

    env = {"FACTBOT_DATA_DIR": f"{tmp_path}/data"}
    result = CliRunner().invoke(main, ["monitor"], env=env)
    assert result.exit_code == 2 and "FACTBOT_MONITOR__ENABLED=true" in result.output
    result = CliRunner().invoke(main, ["monitor"], env={**env, "FACTBOT_MONITOR__ENABLED": "true"})
    assert result.exit_code == 2 and "FACTBOT_MONITOR__SLACK_CHANNELS" in result.output
    result = CliRunner().invoke(main, ["monitor", "--help"])
    assert result.exit_code == 0 and "Example" in result.output
    result = CliRunner().invoke(main, ["serve", "--monitor"], env=env)
    assert result.exit_code == 2 and "FACTBOT_MONITOR__ENABLED=true" in result.output


async def test_periodic_jobs_are_enqueued_once_per_slot_by_the_lease_holder(
    tmp_path: object,
) -> None:
    clock = FakeClock(datetime(2026, 3, 2, 12, 0, tzinfo=UTC))
    status = Periodic("x-notes-status", "x:notes-status", 3600)
    with Store.open(f"{tmp_path}/p.db", clock=clock) as store:
        monitor = MonitorSettings(enabled=True, lease_seconds=30, interval_seconds=300)

        def make_one(holder: str) -> MonitorScheduler:
            return MonitorScheduler(
                store, monitor, (), holder=holder, clock=clock, trigger=at_now, periodic=[status]
            )

        first, second = make_one("first"), make_one("second")
        assert await first.step() and not await second.step()
        await first.wait_events(1)
        assert await second.enqueue_periodic(status) is None  # no lease, no job
        assert await first.enqueue_periodic(status) is not None  # the same slot: the same row
        slot = int(clock.now().timestamp() // 3600)
        rows = store.db.execute(
            "SELECT dedupe_key, json_extract(payload, '$.key') FROM jobs WHERE kind = ?",
            ["x:notes-status"],
        ).fetchall()
        assert [tuple(r) for r in rows] == [
            (periodic_dedupe(status, slot), f"x-notes-status:{slot}")
        ]
        clock.advance(3600)
        assert await first.step()  # the lease lapsed meanwhile: renewed before the next slot
        assert await first.enqueue_periodic(status) is not None
        assert store.db.execute("SELECT count(*) FROM jobs").fetchone()[0] == 2
        first.close()
        second.close()
