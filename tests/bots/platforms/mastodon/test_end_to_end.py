"""Mastodon end to end: the real Mastodon.py against the stand-in instance, the real `factbot
serve` API with its worker and the adapter's notification poll, the real PlatformService, check
and reply jobs over the small index. Assertions are on the requests the library sent."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from bots.settings import GuardSettings, MastodonSettings
from tests.support.fake_mastodon import BOT_ACCT, TOKEN, FakeMastodon
from tests.support.languages import POSTS, assert_reply_in, ingest_languages, language_of
from tests.support.logscan import debug_logs, leaks
from tests.support.platform_app import CLAIM, idle, make_app, serving

pytestmark = pytest.mark.slow  # each runs a whole check (~20 s on 2 shared cores)


@pytest.fixture(autouse=True)
def _corpus(tmp_path: Path, corpus_in: Callable[[Path], Path]) -> None:
    """Every App here serves tmp_path / "d": a copy of the indexed corpus."""
    corpus_in(tmp_path / "d")


@pytest.fixture
async def masto() -> AsyncIterator[FakeMastodon]:
    async with FakeMastodon(max_characters=500) as fake:
        yield fake


def settings_for(fake: FakeMastodon, **changes: Any) -> MastodonSettings:
    base: dict[str, Any] = {
        "api_base_url": fake.url,
        "access_token": TOKEN,
        "poll_seconds": 0.05,
    }
    base.update(changes)
    return MastodonSettings(**base)


def references(app: Any) -> set[str]:
    [row] = app.store.db.execute("SELECT check_id FROM platform_requests").fetchall()
    return {r.url for r in app.store.checks.get(row[0]).correction.references}


async def test_a_mention_under_a_post_gets_one_threaded_reply_keeping_visibility(
    masto: FakeMastodon, tmp_path: Path, embedder: Any, deployment: dict[str, Any]
) -> None:
    alice, bob = masto.user("alice"), masto.user("bob@other.test")
    claim = masto.add_status(alice, CLAIM, visibility="unlisted")
    asking = masto.mention(bob, f"@{BOT_ACCT} is this true?", reply_to=claim["id"])
    app = make_app(tmp_path / "d", embedder, **deployment, mastodon=settings_for(masto))
    async with serving(app):
        await idle(app)
    posted = masto.posted_by_bot()
    assert posted, "no reply was posted"
    assert posted[0].form["in_reply_to_id"] == asking["id"]
    for before, after in itertools.pairwise(posted):
        assert after.form["in_reply_to_id"] == before.data["id"]
    # The narrowest of the mention's (public) and the claim's (unlisted) visibility.
    assert {p.form["visibility"] for p in posted} == {"unlisted"}
    assert posted[0].text.startswith("@bob@other.test ")
    keys = [p.key for p in posted]
    assert keys[0] and keys[0].startswith("factbot:mastodon:")
    assert len(set(keys)) == len(keys)
    urls = references(app)
    text = "\n".join(p.text for p in posted)
    assert urls and all(u in text for u in urls)
    # The instance's limit was read and kept.
    assert masto.calls("GET", "/api/v2/instance")
    assert app.store.state.get("mastodon:since_id") == masto.notifications[-1]["id"]


async def test_direct_stays_direct_with_the_mentions_and_a_restart_answers_nothing_again(
    masto: FakeMastodon, tmp_path: Path, embedder: Any, deployment: dict[str, Any]
) -> None:
    bob, carol = masto.user("bob"), masto.user("carol")
    masto.mention(bob, f"@{BOT_ACCT} @carol {CLAIM}", visibility="direct", also=[carol])
    app = make_app(
        tmp_path / "d", embedder, mastodon=settings_for(masto, public_replies="unlisted")
    )
    async with serving(app):
        await idle(app)
    posted = masto.posted_by_bot()
    assert posted and all(p.form["visibility"] == "direct" for p in posted)
    assert all(p.text.startswith("@bob @carol ") for p in posted)
    [text] = app.store.db.execute("SELECT text FROM posts").fetchone()
    assert text == f"@carol {CLAIM}"
    app.close()
    again = make_app(tmp_path / "d", embedder, **deployment, mastodon=settings_for(masto))
    try:
        async with serving(again, ingest=False):
            await idle(again)
            seen = len(masto.calls("GET", "/api/v1/notifications"))
            while len(masto.calls("GET", "/api/v1/notifications")) < seen + 2:  # noqa: ASYNC110 - polls the fake
                await asyncio.sleep(0.05)
    finally:
        again.close()
    assert len(masto.posted_by_bot()) == len(posted)
    since = masto.calls("GET", "/api/v1/notifications")[-1].query
    assert since["since_id"] == [masto.notifications[-1]["id"]] and since["types[]"] == ["mention"]


async def test_rate_limits_malformed_notifications_and_a_retried_post(
    masto: FakeMastodon,
    tmp_path: Path,
    embedder: Any,
    caplog: pytest.LogCaptureFixture,
    deployment: dict[str, Any],
) -> None:
    bob = masto.user("bob")
    masto.notify(None)  # a mention without its status
    masto.notify({"id": "9999", "content": "<p>x</p>"})  # no visibility
    masto.mention(bob, f"{CLAIM} @{BOT_ACCT}")
    masto.script("GET", "/api/v1/notifications", 429, reset_in=0.5)
    masto.script("POST", "/api/v1/statuses", 429, reset_in=0.2)
    app = make_app(tmp_path / "d", embedder, **deployment, mastodon=settings_for(masto))
    with caplog.at_level("ERROR"):
        async with serving(app):
            await idle(app)
    posted = masto.posted_by_bot()
    assert posted
    posts = masto.calls("POST", "/api/v1/statuses")
    assert len(posts) == len(posted) + 1  # the 429, then each status once
    assert posts[0].headers["idempotency-key"] == posts[1].headers["idempotency-key"]
    errors = [r.getMessage() for r in caplog.records if r.levelname == "ERROR"]
    assert errors.count("malformed Mastodon notification skipped") == 2
    assert len(app.store.db.execute("SELECT id FROM platform_requests").fetchall()) == 1


async def test_at_debug_a_round_trip_logs_no_token_text_or_account_id(
    masto: FakeMastodon, tmp_path: Path, embedder: Any, deployment: dict[str, Any]
) -> None:
    alice = masto.user("alice", uid="774411993")
    bob = masto.user("bob@other.test", uid="885522004")
    claim = masto.add_status(alice, f"{CLAIM} amber-lynx", visibility="public")
    masto.mention(bob, f"@{BOT_ACCT} is this true? quartz-heron", reply_to=claim["id"])
    with debug_logs() as logs:
        app = make_app(tmp_path / "d", embedder, **deployment, mastodon=settings_for(masto))
        async with serving(app, log_level="DEBUG"):
            await idle(app)
    assert masto.posted_by_bot(), "no reply was posted"
    text = logs.getvalue()
    assert "Mastodon mention" in text and "reply job finished" in text  # the round trip
    assert leaks(text, [TOKEN, alice, bob, "amber-lynx", "quartz-heron"]) == []


@pytest.mark.timeout(1500)  # a whole check per reply language on two shared cores
async def test_a_post_in_each_language_gets_a_reply_in_it_tagged_with_it(
    masto: FakeMastodon, tmp_path: Path, embedder: Any
) -> None:
    bob = masto.user("bob")
    asked = {
        masto.mention(bob, f"{text} @{BOT_ACCT}", language="en")["id"]: code
        for code, text in POSTS.items()  # the instance's own tag is a hint, no more: all "en"
    }
    guards = GuardSettings(user_burst=len(POSTS))  # one asker, a check per language at once
    app = make_app(tmp_path / "d", embedder, guards=guards, mastodon=settings_for(masto))
    await ingest_languages(app)
    async with serving(app):
        await idle(app, requests=len(POSTS), seconds=1400)
    posted = masto.posted_by_bot()
    threads: dict[str, list[Any]] = {}
    parent_of = {p.data["id"]: p.form["in_reply_to_id"] for p in posted}
    for status in posted:
        root = status.form["in_reply_to_id"]
        while root in parent_of:
            root = parent_of[root]
        threads.setdefault(root, []).append(status)
    assert set(threads) == set(asked)
    rows = app.store.db.execute("SELECT check_id FROM platform_requests").fetchall()
    checks = {language_of(c): c for c in (app.store.checks.get(r[0]) for r in rows)}
    for mention, language in asked.items():
        statuses = threads[mention]
        assert {s.form["language"] for s in statuses} == {language}
        assert_reply_in(language, checks[language], [s.text for s in statuses])
