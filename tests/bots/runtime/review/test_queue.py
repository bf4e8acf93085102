"""The review queue over a real SQLite store: proposals, decisions exactly once (threads racing
on their own connections, as processes do), edits checked for unretrieved links, expiry, and
the approved correction posted once through the real ReplyJobs and worker pool."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from bots.runtime.delivery.deliver import ReplyJobs
from bots.runtime.platform.contract import Answer, Destination, Rendered
from bots.runtime.review.proposals import (
    REVIEW_POST,
    AlreadyDecidedError,
    EditRefusedError,
    NotReadyError,
    Proposal,
    ProposalClosedError,
    ProposalNotFoundError,
    ReviewQueue,
)
from bots.runtime.service import stop_when_idle
from bots.runtime.workers.pool import WorkerConfig, WorkerPool
from bots.settings import JobSettings, ReviewSettings, Settings, SlackSettings
from storage import Store
from storage.jobs import Backoff
from tests.support.clock import FakeClock
from tests.support.review_checks import SOURCE, stored_check

PLATFORM = "chat"


@dataclass
class Sender:
    """A platform that records what it is asked to post."""

    platform: str = PLATFORM
    sent: list[tuple[Destination, Answer, Rendered]] = field(default_factory=list)
    extra: str = ""  # a renderer that adds text (e.g. a link) to every message

    def render(self, answer: Answer, destination: Destination) -> Rendered:
        if answer.kind == "correction" and answer.correction is not None:
            body = answer.correction.headline
            texts = (body, *(r.url for r in answer.correction.references))
        else:
            body = answer.message
            texts = (body,)
        if self.extra:
            texts = (*texts, self.extra)
        return Rendered(payload={"body": body}, texts=texts)

    async def send(self, destination: Destination, rendered: Rendered) -> str | None:
        self.sent.append((destination, rendered.payload, rendered))
        return f"m{len(self.sent)}"


def settings_for(tmp_path: Path, **review: Any) -> Settings:
    jobs = JobSettings(poll_seconds=0.01, heartbeat_seconds=5.0, backoff_initial=0, backoff_max=0)
    slack = SlackSettings(bot_token="xoxb-test", signing_secret="s")  # the review channel's
    return Settings(data_dir=tmp_path, jobs=jobs, slack=slack, review=ReviewSettings(**review))


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "review.db"


@pytest.fixture
def store(db_path: Path, clock: FakeClock, open_store: Callable[..., Store]) -> Iterator[Store]:
    with open_store(db_path, clock=clock) as opened:
        yield opened


def destination(message: str = "m-1") -> Destination:
    return Destination(
        PLATFORM,
        "W1",
        "C1",
        message_id=message,
        thread_id=message,
        public={"event_key": f"ev-{message}"},
        private={"interaction_token": "secret-token"},
    )


def propose(
    queue: ReviewQueue, store: Store, key: str = "monitor:chat:1", check: str = "check1"
) -> Proposal:
    stored_check(store, check)
    return queue.propose(check_id=check, destination=destination(), reason="needs a human", key=key)


def drain(store: Store, settings: Settings, sender: Sender, clock: FakeClock) -> None:
    """Run reply jobs with the real ReplyJobs until the queue is idle."""

    async def go() -> None:
        handlers = {f"reply:{PLATFORM}": ReplyJobs(store, {PLATFORM: sender}, settings)}
        config = WorkerConfig(poll_seconds=0.01, backoff=Backoff(initial=0, maximum=0))
        pool = WorkerPool(store, handlers, config, clock=clock)
        stop = asyncio.Event()
        await asyncio.gather(pool.run(stop), stop_when_idle(store, stop, poll=0.02))

    asyncio.run(go())


def test_propose_is_idempotent_on_its_key_and_keeps_the_private_part_apart(
    store: Store, tmp_path: Path, clock: FakeClock
) -> None:
    queue = ReviewQueue(store, settings_for(tmp_path), clock=clock)
    first = propose(queue, store)
    again = queue.propose(
        check_id="check1", destination=destination(), reason="again", key="monitor:chat:1"
    )
    assert again.id == first.id and again.reason == "needs a human"
    assert first.status == "pending" and first.decision is None
    assert first.private == {"interaction_token": "secret-token"}
    assert first.destination["private"] == {}
    assert first.text is not None and first.text.startswith("This post is false")
    assert SOURCE in first.text  # the evidence link is in the proposed text
    assert [p.id for p in queue.pending()] == [first.id]
    # No review channel configured: nothing to post it to (the dashboard shows it).
    assert store.jobs.counts()["queued"] == 0
    with pytest.raises(ProposalNotFoundError):
        queue.get("nope")


def test_a_proposal_waits_for_its_check_job_and_posts_its_card_when_configured(
    store: Store, tmp_path: Path, clock: FakeClock
) -> None:
    settings = settings_for(tmp_path, platform="slack", channel_id="CREV", reviewers=["U1"])
    queue = ReviewQueue(store, settings, clock=clock)
    check_job, _ = store.jobs.enqueue("check", {"check_id": "check2"})
    proposal = queue.propose(
        check_id="check2",
        destination=destination(),
        reason="why",
        key="k2",
        check_job=check_job.id,
    )
    assert proposal.text is None  # written when the check has ended
    [card_job] = [j for j in store.jobs.list() if j.kind == REVIEW_POST]
    assert card_job.waits_for == check_job.id and card_job.payload == {"proposal_id": proposal.id}
    assert proposal.card_job_id == card_job.id and proposal.card_platform == "slack"
    with pytest.raises(NotReadyError):
        queue.approve(proposal.id, reviewer="alice")


def test_the_first_decision_wins_and_later_clicks_are_told_who_decided(
    store: Store, tmp_path: Path, clock: FakeClock
) -> None:
    queue = ReviewQueue(store, settings_for(tmp_path), clock=clock)
    proposal = propose(queue, store)
    reviewer = queue.reviewer("slack", "U123")
    assert reviewer.startswith("slack:u_") and "U123" not in reviewer
    decision = queue.approve(proposal.id, reviewer=reviewer)
    assert decision.action == "approve" and decision.at == clock.now()
    with pytest.raises(AlreadyDecidedError) as raised:
        queue.approve(proposal.id, reviewer="bob")
    assert str(raised.value) == f"already approved by {reviewer} at 2026-01-01 00:00 UTC"
    assert raised.value.decision == decision
    with pytest.raises(AlreadyDecidedError):
        queue.reject(proposal.id, reviewer="carol")
    stored = queue.get(proposal.id)
    assert stored.status == "approved" and stored.decision == decision
    [reply] = [j for j in store.jobs.list() if j.kind == f"reply:{PLATFORM}"]
    assert stored.reply_job_id == reply.id
    assert reply.payload["event_key"] == f"review:{proposal.id}"
    assert reply.payload["review"] == proposal.id and "text" not in reply.payload
    assert reply.payload["destination"]["private"] == {"interaction_token": "secret-token"}
    assert queue.pending() == []


def test_concurrent_approvals_from_threads_decide_once_and_enqueue_one_reply(
    store: Store,
    db_path: Path,
    tmp_path: Path,
    clock: FakeClock,
    open_store: Callable[..., Store],
) -> None:
    settings = settings_for(tmp_path)
    proposal = propose(ReviewQueue(store, settings, clock=clock), store)
    outcomes: list[str] = []
    barrier = threading.Barrier(8)

    def click(n: int) -> None:
        with open_store(db_path, clock=clock) as own:  # its own connection, like a process
            queue = ReviewQueue(own, settings, clock=clock)
            barrier.wait()
            try:
                if n % 2:
                    queue.approve(proposal.id, reviewer=f"r{n}")
                else:
                    queue.approve(proposal.id, reviewer=f"r{n}", text=f"Edited {n}: see {SOURCE}")
                outcomes.append("won")
            except AlreadyDecidedError:
                outcomes.append("lost")

    threads = [threading.Thread(target=click, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["lost"] * 7 + ["won"]
    rows = store.db.execute("SELECT COUNT(*) FROM review_decisions").fetchone()[0]
    replies = [j for j in store.jobs.list() if j.kind.startswith("reply:")]
    assert rows == 1 and len(replies) == 1


async def test_concurrent_approvals_from_tasks_decide_once(
    store: Store,
    db_path: Path,
    tmp_path: Path,
    clock: FakeClock,
    open_store: Callable[..., Store],
) -> None:
    settings = settings_for(tmp_path)
    proposal = propose(ReviewQueue(store, settings, clock=clock), store)
    stores = [open_store(db_path, clock=clock) for _ in range(4)]

    async def click(own: Store, n: int) -> str:
        queue = ReviewQueue(own, settings, clock=clock)
        try:
            await asyncio.to_thread(queue.approve, proposal.id, reviewer=f"r{n}")
        except AlreadyDecidedError:
            return "lost"
        return "won"

    try:
        results = await asyncio.gather(*(click(s, n) for n, s in enumerate(stores)))
    finally:
        for own in stores:
            own.close()
    assert sorted(results) == ["lost"] * 3 + ["won"]


def test_an_edit_with_an_unretrieved_url_is_refused_and_nothing_is_decided(
    store: Store, tmp_path: Path, clock: FakeClock
) -> None:
    queue = ReviewQueue(store, settings_for(tmp_path), clock=clock)
    proposal = propose(queue, store)
    for bad in (
        "False. Read https://evil.example/truth instead.",
        "False, see [the source](https://evil.example/x)",
        "False: evil.example has it all",
    ):
        with pytest.raises(EditRefusedError) as raised:
            queue.approve(proposal.id, reviewer="alice", text=bad)
        assert "did not retrieve" in str(raised.value) and raised.value.links
        assert "Nothing was posted" in str(raised.value)
    with pytest.raises(EditRefusedError, match="empty"):
        queue.approve(proposal.id, reviewer="alice", text="   ")
    with pytest.raises(EditRefusedError, match="at most 3000"):
        queue.approve(proposal.id, reviewer="alice", text="x " * 2000)
    assert queue.get(proposal.id).status == "pending"
    assert store.jobs.counts()["queued"] == 0
    decision = queue.approve(proposal.id, reviewer="alice", text=f"  False. See {SOURCE}  ")
    assert decision.action == "edit" and decision.text == f"False. See {SOURCE}"
    [reply] = store.jobs.list(status="queued")
    assert reply.payload["text"] == f"False. See {SOURCE}"


def test_an_unchanged_text_is_a_plain_approval(
    store: Store, tmp_path: Path, clock: FakeClock
) -> None:
    queue = ReviewQueue(store, settings_for(tmp_path), clock=clock)
    proposal = propose(queue, store)
    decision = queue.approve(proposal.id, reviewer="alice", text=(proposal.text or "") + "\n")
    assert decision.action == "approve" and decision.text is None


def test_reject_is_recorded_and_forgets_the_private_part(
    store: Store, tmp_path: Path, clock: FakeClock
) -> None:
    queue = ReviewQueue(store, settings_for(tmp_path), clock=clock)
    proposal = propose(queue, store)
    decision = queue.reject(proposal.id, reviewer="dashboard-alice", reason=" not trending ")
    assert (decision.action, decision.reason) == ("reject", "not trending")
    stored = queue.get(proposal.id)
    assert stored.status == "rejected" and stored.private == {}
    with pytest.raises(AlreadyDecidedError, match="already rejected by dashboard-alice"):
        queue.approve(proposal.id, reviewer="bob")
    assert store.jobs.counts()["queued"] == 0


def test_proposals_expire_when_the_operator_says_so(
    store: Store, tmp_path: Path, clock: FakeClock
) -> None:
    queue = ReviewQueue(store, settings_for(tmp_path, expire_hours=2), clock=clock)
    proposal = propose(queue, store)
    clock.advance(2 * 3600 + 1)
    assert queue.pending() == []
    with pytest.raises(ProposalClosedError, match="expired"):
        queue.approve(proposal.id, reviewer="alice")
    assert queue.get(proposal.id).status == "expired"
    never = ReviewQueue(store, settings_for(tmp_path, expire_hours=0), clock=clock)
    late = propose(never, store, key="k-late", check="check-late")
    clock.advance(10 * 24 * 3600)
    assert [p.id for p in never.pending()] == [late.id]


def test_approval_posts_the_correction_once_through_reply_jobs(
    store: Store, tmp_path: Path, clock: FakeClock
) -> None:
    settings = settings_for(tmp_path)
    queue = ReviewQueue(store, settings, clock=clock)
    proposal = propose(queue, store)
    queue.approve(proposal.id, reviewer="alice")
    # A redelivered interaction that somehow queued a second reply job still posts nothing.
    payload = dict(store.jobs.list(status="queued")[0].payload)
    store.jobs.enqueue(f"reply:{PLATFORM}", payload, dedupe_key="a-second-one")
    sender = Sender()
    drain(store, settings, sender, clock)
    [(dest, body, _)] = sender.sent
    assert body == {"body": "This post is false: 5G does not spread the coronavirus."}
    assert dest.private == {"interaction_token": "secret-token"}
    assert dest.public["reply_key"] == f"factbot:{PLATFORM}:review:{proposal.id}:answer"
    stored = queue.get(proposal.id)
    assert stored.status == "posted" and stored.private == {}
    job = store.jobs.get(str(stored.reply_job_id))
    assert job is not None and "secret-token" not in json.dumps(job.payload)


def test_an_edited_text_is_posted_as_the_body_and_still_audited(
    store: Store, tmp_path: Path, clock: FakeClock
) -> None:
    settings = settings_for(tmp_path)
    queue = ReviewQueue(store, settings, clock=clock)
    edited = propose(queue, store)
    queue.approve(edited.id, reviewer="alice", text=f"Not true. The WHO explains: {SOURCE}")
    sender = Sender()
    drain(store, settings, sender, clock)
    [(_, body, _)] = sender.sent
    assert body == {"body": f"Not true. The WHO explains: {SOURCE}"}
    assert queue.get(edited.id).status == "posted"
    # A renderer that slips in a link nobody retrieved: nothing is posted, the proposal fails.
    second = propose(queue, store, key="k-2", check="check2")
    queue.approve(second.id, reviewer="alice", text="Not true.")
    bad = Sender(extra="more at https://evil.example/")
    drain(store, settings, bad, clock)
    assert bad.sent == []
    failed = queue.get(second.id)
    assert failed.status == "failed" and "did not retrieve" in str(failed.error)


def test_a_card_job_shows_a_proposal_and_refreshes_it_after_each_change(
    store: Store, tmp_path: Path, clock: FakeClock
) -> None:
    from bots.runtime.delivery.review_post import ReviewPostJobs
    from bots.runtime.review.proposals import ReviewCard

    @dataclass
    class Channel:
        platform: str = "slack"
        posted: list[tuple[ReviewCard, str]] = field(default_factory=list)
        updates: list[tuple[str, ReviewCard]] = field(default_factory=list)

        async def post(self, card: ReviewCard, *, key: str) -> str | None:
            self.posted.append((card, key))
            return "1700000000.000900"

        async def update(self, message_id: str, card: ReviewCard) -> None:
            self.updates.append((message_id, card))

    settings = settings_for(tmp_path, platform="slack", channel_id="CREV", reviewers=["U1"])
    queue = ReviewQueue(store, settings, clock=clock)
    channel = Channel()
    sender = Sender()

    async def run_all() -> None:
        handlers: dict[str, Any] = {
            REVIEW_POST: ReviewPostJobs(store, settings, channel, clock=clock),
            f"reply:{PLATFORM}": ReplyJobs(store, {PLATFORM: sender}, settings),
        }
        config = WorkerConfig(poll_seconds=0.01, backoff=Backoff(initial=0, maximum=0))
        pool = WorkerPool(store, handlers, config, clock=clock)
        stop = asyncio.Event()
        await asyncio.gather(pool.run(stop), stop_when_idle(store, stop, poll=0.02))

    proposal = propose(queue, store)
    asyncio.run(run_all())
    [(card, key)] = channel.posted
    assert card.status == "pending" and card.references[0].url == SOURCE
    assert key == f"factbot:slack:review-card:{proposal.id}:review-card"
    assert queue.get(proposal.id).card_message_id == "1700000000.000900"
    queue.approve(proposal.id, reviewer="slack:u_x")
    asyncio.run(run_all())
    assert len(channel.posted) == 1  # the card is posted once, then edited
    states = [c.status for _, c in channel.updates]
    assert states[-1] == "posted" and {m for m, _ in channel.updates} == {"1700000000.000900"}
    assert channel.updates[-1][1].decided_line().startswith("Approved by slack:u_x at ")
    assert len(sender.sent) == 1


def test_review_settings_say_how_to_fix_what_is_missing() -> None:
    with pytest.raises(ValueError, match="FACTBOT_REVIEW__CHANNEL_ID is not set"):
        ReviewSettings(platform="slack")
    with pytest.raises(ValueError, match="FACTBOT_REVIEW__REVIEWERS"):
        ReviewSettings(platform="discord", channel_id="1")
    with pytest.raises(ValueError, match="not a user or role id"):
        ReviewSettings(platform="slack", channel_id="C1", reviewers=["<@U1>"])
    ok = ReviewSettings(platform="discord", channel_id="1", reviewer_roles=["55"])
    assert ok.configured and not ReviewSettings().configured
    with pytest.raises(ValueError, match="Discord is not configured: set FACTBOT_DISCORD__TOKEN"):
        Settings(review=ok)
