"""The monitor on X: a watched search finds a false post whose author never mentioned factbot;
X allows no such reply, so the result goes to Community Notes. The real scheduler (a date
trigger at now), tweepy against the stand-in X, real SQLite, workers, the check and the note."""

from __future__ import annotations

from typing import Any

import pytest

from bots.settings import MonitorSettings
from storage.x_notes import XNotesRepo
from tests.bots.platforms.x.conftest import XBot
from tests.bots.runtime.monitor.conftest import scheduler_for
from tests.support.fake_x import FakeX

pytestmark = pytest.mark.slow  # a whole check over the index (~20 s on 2 shared cores)


async def test_a_found_false_post_goes_to_community_notes_never_to_a_reply(
    make_bot: Any, fake: FakeX
) -> None:
    bot: XBot = await make_bot(fake, notes_enabled=True, watch_queries=["5G"])
    bot.app.settings.monitor = MonitorSettings(enabled=True, threshold=0.3, topics=["5g"])
    assert "x:search:5G" in bot.app.monitor_sources
    scheduler = scheduler_for(bot.app, "one")
    assert await scheduler.step()
    await scheduler.wait_events(len(bot.app.monitor_sources))
    await bot.drain()
    scheduler.close()

    [row] = [r for r in bot.app.store.monitor.candidates() if r.post_id.endswith("1000")]
    assert row.outcome == "note"
    assert fake.created() == []  # no reply under a post whose author did not ask
    [note] = [n for n in XNotesRepo(bot.app.store.db).recent() if n.post_id == "1000"]
    assert note.status == "submitted" and note.urls and set(note.urls) <= bot.retrieved()
    assert [n.post_id for n in fake.notes] == ["1000"]
    assert fake.notes[0].test_mode is True
