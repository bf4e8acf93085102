"""The platform runtime: guards, one check job and one reply job per event, exactly one answer.

The platform here is a recording sender standing where an adapter's `ReplySender` would be
(the adapters' own tests drive the real discord.py and slack-bolt against stand-in servers);
everything on factbot's side — the store, the guards, the App over a small ingested index, the
worker pool with check and reply jobs — is real.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from bots.app.root import App
from bots.runtime.delivery.replies import ReplyRejectedError
from bots.runtime.platform.contract import Actor, Answer, CheckRequest, Destination, Rendered
from bots.runtime.platform.intake import PlatformService, reply_kind
from bots.runtime.platform.privacy import redact_expired
from bots.runtime.service import build_pool, stop_when_idle
from bots.settings import BudgetSettings, GuardSettings, JobSettings, Settings
from pipeline.evidence.ingest import Ingester
from pipeline.records.domain import Post
from storage import Store
from tests.conftest import FIXTURES
from tests.support.clock import FakeClock

PLATFORM = "chat"
CLAIM = "5G networks spread the coronavirus."


@dataclass
class Sender:
    """A platform that records what it is asked to post (and can refuse the first tries)."""

    platform: str = PLATFORM
    sent: list[tuple[Destination, Answer]] = field(default_factory=list)
    refuse: int = 0
    extra_link: str | None = None  # added to corrections (a renderer bug, or an injection)
    extra_link_always: bool = False
    lost_before_post: int = 0
    lost_after_post: int = 0

    def render(self, answer: Answer, destination: Destination) -> Rendered:
        text = answer.correction.text if answer.correction else answer.message
        refs = [r.url for r in answer.correction.references] if answer.correction else []
        if self.extra_link and (answer.correction or self.extra_link_always):
            refs.append(self.extra_link)
        return Rendered(payload=answer, texts=(text, *refs, *answer.notes))

    async def send(self, destination: Destination, rendered: Rendered) -> str | None:
        if self.refuse:
            self.refuse -= 1
            raise ReplyRejectedError("channel_not_found")
        if self.lost_before_post:
            self.lost_before_post -= 1
            raise ConnectionResetError("the connection dropped before the platform got it")
        self.sent.append((destination, rendered.payload))
        if self.lost_after_post:
            self.lost_after_post -= 1
            raise ConnectionResetError("the platform posted it; its answer was lost")
        return f"m{len(self.sent)}"


@dataclass
class FindingSender(Sender):
    """A platform that can be asked whether a reply with a given key was posted."""

    lookups: int = 0

    async def find_sent(self, destination: Destination) -> str | None:
        self.lookups += 1
        key = destination.public["reply_key"]
        for n, (dest, _) in enumerate(self.sent, 1):
            if dest.public["reply_key"] == key:
                return f"m{n}"
        return None


def _settings(folder: Path, **groups: Any) -> Settings:
    jobs = JobSettings(poll_seconds=0.02, heartbeat_seconds=5.0, backoff_initial=0, backoff_max=0)
    return Settings(data_dir=folder, jobs=jobs, **groups)


@pytest.fixture
def app(
    tmp_path: Path, embedder: Any, database_url: str | None, corpus_in: Callable[[Path], Path]
) -> Iterator[App]:
    """The App over the small corpus, on each engine (SQLite, PostgreSQL)."""
    folder = corpus_in(tmp_path / "d")  # the evidence index is the node's SQLite on both
    opened = App(_settings(folder, database_url=database_url), embedder=embedder)
    yield opened
    opened.close()


def _request(
    event: str = "e1",
    *,
    text: str = CLAIM,
    user: str = "U1",
    channel: str = "C1",
    bot: bool = False,
    author_bot: bool = False,
) -> CheckRequest:
    return CheckRequest(
        post=Post(id=f"p-{event}", platform=PLATFORM, platform_id=f"m-{event}", text=text),
        requester=Actor(PLATFORM, user, is_bot=bot),
        author=Actor(PLATFORM, "U9", is_bot=author_bot),
        destination=Destination(
            PLATFORM, "W1", channel, message_id=f"m-{event}", private={"token": "secret-xyz"}
        ),
        event_key=event,
    )


def _drain(app: App, sender: Sender) -> None:
    async def go() -> None:
        pool = build_pool(app, concurrency=1, senders={PLATFORM: sender})
        stop = asyncio.Event()
        await asyncio.gather(pool.run(stop), stop_when_idle(app.store, stop, poll=0.05))

    asyncio.run(go())


def test_an_accepted_request_gets_exactly_one_correction_with_retrieved_references(
    app: App,
) -> None:
    service = PlatformService(app.store, app.settings)
    sender = Sender()
    intakes = [asyncio.run(service.intake(_request("e1"))) for _ in range(3)]  # redelivered
    assert [i.status for i in intakes] == ["accepted", "duplicate", "duplicate"]
    assert intakes[0].answer is not None and intakes[0].answer.private
    _drain(app, sender)
    assert len(sender.sent) == 1
    dest, answer = sender.sent[0]
    assert answer.kind == "correction" and answer.correction is not None
    assert answer.check is not None and answer.check.id == intakes[0].check_id
    retrieved = {e.document.url for e in answer.check.evidence}
    assert answer.correction.references
    assert {r.url for r in answer.correction.references} <= retrieved
    assert dest.private == {"token": "secret-xyz"}
    # Once sent: one ledger row, the private part gone from the job, the requester pseudonymised.
    reply_job = app.store.jobs.get(str(intakes[0].job_id))
    assert reply_job is not None and reply_job.status == "done"
    assert "secret-xyz" not in json.dumps(reply_job.payload)
    stored = app.store.platform.find(PLATFORM, "e1")
    assert stored is not None and stored.requester.startswith("u_") and "U1" not in stored.requester
    assert app.store.jobs.post(str(stored.post_id)).author == stored.author  # type: ignore[union-attr]
    # A fourth delivery after the answer still sends nothing.
    assert asyncio.run(service.intake(_request("e1"))).status == "duplicate"
    _drain(app, sender)
    assert len(sender.sent) == 1


def test_a_second_request_for_the_same_post_is_answered_from_the_stored_check(
    app: App,
) -> None:
    service = PlatformService(app.store, app.settings, reuse=app.reuse)
    sender = Sender()
    first = asyncio.run(service.intake(_request("e1")))
    _drain(app, sender)
    second = asyncio.run(service.intake(_request("e2")))
    assert second.status == "accepted" and second.reason == "reused"
    assert second.check_id == first.check_id
    _drain(app, sender)
    assert [a.check.id for _, a in sender.sent] == [first.check_id] * 2  # type: ignore[union-attr]


def test_a_post_with_images_is_not_answered_from_a_check_of_its_words_alone(app: App) -> None:
    service = PlatformService(app.store, app.settings, reuse=app.reuse)
    first = asyncio.run(service.intake(_request("e1")))
    _drain(app, Sender())
    shot = _request("e2")
    shot = dataclasses.replace(
        shot, post=dataclasses.replace(shot.post, image_refs=("https://cdn.example/shot.png",))
    )
    second = asyncio.run(service.intake(shot))
    assert second.status == "accepted" and second.reason == "queued"  # checked, images and all
    assert second.check_id != first.check_id


def test_bots_are_ignored_and_bot_posts_refused_without_storing_anything(app: App) -> None:
    service = PlatformService(app.store, app.settings)
    ignored = asyncio.run(service.intake(_request("e1", bot=True)))
    assert ignored.status == "ignored" and ignored.answer is None
    refused = asyncio.run(service.intake(_request("e2", author_bot=True)))
    assert refused.status == "refused" and refused.answer is not None
    assert "bots" in refused.answer.message and refused.answer.private
    assert app.store.jobs.counts()["queued"] == 0
    assert app.store.platform.find(PLATFORM, "e2") is None


def test_a_rate_limit_refuses_once_per_spell_and_refills_with_time(tmp_path: Path) -> None:
    clock = FakeClock()
    settings = _settings(tmp_path, guards=GuardSettings(user_burst=2, user_per_hour=6))
    with Store.open(tmp_path / "f.db", clock=clock) as store:
        service = PlatformService(store, settings, clock=clock)
        results = [asyncio.run(service.intake(_request(f"e{n}"))) for n in range(5)]
        assert [r.status for r in results] == ["accepted"] * 2 + ["refused"] * 3
        assert results[2].answer is not None and "try again in about 10 minutes" in (
            results[2].answer.message
        )
        assert results[3].answer is None and results[4].answer is None  # said once
        # Another user is not limited by this one.
        assert asyncio.run(service.intake(_request("o1", user="U2"))).status == "accepted"
        clock.advance(600)  # one token back
        assert asyncio.run(service.intake(_request("e10"))).status == "accepted"
        again = asyncio.run(service.intake(_request("e11")))
        assert again.status == "refused" and again.answer is not None  # a new spell: said again


def test_daily_checks_budget_is_per_workspace_and_resets_next_day(tmp_path: Path) -> None:
    clock = FakeClock()
    settings = _settings(tmp_path, budgets=BudgetSettings(checks_per_day=2, usd_per_month=0))
    with Store.open(tmp_path / "f.db", clock=clock) as store:
        service = PlatformService(store, settings, clock=clock)
        statuses = [
            asyncio.run(service.intake(_request(f"e{n}", user=f"U{n}"))).status for n in range(3)
        ]
        assert statuses == ["accepted", "accepted", "refused"]
        clock.advance(24 * 3600)
        assert asyncio.run(service.intake(_request("e9", user="U9"))).status == "accepted"


def test_channel_lists_opt_outs_and_length_are_refused_privately(tmp_path: Path) -> None:
    settings = _settings(
        tmp_path, guards=GuardSettings(deny_channels=[f"{PLATFORM}:C666"], max_post_chars=100)
    )
    with Store.open(tmp_path / "f.db") as store:
        service = PlatformService(store, settings)
        denied = asyncio.run(service.intake(_request("e1", channel="C666")))
        assert denied.status == "refused" and "not enabled" in denied.answer.message  # type: ignore[union-attr]
        long = asyncio.run(service.intake(_request("e2", text="word " * 40)))
        assert long.status == "refused" and "too long" in long.answer.message  # type: ignore[union-attr]
        asyncio.run(service.set_opt_out(PLATFORM, "channel", "C7", True))
        assert asyncio.run(service.intake(_request("e3", channel="C7"))).status == "refused"
        confirm = asyncio.run(service.set_opt_out(PLATFORM, "user", "U1", True))
        assert confirm.private and "no longer" in confirm.message
        assert asyncio.run(service.intake(_request("e4"))).status == "refused"
        row = store.db.execute("SELECT subject FROM optouts WHERE scope = 'user'").fetchone()
        assert row[0].startswith("u_")
        asyncio.run(service.set_opt_out(PLATFORM, "user", "U1", False))
        assert asyncio.run(service.intake(_request("e5"))).status == "accepted"


def test_a_dead_check_ends_in_one_polite_private_failure(app: App) -> None:
    service = PlatformService(app.store, app.settings)
    sender = Sender()
    link_only = _request("e1", text="http://127.0.0.1:9/nothing-here")
    assert asyncio.run(service.intake(link_only)).status == "accepted"
    _drain(app, sender)
    assert len(sender.sent) == 1
    _, answer = sender.sent[0]
    assert answer.kind == "failure" and answer.private
    assert answer.message.startswith("factbot could not check this message"), [
        j.last_error for j in app.store.jobs.list()
    ]
    assert "Traceback" not in answer.message


def test_a_reply_whose_rendering_links_elsewhere_is_withheld(app: App) -> None:
    service = PlatformService(app.store, app.settings)
    sender = Sender(extra_link="see evil.example/phish")
    asyncio.run(service.intake(_request("e1")))
    _drain(app, sender)
    assert [a.kind for _, a in sender.sent] == ["failure"]  # the correction never left
    # A sender that adds the link to every message sends nothing at all; the job says why.
    broken = Sender(extra_link="https://evil.example/phish", extra_link_always=True)
    intake = asyncio.run(service.intake(_request("e2")))
    _drain(app, broken)
    assert broken.sent == []
    job = app.store.jobs.get(str(intake.job_id))
    assert job is not None and job.status == "dead" and "did not retrieve" in str(job.last_error)


def test_a_refused_send_is_retried_then_sent_once(app: App) -> None:
    service = PlatformService(app.store, app.settings)
    sender = Sender(refuse=1)
    asyncio.run(service.intake(_request("e1")))
    _drain(app, sender)
    assert len(sender.sent) == 1 and sender.sent[0][1].kind == "correction"


def test_a_reply_job_waits_for_its_check_even_across_workers(app: App) -> None:
    """A worker that stopped after the check leaves the reply to the next one: one answer."""
    service = PlatformService(app.store, app.settings)
    asyncio.run(service.intake(_request("e1")))

    async def checks_only() -> None:
        pool = build_pool(app, concurrency=1)  # no senders: it never claims reply jobs
        stop = asyncio.Event()

        async def until_checked() -> None:
            for _ in range(2000):  # polling the database: no event to wait on across workers
                if app.store.jobs.counts()["done"] >= 1:
                    break
                await asyncio.sleep(0.05)
            stop.set()

        await asyncio.gather(pool.run(stop), until_checked())

    asyncio.run(checks_only())
    reply = app.store.jobs.list()[0]
    assert reply.kind == reply_kind(PLATFORM) and reply.status == "queued"
    sender = Sender()
    _drain(app, sender)
    assert len(sender.sent) == 1


def test_retention_redacts_text_and_evidence_and_forget_deletes(
    tmp_path: Path, embedder: Any
) -> None:
    clock = FakeClock()
    app = App(_settings(tmp_path), embedder=embedder, clock=clock)
    try:
        asyncio.run(
            Ingester(app.store.documents, embedder).ingest([str(FIXTURES / "corpus.jsonl")])
        )
        service = PlatformService(app.store, app.settings, clock=clock)
        first = asyncio.run(service.intake(_request("e1")))
        _drain(app, Sender())
        check = app.store.checks.get(str(first.check_id))
        assert check.post.text == CLAIM and check.evidence
        assert redact_expired(app.store, app.settings.privacy) == 0
        clock.advance(31 * 24 * 3600)
        assert redact_expired(app.store, app.settings.privacy) == 1
        redacted = app.store.checks.get(str(first.check_id))
        assert redacted.post.text == "" and redacted.evidence == ()
        assert redacted.verdict.label == check.verdict.label
        assert [r.url for r in redacted.correction.references] == [
            r.url for r in check.correction.references
        ]
        # forget: everything of that user goes
        gone = service.forget(PLATFORM, user_id="U1")
        assert (gone.requests, gone.posts, gone.checks) == (1, 1, 1)
        assert app.store.platform.find(PLATFORM, "e1") is None
        assert app.store.db.execute("SELECT count(*) FROM checks").fetchone()[0] == 0
    finally:
        app.close()


@pytest.mark.parametrize("lost", ["before", "after"])
def test_a_send_cut_off_mid_call_is_settled_with_the_platform_exactly_once(
    app: App, lost: str
) -> None:
    service = PlatformService(app.store, app.settings)
    sender = FindingSender(
        lost_before_post=int(lost == "before"), lost_after_post=int(lost == "after")
    )
    asyncio.run(service.intake(_request("e1")))
    _drain(app, sender)
    assert len(sender.sent) == 1 and sender.lookups == 1
    reply = app.store.replies.find(PLATFORM, "e1", "answer")
    assert reply is not None and reply.status == "sent" and reply.platform_reply_id == "m1"


def test_without_a_way_to_look_a_cut_off_send_is_never_repeated(app: App) -> None:
    service = PlatformService(app.store, app.settings)
    sender = Sender(lost_before_post=1)
    asyncio.run(service.intake(_request("e1")))
    _drain(app, sender)
    assert sender.sent == []  # at most once: silence is the price without a lookup
    reply = app.store.replies.find(PLATFORM, "e1", "answer")
    assert reply is not None and reply.status == "pending"


def test_the_report_page_escapes_and_keeps_platform_posts_private(app: App) -> None:
    from bots.dashboard.report import report_html

    service = PlatformService(app.store, app.settings)
    sender = Sender()
    asyncio.run(service.intake(_request("e1", text=CLAIM + " <script>alert(1)</script> Secret.")))
    _drain(app, sender)
    check = sender.sent[0][1].check
    assert check is not None
    page = report_html(check)
    assert "Secret." not in page.split("<h2>Claims</h2>")[0]  # no post section
    assert "<script>" not in page
    assert all(f"href='{r.url}'" in page for r in check.correction.references)
    own = report_html(
        dataclasses.replace(check, post=dataclasses.replace(check.post, platform="api"))
    )
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in own and "<script>" not in own


def test_concurrent_deliveries_of_one_event_are_stored_once_and_spend_one_token(
    tmp_path: Path, embedder: Any
) -> None:
    settings = _settings(tmp_path, guards=GuardSettings(user_burst=2, user_per_hour=1))
    app = App(settings, embedder=embedder)
    try:
        service = PlatformService(app.store, settings, reuse=app.reuse)  # awaits: they interleave

        async def deliver_three_times() -> list[str]:
            found = await asyncio.gather(*(service.intake(_request("e1")) for _ in range(3)))
            return sorted(i.status for i in found)

        assert asyncio.run(deliver_three_times()) == ["accepted", "duplicate", "duplicate"]
        # One post (a platform post: kind "post"), one check job, one reply job, one request row.
        kinds = [r["kind"] for r in app.store.db.query("SELECT kind FROM jobs")]
        assert sorted(kinds) == ["check", reply_kind(PLATFORM)]
        posts = [r["kind"] for r in app.store.db.query("SELECT kind FROM posts")]
        assert posts == ["post"]
        assert app.store.platform.find(PLATFORM, "e1") is not None
        assert asyncio.run(service.intake(_request("e1"))).status == "duplicate"  # a replay later
        assert len(list(app.store.db.query("SELECT id FROM jobs"))) == 2
        assert asyncio.run(service.intake(_request("e2"))).status == "accepted"  # token 2 of 2
        assert asyncio.run(service.intake(_request("e3"))).status == "refused"
    finally:
        app.close()


ARTICLE = """<html><head><title>Viral post claims 5G spreads the virus</title></head><body>
<article><h1>Viral post claims 5G spreads the virus</h1>
<p>A post shared thousands of times claims that 5G networks spread the coronavirus.</p>
<p>The post says the new towers carry the virus from city to city.</p></article></body></html>"""


@pytest.mark.parametrize("page", ["article", "missing"])
def test_a_post_that_is_only_a_link_is_checked_on_the_page_it_shares(
    tmp_path: Path, embedder: Any, page: str
) -> None:
    from bots.settings import FetchSettings
    from tests.support.httpserver import serve

    fetch = FetchSettings(allowed_networks=["127.0.0.1/32"], respect_robots=False)
    app = App(_settings(tmp_path, fetch=fetch), embedder=embedder)
    try:
        asyncio.run(
            Ingester(app.store.documents, embedder).ingest([str(FIXTURES / "corpus.jsonl")])
        )
        service = PlatformService(app.store, app.settings)
        sender = Sender()
        with serve() as server:
            if page == "article":
                server.add("/story", ARTICLE)
            url = server.url("/story")
            asyncio.run(service.intake(_request("e1", text=f"is this true?? {url}")))
            _drain(app, sender)
        [(_, answer)] = sender.sent
        if page == "missing":  # one polite failure that says what went wrong
            assert answer.kind == "failure" and "could not" in answer.message
            return
        assert answer.kind == "correction" and answer.check is not None
        assert answer.check.post.text == f"is this true?? {url}"  # the post as it was given
        assert any("5G" in c.text for c in answer.check.claims)
        assert answer.correction is not None and answer.correction.references
    finally:
        app.close()
