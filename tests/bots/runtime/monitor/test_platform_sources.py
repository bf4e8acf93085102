"""The monitor over the polled platforms' own sources: the real Mastodon.py against the
stand-in instance (trending statuses), the real scheduler with a date trigger at now, real
SQLite, workers running the scan, the check over the small corpus, the routing and the reply."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable

import pytest

from bots.app.root import App
from bots.settings import MastodonSettings, MonitorSettings
from tests.bots.runtime.monitor.conftest import CLAIM, ingest, scheduler_for, work_until_idle
from tests.support.clock import FakeClock
from tests.support.fake_mastodon import TOKEN, FakeMastodon

pytestmark = pytest.mark.slow  # a whole check (~20 s on 2 shared cores)


@pytest.fixture
async def masto() -> AsyncIterator[FakeMastodon]:
    async with FakeMastodon(max_characters=500) as fake:
        yield fake


async def test_a_trending_false_post_gets_one_auto_reply_and_a_rescan_adds_none(
    masto: FakeMastodon, monitor_app: Callable[..., App], clock: FakeClock
) -> None:
    alice = masto.user("alice", followers=5000)
    claim = masto.add_status(alice, CLAIM, visibility="public")
    chatter = masto.add_status(
        masto.user("bob"), "good morning, lovely weather", visibility="public"
    )
    masto.trends += [claim["id"], chatter["id"]]
    app = monitor_app(
        MonitorSettings(enabled=True, auto_reply=["mastodon"], threshold=0.3, topics=["5g"]),
        mastodon=MastodonSettings(api_base_url=masto.url, access_token=TOKEN, trending=True),
    )
    await ingest(app)
    assert "mastodon:trending" in app.monitor_sources
    scheduler = scheduler_for(app, "one")
    assert await scheduler.step()
    await scheduler.wait_events(1)
    await work_until_idle(app)
    scheduler.close()

    # A Mastodon post is known by its URI, which ends with the status id.
    rows = {r.post_id.rsplit("/", 1)[-1]: r for r in app.store.monitor.candidates()}
    assert rows[str(claim["id"])].outcome == "reply"
    assert rows[str(chatter["id"])].reason == "score"
    posted = masto.posted_by_bot()
    assert posted, "no reply was posted"
    assert posted[0].form["in_reply_to_id"] == str(claim["id"])
    assert {p.form["visibility"] for p in posted} <= {"public", "unlisted"}
    check = app.store.checks.get(str(rows[str(claim["id"])].check_id))
    urls = {r.url for r in check.correction.references}
    text = "\n".join(p.text for p in posted)
    assert urls and all(u in text for u in urls)

    # The next slot scans again: the post is known, the thread answered; nothing new is posted.
    clock.advance(app.settings.monitor.interval_seconds)
    again = scheduler_for(app, "two")
    assert await again.step()
    await again.wait_events(1)
    await work_until_idle(app)
    again.close()
    assert len(masto.posted_by_bot()) == len(posted)
