"""Bluesky end to end: the real atproto client against the stand-in PDS, the real `factbot serve`
API with its worker and the adapter's notification poll, the real PlatformService, check and
reply jobs over the small index. Assertions are on the XRPC calls the library made."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from bots.settings import BlueskySettings, GuardSettings
from tests.support.fake_bluesky import BOT_DID, BOT_HANDLE, PASSWORD, FakeBluesky, graphemes
from tests.support.languages import POSTS, assert_reply_in, ingest_languages, language_of
from tests.support.logscan import debug_logs, leaks
from tests.support.platform_app import CLAIM, idle, make_app, serving

pytestmark = pytest.mark.slow  # each runs a whole check (~20 s on 2 shared cores)


@pytest.fixture(autouse=True)
def _corpus(tmp_path: Path, corpus_in: Callable[[Path], Path]) -> None:
    """Every App here serves tmp_path / "d": a copy of the indexed corpus."""
    corpus_in(tmp_path / "d")


@pytest.fixture
async def bsky() -> AsyncIterator[FakeBluesky]:
    async with FakeBluesky() as fake:
        yield fake


def settings_for(fake: FakeBluesky, **changes: Any) -> BlueskySettings:
    base: dict[str, Any] = {
        "handle": BOT_HANDLE,
        "app_password": PASSWORD,
        "service_url": fake.url,
        "poll_seconds": 0.05,
    }
    base.update(changes)
    return BlueskySettings(**base)


def ref(strong: dict[str, str]) -> tuple[str, str]:
    return strong["uri"], strong["cid"]


def evidence_urls(app: Any) -> set[str]:
    [row] = app.store.db.execute("SELECT check_id FROM platform_requests").fetchall()
    check = app.store.checks.get(row[0])
    return {r.url for r in check.correction.references}


async def test_a_mention_under_a_post_gets_one_threaded_reply_with_references(
    bsky: FakeBluesky, tmp_path: Path, embedder: Any, deployment: dict[str, Any]
) -> None:
    alice, bob = bsky.user("alice.test"), bsky.user("bob.test")
    claim = bsky.add_post(alice, CLAIM)
    asking = bsky.mention(bob, f"@{BOT_HANDLE} is this true? 🤔", reply_to=claim["uri"])
    app = make_app(tmp_path / "d", embedder, **deployment, bluesky=settings_for(bsky))
    async with serving(app):
        await idle(app)
    replies = bsky.replies_by_bot()
    assert replies, "no reply was posted"
    first = replies[0]["record"]
    # parent: the mention; root: the thread's root (the claim, which the mention answers).
    assert ref(first["reply"]["parent"]) == (asking["uri"], asking["cid"])
    assert ref(first["reply"]["root"]) == (claim["uri"], claim["cid"])
    for before, after in itertools.pairwise(replies):
        assert after["record"]["reply"]["parent"]["uri"] == before["uri"]
        assert after["record"]["reply"]["root"]["uri"] == claim["uri"]
    texts = [r["record"]["text"] for r in replies]
    assert all(graphemes(t) <= 300 for t in texts)
    linked = set()
    for reply in replies:
        raw = reply["record"]["text"].encode()
        for facet in reply["record"].get("facets") or []:
            span = raw[facet["index"]["byteStart"] : facet["index"]["byteEnd"]].decode()
            assert span == facet["features"][0]["uri"]
            linked.add(span)
    urls = evidence_urls(app)
    assert urls and linked == urls  # every reference is a link, nothing else is
    # The session was created once; the checked post is the claim, not the mention.
    assert bsky.sessions_created == 1
    [row] = app.store.db.execute("SELECT post_id FROM platform_requests").fetchall()
    post = app.store.db.execute(
        "SELECT platform_id, text FROM posts WHERE id = ?", [row[0]]
    ).fetchone()
    assert tuple(post) == (claim["uri"], CLAIM)
    assert bsky.seen_at == asking["indexedAt"]
    # The account is labelled as a bot on its profile.
    profile = bsky.records[(BOT_DID, "app.bsky.actor.profile", "self")]
    assert [v["val"] for v in profile["labels"]["values"]] == ["bot"]


async def test_a_restart_does_not_answer_again_and_resumes_the_session(
    bsky: FakeBluesky, tmp_path: Path, embedder: Any, deployment: dict[str, Any]
) -> None:
    bob = bsky.user("bob.test")
    bsky.mention(bob, f"{CLAIM} @{BOT_HANDLE}")
    app = make_app(tmp_path / "d", embedder, **deployment, bluesky=settings_for(bsky))
    async with serving(app):
        await idle(app)
    posted = len(bsky.replies_by_bot())
    assert posted >= 1
    app.close()
    again = make_app(tmp_path / "d", embedder, **deployment, bluesky=settings_for(bsky))
    try:
        async with serving(again, ingest=False):
            await idle(again)
            lists = len(bsky.calls("app.bsky.notification.listNotifications"))
            while len(bsky.calls("app.bsky.notification.listNotifications")) < lists + 2:  # noqa: ASYNC110 - polls the fake
                await asyncio.sleep(0.05)
    finally:
        again.close()
    assert len(bsky.replies_by_bot()) == posted
    assert bsky.sessions_created == 1  # the stored session was resumed, no second log-in
    # The mention itself was checked, without the bot's handle.
    [text] = again.store.db.execute("SELECT text FROM posts").fetchone()
    assert text == CLAIM


async def test_malformed_notifications_are_skipped_and_the_rest_answered(
    bsky: FakeBluesky,
    tmp_path: Path,
    embedder: Any,
    caplog: pytest.LogCaptureFixture,
    deployment: dict[str, Any],
) -> None:
    bob = bsky.user("bob.test")
    broken = bsky.add_post(bob, f"@{BOT_HANDLE} check")
    bsky.notify(broken, record={"$type": "app.bsky.feed.post"})  # no text
    bsky.notify(broken, reason="mention", cid=None)  # no CID: no reply can reference it
    bsky.mention(bob, f"{CLAIM} @{BOT_HANDLE}")
    bsky.script("app.bsky.feed.post", 500)  # nothing matches: records go to createRecord
    app = make_app(tmp_path / "d", embedder, **deployment, bluesky=settings_for(bsky))
    with caplog.at_level("ERROR"):
        async with serving(app):
            await idle(app)
    assert len(app.store.db.execute("SELECT id FROM platform_requests").fetchall()) == 1
    assert bsky.replies_by_bot()
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert errors.count("malformed Bluesky notification skipped") == 2
    assert "has no text" in str([getattr(r, "error", "") for r in caplog.records])


async def test_a_rate_limited_reply_is_posted_later_once(
    bsky: FakeBluesky, tmp_path: Path, embedder: Any, deployment: dict[str, Any]
) -> None:
    bob = bsky.user("bob.test")
    bsky.mention(bob, f"{CLAIM} @{BOT_HANDLE}")
    bsky.script(
        "com.atproto.repo.createRecord",
        429,
        headers={"ratelimit-limit": "5000", "ratelimit-remaining": "0", "ratelimit-reset": "1"},
    )
    app = make_app(tmp_path / "d", embedder, **deployment, bluesky=settings_for(bsky))
    async with serving(app):
        await idle(app)
    creates = bsky.calls("com.atproto.repo.createRecord")
    replies = bsky.replies_by_bot()
    assert len(creates) == len(replies) + 1  # one refused, then each part once
    assert replies


async def test_an_expired_access_token_is_refreshed_and_stored(
    bsky: FakeBluesky, tmp_path: Path, embedder: Any, deployment: dict[str, Any]
) -> None:
    bob = bsky.user("bob.test")
    app = make_app(tmp_path / "d", embedder, **deployment, bluesky=settings_for(bsky))
    async with serving(app):
        await idle(app, requests=0)
        stored = app.store.state.get("bluesky:session")
        bsky.expire_access()  # the server calls the token expired, whatever its exp says
        bsky.mention(bob, f"{CLAIM} @{BOT_HANDLE}")
        await idle(app)
    assert bsky.replies_by_bot()
    assert bsky.calls("com.atproto.server.refreshSession")
    assert app.store.state.get("bluesky:session") != stored
    assert bsky.sessions_created == 1


async def test_at_debug_a_round_trip_logs_no_token_text_or_did(
    bsky: FakeBluesky, tmp_path: Path, embedder: Any, deployment: dict[str, Any]
) -> None:
    alice, bob = bsky.user("alice-q7.test"), bsky.user("bob-k3.test")
    claim = bsky.add_post(alice, f"{CLAIM} amber-lynx")
    bsky.mention(bob, f"@{BOT_HANDLE} is this true? quartz-heron", reply_to=claim["uri"])
    with debug_logs() as logs:
        app = make_app(tmp_path / "d", embedder, **deployment, bluesky=settings_for(bsky))
        async with serving(app, log_level="DEBUG"):
            await idle(app)
    assert bsky.replies_by_bot(), "no reply was posted"
    text = logs.getvalue()
    assert "reply job finished" in text  # the round trip was logged
    tokens = [*bsky.access, *bsky.refresh]
    assert tokens
    secrets = [PASSWORD, *tokens, alice, bob, "amber-lynx", "quartz-heron"]
    assert leaks(text, secrets) == []


@pytest.mark.timeout(1500)  # a whole check per reply language on two shared cores
async def test_a_post_in_each_language_gets_a_reply_in_it_tagged_with_it(
    bsky: FakeBluesky, tmp_path: Path, embedder: Any
) -> None:
    bob = bsky.user("bob.test")
    asked = {
        bsky.mention(bob, f"@{BOT_HANDLE} {text}")["uri"]: code for code, text in POSTS.items()
    }
    guards = GuardSettings(user_burst=len(POSTS))  # one asker, a check per language at once
    app = make_app(tmp_path / "d", embedder, guards=guards, bluesky=settings_for(bsky))
    await ingest_languages(app)
    async with serving(app):
        await idle(app, requests=len(POSTS), seconds=1400)
    threads: dict[str, list[dict[str, Any]]] = {}
    for reply in bsky.replies_by_bot():
        threads.setdefault(reply["record"]["reply"]["root"]["uri"], []).append(reply)
    assert set(threads) == set(asked)
    rows = app.store.db.execute("SELECT check_id FROM platform_requests").fetchall()
    checks = {language_of(c): c for c in (app.store.checks.get(r[0]) for r in rows)}
    for uri, language in asked.items():
        records = [r["record"] for r in threads[uri]]
        assert all(r["langs"] == [language] for r in records)
        assert all(graphemes(r["text"]) <= 300 for r in records)
        assert_reply_in(language, checks[language], [r["text"] for r in records])
