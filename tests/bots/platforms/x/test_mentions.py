"""The X mention poller's age limit: on every poll, a mention older than an hour is passed over."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bots.platforms.x._client import XApi
from bots.platforms.x._mentions import SINCE_KEY, MentionPoller
from bots.settings import XSettings
from storage import Store
from storage.x_notes import ApiCosts
from tests.support.clock import FakeClock
from tests.support.fake_x import FakeX, x_time

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


class Service:
    """Takes every request it is handed (the poller's side of intake)."""

    def __init__(self) -> None:
        self.events: list[str] = []

    async def intake(self, request: Any) -> Any:
        self.events.append(request.event_key)
        return type("Intake", (), {"status": "accepted", "reason": ""})()


def ago(**delta: float) -> str:
    return x_time(NOW - timedelta(**delta))


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store.open(tmp_path / "x.db") as opened:
        yield opened


@pytest.fixture
async def fake() -> AsyncIterator[FakeX]:
    async with FakeX() as x:
        x.add_user("200", "alice")
        x.add_user("300", "bob")
        x.add_tweet("1000", "200", "5G towers spread viruses", created_at=ago(days=3))
        yield x


async def poller_on(fake: FakeX, store: Store, service: Service) -> MentionPoller:
    s = XSettings(bearer_token="user-token", api_base=fake.api_base, user_id="100")
    return MentionPoller(s, XApi(s, ApiCosts(store.db)), service, store.state, clock=FakeClock(NOW))


async def test_the_first_poll_answers_a_fresh_mention_and_passes_over_an_old_one(
    fake: FakeX, store: Store
) -> None:
    fake.add_tweet("1001", "300", "@factbot true?", replied_to="1000", created_at=ago(hours=2))
    fake.add_tweet("1002", "300", "@factbot and now?", replied_to="1000", created_at=ago(minutes=5))
    service = Service()
    poller = await poller_on(fake, store, service)
    result = await poller.poll_once()
    await poller.api.close()
    assert service.events == ["1002"]
    assert (result.seen, result.old, result.accepted, result.since_id) == (2, 1, 1, "1002")


async def test_a_later_poll_also_passes_over_old_mentions(fake: FakeX, store: Store) -> None:
    store.state.set(SINCE_KEY, "999")  # an earlier poll ran (factbot was then down a day)
    fake.add_tweet("1001", "300", "@factbot true?", replied_to="1000", created_at=ago(days=1))
    fake.add_tweet("1002", "300", "@factbot really?", replied_to="1000", created_at=ago(hours=1.5))
    service = Service()
    poller = await poller_on(fake, store, service)
    first = await poller.poll_once()
    assert service.events == [] and (first.old, first.since_id) == (2, "1002")  # passed over
    fake.add_tweet("1003", "300", "@factbot so?", replied_to="1000", created_at=ago(seconds=30))
    second = await poller.poll_once()
    await poller.api.close()
    assert service.events == ["1003"] and (second.old, second.accepted) == (0, 1)
    assert [c.query.get("since_id") for c in fake.calls("mentions")] == ["999", "1002"]
