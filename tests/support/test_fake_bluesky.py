"""The stand-in Bluesky speaks XRPC as the real atproto client expects, and refuses what Bluesky
refuses (posts over 300 graphemes, facets outside the text, replies to unknown posts)."""

from __future__ import annotations

import pytest
from atproto import AsyncClient, models
from atproto.exceptions import BadRequestError, RateLimitExceededError

from tests.support.fake_bluesky import BOT_DID, BOT_HANDLE, PASSWORD, FakeBluesky


async def test_the_real_client_logs_in_refreshes_and_posts_within_the_rules() -> None:
    async with FakeBluesky() as fake:
        client = AsyncClient(base_url=fake.url)
        await client.login(BOT_HANDLE, PASSWORD)
        assert client.me is not None and client.me.did == BOT_DID
        old_refresh = client.export_session_string().split(":::")[3]
        await client._refresh_and_set_session()
        assert old_refresh not in fake.refresh  # refresh tokens are single-use
        bob = fake.user("bob.test")
        parent = fake.add_post(bob, "héllo 👋")
        ref = models.create_strong_ref(
            models.ComAtprotoRepoStrongRef.Main(uri=parent["uri"], cid=parent["cid"])
        )
        reply = models.AppBskyFeedPost.ReplyRef(root=ref, parent=ref)
        made = await client.send_post("👍" * 300, reply_to=reply)
        assert fake.posts[made.uri]["record"]["reply"]["parent"]["uri"] == parent["uri"]
        with pytest.raises(BadRequestError, match="300 graphemes"):
            await client.send_post("a" * 301)
        bad = models.AppBskyRichtextFacet.Main(
            index=models.AppBskyRichtextFacet.ByteSlice(byte_start=0, byte_end=99),
            features=[models.AppBskyRichtextFacet.Link(uri="https://x.example")],
        )
        with pytest.raises(BadRequestError, match="outside"):
            await client.send_post("short", facets=[bad])
        fake.mention(bob)
        listed = await client.app.bsky.notification.list_notifications()
        assert listed.notifications[0].reason == "mention"
        fake.script("app.bsky.feed.getPosts", 429, headers={"ratelimit-reset": "1700000000"})
        with pytest.raises(RateLimitExceededError) as raised:
            await client.get_posts([parent["uri"]])
        assert raised.value.reset_at is not None
        assert fake.calls("app.bsky.feed.getPosts")[0].auth
        await client.request.close()
