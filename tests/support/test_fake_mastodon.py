"""The stand-in Mastodon answers the real Mastodon.py as an instance does: limits, pages by
since_id, Idempotency-Key, 422 over the limit, 429 with X-RateLimit-Reset."""

from __future__ import annotations

import asyncio
import time

import pytest
from mastodon import Mastodon
from mastodon.errors import MastodonAPIError, MastodonRatelimitError

from tests.support.fake_mastodon import TOKEN, FakeMastodon


async def test_the_real_client_against_the_stand_in() -> None:
    async with FakeMastodon(max_characters=100) as fake:
        api = Mastodon(
            access_token=TOKEN,
            api_base_url=fake.url,
            ratelimit_method="throw",
            version_check_mode="none",
        )

        def run() -> None:
            assert api.instance_v2()["configuration"]["statuses"]["max_characters"] == 100
            bob = fake.user("bob")
            fake.mention(bob)
            fake.add_status(bob, "not a mention")
            second = fake.mention(bob)
            since = fake.notifications[0]["id"]
            notes = api.notifications(types=["mention"], since_id=since)
            assert [str(n["status"]["id"]) for n in notes] == [second["id"]]
            made = api.status_post("x" * 20, in_reply_to_id=second["id"], idempotency_key="k")
            again = api.status_post("x" * 20, in_reply_to_id=second["id"], idempotency_key="k")
            assert made["id"] == again["id"] and len(fake.posted_by_bot()) == 1
            api.status_post("https://" + "a" * 200 + ".example " + "y" * 70)  # URL counts 23
            with pytest.raises(MastodonAPIError, match="character limit"):
                api.status_post("z" * 101)
            fake.script("GET", "/api/v1/notifications", 429, reset_in=30)
            with pytest.raises(MastodonRatelimitError):
                api.notifications()
            assert api.ratelimit_reset is not None and api.ratelimit_reset > time.time()

        await asyncio.to_thread(run)
