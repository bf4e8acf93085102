"""Scan decisions and the posting policy over real SQLite and the real job queue.

Candidates are built as a source would build them; the checks they get are stored records
(a false verdict on high-credibility evidence, an accurate one, ...) completing the check job
through the queue, so what is under test is the monitor: scores, budgets, the thread and
author limits, and where each result goes (reply, Community Note, review, nothing).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from bots.runtime.monitor import monitor_handlers
from bots.runtime.monitor.candidates import Candidate
from bots.runtime.monitor.policy import decide
from bots.runtime.monitor.route import RouteJobs
from bots.runtime.monitor.scan import ROUTE, ScanJobs
from bots.runtime.platform.contract import Actor, Destination
from bots.runtime.review.proposals import ReviewQueue
from bots.runtime.workers.pool import PermanentJobError
from bots.settings import MonitorSettings, Settings
from pipeline.records.domain import (
    Check,
    Claim,
    ClaimVerdict,
    Correction,
    Document,
    Evidence,
    Label,
    Passage,
    Post,
    Tier,
    Verdict,
    new_id,
)
from storage import Store
from storage.jobs import Job
from tests.support.clock import FakeClock

CLAIM = "Pfizer said 5 million people died of measles in 2021."  # claim part 1.0: score 0.55


class XOn(BaseModel):
    notes_enabled: bool = True


def candidate(
    n: int,
    *,
    platform: str = "slack",
    text: str = CLAIM,
    author: str = "U1",
    thread: str | None = None,
    mentions_bot: bool = False,
    followers: int = 0,
) -> Candidate:
    post_id = str(1_000_000 + n) if platform == "x" else f"T1:C1:{n}"  # X: tweet ids
    return Candidate(
        source=f"{platform}:test",
        post=Post(id=new_id(), platform=platform, platform_id=post_id, text=text),
        author=Actor(platform, author),
        destination=Destination(platform, "T1", "C1", message_id=str(n), thread_id=str(n)),
        thread_key=thread or post_id,
        mentions_bot=mentions_bot,
        followers=followers,
    )


def check_for(
    store: Store, job: Job, label: Label, tier: Tier = Tier.HIGH, cost: float = 0.0
) -> Check:
    post = store.jobs.post(str(job.post_id))
    assert post is not None
    claim = Claim(id=new_id(), post_id=post.id, position=0, text=post.text)
    document = Document(
        id=new_id(), url="https://who.example/a", domain="who.example", title="A", text="t"
    )
    evidence = Evidence(
        id=new_id(),
        claim_id=claim.id,
        passage=Passage(id=new_id(), document_id=document.id, position=0, text="t"),
        document=document,
        relevance=0.9,
        tier=tier,
    )
    verdict = Verdict(label, (ClaimVerdict(claim.id, label, "r", evidence_ids=(evidence.id,)),))
    from pipeline.records.domain import ModelUsage

    usage = (ModelUsage("judge", 1, 10, 10, cost, 0.1),) if cost else ()
    return Check(
        id=str(job.payload["check_id"]),
        post=post,
        claims=(claim,),
        evidence=(evidence,),
        verdict=verdict,
        correction=Correction(label=label, headline="This post is false."),
        usage=usage,
    )


def finish_checks(store: Store, label: Label, **options: Any) -> list[Check]:
    """Complete every queued check job with a stored check of the given verdict."""
    done = []
    while (job := store.jobs.claim("checker", lease=60, kinds=("check",))) is not None:
        check = check_for(store, job, label, **options)
        store.jobs.complete(
            job, "checker", result_id=check.id, store=lambda c=check: store.checks.save(c)
        )
        done.append(check)
    return done


async def route_all(store: Store, router: RouteJobs) -> list[str]:
    outcomes = []
    while (job := store.jobs.claim("router", lease=60, kinds=(ROUTE,))) is not None:
        outcome = await router.run(job)
        store.jobs.complete(job, "router", result_id=outcome.result_id)
        outcomes.append(str(outcome.result_id))
    return outcomes


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(datetime(2026, 3, 2, 12, 0, tzinfo=UTC))


@pytest.fixture
def db(tmp_path: Path, clock: FakeClock, open_store: Callable[..., Store]) -> Store:
    return open_store(tmp_path / "m.db", clock=clock)


def settings_with(**monitor: Any) -> Settings:
    base: dict[str, Any] = {"enabled": True, "auto_reply": ["slack:C1"], "checks_per_hour": 50}
    base.update(monitor)
    return Settings(monitor=MonitorSettings(**base))


def parts(
    store: Store, settings: Settings, clock: FakeClock, review: ReviewQueue | None = None
) -> tuple[ScanJobs, RouteJobs]:
    handlers = monitor_handlers(store, settings, {}, review=review, clock=clock)
    scan, route = handlers["monitor:scan"], handlers[ROUTE]
    assert isinstance(scan, ScanJobs) and isinstance(route, RouteJobs)
    return scan, route


def jobs_of(store: Store, kind: str) -> list[dict[str, Any]]:
    return list(store.db.query("SELECT * FROM jobs WHERE kind = ? ORDER BY created_at, id", [kind]))


async def test_a_false_post_gets_one_reply_per_thread_and_per_author(
    db: Store, clock: FakeClock
) -> None:
    scan, route = parts(db, settings_with(), clock)
    taken = await scan.take(
        [
            candidate(1, thread="T1:C1:1"),
            candidate(2, thread="T1:C1:1", author="U2"),  # the same thread, another author
            candidate(4, text="good morning everyone!"),
        ]
    )
    assert taken == {"checking": 2, "skipped: score": 1}
    finish_checks(db, Label.FALSE)
    assert sorted(await route_all(db, route)) == ["reply", "skipped: thread answered"]
    [reply] = jobs_of(db, "reply:slack")
    assert reply["dedupe_key"].startswith("reply:slack:monitor:")
    [action] = db.monitor.actions()
    assert action["route"] == "reply" and action["job_id"] == reply["id"]
    # The same author in other threads, checked at once: one answer a day (the setting).
    assert await scan.take([candidate(5, author="U8"), candidate(6, author="U8")]) == {
        "checking": 2
    }
    finish_checks(db, Label.FALSE)
    assert sorted(await route_all(db, route)) == ["reply", "skipped: author limit"]
    assert len(jobs_of(db, "reply:slack")) == 2
    # A later scan of an answered thread or author spends nothing on it.
    later = await scan.take(
        [candidate(7, thread="T1:C1:1", author="U7"), candidate(8, author="U8")]
    )
    assert later == {"skipped: thread answered": 1, "skipped: author limit": 1}
    assert await scan.take([candidate(1)]) == {"duplicate": 1}
    clock.advance(24 * 3600 + 1)  # a day later the author may be answered again
    assert await scan.take([candidate(9, author="U8")]) == {"checking": 1}


@pytest.mark.parametrize(
    ("label", "tier", "auto", "route"),
    [
        (Label.FALSE, Tier.HIGH, True, "reply"),
        (Label.MISLEADING, Tier.MEDIUM, True, "reply"),
        (Label.FALSE, Tier.HIGH, False, "review"),
        (Label.FALSE, Tier.LOW, True, "review"),  # no credible evidence
        (Label.UNVERIFIABLE, Tier.HIGH, True, "review"),
        (Label.PARTLY_ACCURATE, Tier.HIGH, True, "review"),
        (Label.ACCURATE, Tier.HIGH, True, "nothing"),
    ],
)
async def test_the_posting_policy_elsewhere_than_x(
    db: Store, clock: FakeClock, label: Label, tier: Tier, auto: bool, route: str
) -> None:
    settings = settings_with(auto_reply=["slack:C1"] if auto else ["discord"])
    review = ReviewQueue(db, settings, clock=clock)
    scan, router = parts(db, settings, clock, review)
    await scan.take([candidate(1)])
    [check] = finish_checks(db, label, tier=tier)
    assert await route_all(db, router) == [route]
    [row] = db.monitor.candidates()
    assert row.outcome == route
    assert len(jobs_of(db, "reply:slack")) == (route == "reply")
    assert len(review.pending()) == (route == "review")
    if route == "review":
        [proposal] = review.pending()
        assert proposal.key == "monitor:slack:T1:C1:1" and proposal.check_id == check.id
        assert proposal.check_job_id == row.check_job_id and proposal.reason
        assert proposal.text and proposal.destination["thread_id"] == "1"
    assert len(db.monitor.actions()) == (route != "nothing")  # accurate: recorded, nothing posted


async def test_on_x_a_post_whose_author_did_not_mention_factbot_gets_a_note_or_review(
    db: Store, clock: FakeClock
) -> None:
    notes_on = settings_with(auto_reply=["x"]).model_copy(update={"x": XOn()})
    review = ReviewQueue(db, notes_on, clock=clock)
    scan, router = parts(db, notes_on, clock, review)
    taken = await scan.take(
        [candidate(1, platform="x"), candidate(2, platform="x", author="U2", mentions_bot=True)]
    )
    assert taken == {"checking": 1, "skipped: mention": 1}  # the mention path answers that one
    finish_checks(db, Label.FALSE)
    assert await route_all(db, router) == ["note"]
    [note] = jobs_of(db, "x:note")
    [row] = [r for r in db.monitor.candidates() if r.post_id == "1000001"]
    import json

    assert json.loads(note["payload"]) == {
        "check_id": row.check_id,
        "check_job": row.check_job_id,
        "post_id": "1000001",
        "key": "x:note:1000001",
    }
    assert note["dedupe_key"] == "x:note:1000001" and note["waits_for"] == row.check_job_id
    assert jobs_of(db, "reply:x") == []  # never a reply under an author who did not ask

    # Community Notes off (or the X settings absent): review instead, never a reply.
    scan, router = parts(db, settings_with(auto_reply=["x"]), clock, review)
    await scan.take([candidate(3, platform="x", author="U3")])
    finish_checks(db, Label.FALSE)
    assert await route_all(db, router) == ["review"]
    [proposal] = review.pending()
    assert proposal.key == "monitor:x:1000003" and "Community Notes are off" in proposal.reason


async def test_budgets_keep_candidates_over_them_as_skipped(db: Store, clock: FakeClock) -> None:
    settings = settings_with(
        checks_per_hour=2, checks_per_day=3, usd_per_day=1.0, usd_per_check=0.1
    )
    scan, _ = parts(db, settings, clock)
    assert await scan.take([candidate(n, author=f"U{n}") for n in (1, 2, 3)]) == {
        "checking": 2,
        "skipped: budget": 1,
    }
    clock.advance(3601)  # the next hour: the day allows one more
    assert await scan.take([candidate(n, author=f"U{n}") for n in (4, 5)]) == {
        "checking": 1,
        "skipped: budget": 1,
    }
    kept = {r.post_id: r for r in db.monitor.candidates(status="skipped")}
    assert set(kept) == {"T1:C1:3", "T1:C1:5"} and all(r.reason == "budget" for r in kept.values())
    assert kept["T1:C1:3"].post["text"] == CLAIM  # nothing is lost


async def test_money_counts_estimates_until_the_recorded_cost(db: Store, clock: FakeClock) -> None:
    settings = settings_with(usd_per_day=0.25, usd_per_check=0.1)
    scan, router = parts(db, settings, clock)
    assert await scan.take([candidate(n, author=f"U{n}") for n in (1, 2, 3)]) == {
        "checking": 2,
        "skipped: budget": 1,
    }  # 2 x 0.10 estimated; a third would reach 0.30
    finish_checks(db, Label.ACCURATE, cost=0.01)
    assert await route_all(db, router) == ["nothing", "nothing"]
    assert db.monitor.recorded_cost(datetime(2026, 3, 2, tzinfo=UTC)) == pytest.approx(0.02)
    assert await scan.take([candidate(n, author=f"U{n}") for n in (4, 5)]) == {
        "checking": 2,
    }  # 0.02 recorded + 2 x 0.10 estimated = 0.22
    assert await scan.take([candidate(6, author="U6")]) == {"skipped: budget": 1}
    clock.advance(12 * 3600)  # a new UTC day
    assert await scan.take([candidate(7, author="U7")]) == {"checking": 1}


async def test_a_dead_check_posts_nothing_and_a_missing_queue_is_a_clear_error(
    db: Store, clock: FakeClock
) -> None:
    scan, router = parts(db, settings_with(), clock)
    await scan.take([candidate(1), candidate(2, author="U2")])
    job = db.jobs.claim("checker", lease=60, kinds=("check",))
    assert job is not None
    db.jobs.fail(job, "checker", "search down", permanent=True)
    finish_checks(db, Label.FALSE, tier=Tier.LOW)  # the second: no credible evidence → review
    results = []
    while (job := db.jobs.claim("router", lease=60, kinds=(ROUTE,))) is not None:
        try:
            results.append(str((await router.run(job)).result_id))
        except PermanentJobError as exc:
            results.append(str(exc))
    assert sorted(results) == [
        "failed",
        "the result goes to the review queue, but this worker has none (configure "
        "FACTBOT_REVIEW__*, then retry the job)",
    ]
    assert db.monitor.actions() == []


def test_policy_on_x_when_the_author_mentioned_factbot_is_the_general_one() -> None:
    check = Check(
        id="c",
        post=Post(id="p", platform="x", platform_id="1", text=CLAIM),
        claims=(),
        evidence=(),
        verdict=Verdict(Label.FALSE, ()),
        correction=Correction(Label.FALSE, "h"),
    )
    decision = decide(check, platform="x", channel_id="", mentions_bot=True, settings=Settings())
    assert decision.route == "review"  # no claim decided with credible evidence
    assert not decision.reason.startswith("X allows no reply")


def test_policy_without_x_settings_never_writes_notes() -> None:
    check = Check(
        id="c",
        post=Post(id="p", platform="x", platform_id="1", text=CLAIM),
        claims=(),
        evidence=(),
        verdict=Verdict(Label.FALSE, ()),
        correction=Correction(Label.FALSE, "h"),
    )
    decision = decide(check, platform="x", channel_id="", mentions_bot=False, settings=Settings())
    assert decision.route == "review"
    assert dataclasses.asdict(decision)["reason"].startswith("X allows no reply")


async def test_retention_deletes_the_text_of_old_candidates(db: Store, clock: FakeClock) -> None:
    from bots.runtime.platform.privacy import redact_expired

    settings = settings_with()
    scan, _ = parts(db, settings, clock)
    led = candidate(1)
    led = dataclasses.replace(led, post=dataclasses.replace(led.post, leads=("https://a.org/x",)))
    await scan.take([led, candidate(2, author="U2", text="good morning all")])
    assert redact_expired(db, settings.privacy) == 0
    clock.advance(31 * 86400)
    await scan.take([candidate(3, author="U3")])  # a new one keeps its text
    assert redact_expired(db, settings.privacy) == 2
    rows = {r.post_id: r for r in db.monitor.candidates()}
    assert rows["T1:C1:1"].post["text"] == "" and rows["T1:C1:2"].post["text"] == ""
    assert rows["T1:C1:3"].post["text"] == CLAIM and rows["T1:C1:1"].score > 0
    texts = dict(db.db.execute("SELECT platform_id, text FROM posts").fetchall())
    assert texts == {"T1:C1:1": "", "T1:C1:3": CLAIM}
    assert rows["T1:C1:1"].post["leads"] == []  # who suggested what goes with the text
    assert db.db.execute("SELECT leads FROM posts WHERE platform_id = 'T1:C1:1'").fetchone() == (
        "[]",
    )
    assert redact_expired(db, settings.privacy) == 0


async def test_a_candidate_goes_in_as_a_post_and_a_rescan_stores_nothing(
    db: Store, clock: FakeClock
) -> None:
    scan, _ = parts(db, settings_with(), clock)
    assert await scan.take([candidate(1)]) == {"checking": 1}
    assert await scan.take([candidate(1)]) == {"duplicate": 1}  # a source read again
    (check_job,) = jobs_of(db, "check")
    (route_job,) = jobs_of(db, ROUTE)
    assert check_job["dedupe_key"] == "monitor:slack:T1:C1:1"
    assert route_job["waits_for"] == check_job["id"]
    post = db.jobs.post(check_job["post_id"])
    assert post is not None and post.kind == "post"
    (row,) = db.monitor.candidates(status="checking")
    assert row.check_job_id == check_job["id"]
