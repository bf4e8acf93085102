"""Slack end to end: the real slack-bolt / slack_sdk against the stand-in Slack, the real
`factbot serve` API (uvicorn on port 0) with its worker pool, the real PlatformService, check
and reply jobs over a small ingested index. Assertions are on what the library sent.

Each test runs in three deployments (`deployment`, tests/conftest.py): SQLite (replicas share
one folder), PostgreSQL with factbot's own queue, and PostgreSQL with the saq queue engine. On
PostgreSQL every App is a node with its own data folder (its own index) sharing the database."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bots.app.root import App
from bots.settings import GuardSettings, JobSettings, Settings, SlackSettings
from tests.support.fake_slack import FakeSlack, block_problem
from tests.support.languages import POSTS, assert_reply_in, ingest_languages, language_of
from tests.support.logscan import debug_logs, leaks
from tests.support.platform_app import idle, serving

CLAIM = "5G networks spread the coronavirus."
PARENT = "1700000000.000100"
SECRET = "e2e-signing-secret"


@pytest.fixture
def corpus_app(
    tmp_path: Path, embedder: Any, deployment: dict[str, Any], corpus_in: Callable[[Path], Path]
) -> Iterator[Callable[..., App]]:
    """Return a maker of an App over the small corpus, with Slack settings given; a replica
    serves the same data as the App made before it (another node on PostgreSQL)."""
    made: list[App] = []

    def make(slack: SlackSettings, *, replica: bool = False, **extra: Any) -> App:
        jobs = JobSettings(
            poll_seconds=0.02, heartbeat_seconds=5.0, backoff_initial=0, backoff_max=0
        )
        shared = "database_url" in deployment  # PostgreSQL: every App its own node
        folder = tmp_path / f"d{len(made) - 1 if replica and not shared else len(made)}"
        if not (folder / "factbot.db").exists():
            corpus_in(folder)
        app = App(
            Settings(
                data_dir=folder,
                jobs=jobs,
                slack=slack,
                **deployment,
                **extra,
            ),
            embedder=embedder,
        )
        made.append(app)
        return app

    yield make
    for app in made:
        app.close()


def settings_for(slack: FakeSlack, **changes: Any) -> SlackSettings:
    base: dict[str, Any] = {
        "bot_token": "xoxb-one",
        "signing_secret": SECRET,
        "api_base": slack.api_base,
    }
    base.update(changes)
    return SlackSettings(**base)


def mention(team: str = "T1", event_id: str = "Ev1", **event: Any) -> dict[str, Any]:
    body = {
        "type": "app_mention",
        "user": "U1",
        "channel": "C1",
        "ts": "1700000100.000200",
        "thread_ts": PARENT,
        "text": "<@UBOT> is this true?",
        "event_ts": "1700000100.000200",
    }
    body.update(event)
    return {
        "token": "x",
        "team_id": team,
        "api_app_id": "A0FACTBOT",
        "type": "event_callback",
        "event_id": event_id,
        "event_time": 1700000100,
        "event": body,
    }


def reference_urls(blocks: list[dict[str, Any]]) -> list[str]:
    text = "\n".join(b["text"]["text"] for b in blocks if b["type"] == "section")
    return re.findall(r"<(https?://[^|>]+)\|", text)


def jobs_count(app: App) -> int:
    return int(app.store.db.execute("SELECT COUNT(*) FROM jobs").fetchone()[0])


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack(signing_secret=SECRET) as fake:
        fake.add_team("T1", token="xoxb-one")
        fake.add_message("T1", "C1", ts=PARENT, user="U2", text=CLAIM)
        yield fake


async def test_a_mention_redelivered_three_times_gets_one_reply_in_the_thread(
    slack: FakeSlack, corpus_app: Callable[[SlackSettings], App]
) -> None:
    app = corpus_app(settings_for(slack))
    async with serving(app) as base:
        url = base + "/slack/events"
        statuses = [(await slack.deliver_event(url, mention()))[0]]
        for n in (1, 2, 3):  # Slack's retries: the same event_id
            status, _ = await slack.deliver_event(url, mention(), retry_num=n)
            statuses.append(status)
        assert statuses == [200, 200, 200, 200]
        await idle(app)
    [reply] = slack.calls("chat.postMessage")
    assert reply.token == "xoxb-one"
    assert reply.body["channel"] == "C1" and reply.body["thread_ts"] == PARENT
    assert reply.body["unfurl_links"] is False
    assert block_problem(reply.body["blocks"]) is None
    [replies] = [slack.calls("conversations.replies")[0].body]
    assert replies["ts"] == PARENT and replies["limit"] == "1"
    [row] = app.store.db.execute("SELECT check_id FROM platform_requests").fetchall()
    check = app.store.checks.get(row[0])
    urls = reference_urls(reply.body["blocks"])
    assert urls and set(urls) <= {e.document.url for e in check.evidence}
    assert {r.url for r in check.correction.references} == set(urls)
    assert "Fact-check: false" in str(reply.body["blocks"][0])
    assert slack.unknown == []


async def test_the_same_event_delivered_to_two_replicas_gets_one_reply(
    slack: FakeSlack, corpus_app: Callable[..., App]
) -> None:
    first = corpus_app(settings_for(slack))
    second = corpus_app(settings_for(slack), replica=True)
    async with serving(first) as one, serving(second) as two:
        statuses = [
            (await slack.deliver_event(one + "/slack/events", mention()))[0],
            (await slack.deliver_event(two + "/slack/events", mention(), retry_num=1))[0],
        ]
        await idle(first)
        await idle(second)
    assert statuses == [200, 200]
    [reply] = slack.calls("chat.postMessage")
    assert reply.body["thread_ts"] == PARENT
    assert jobs_count(first) == jobs_count(second)  # one queue, whichever replica asks


async def test_a_command_and_a_shortcut_are_acked_checked_and_answered_once(
    slack: FakeSlack, corpus_app: Callable[[SlackSettings], App]
) -> None:
    app = corpus_app(settings_for(slack))
    slack.script("chat.postMessage", status=429, retry_after=1)  # the first reply waits
    async with serving(app) as base:
        url = base + "/slack/events"
        status, body = await slack.deliver_command(
            url,
            {
                "command": "/factcheck",
                "text": CLAIM,
                "team_id": "T1",
                "channel_id": "C1",
                "user_id": "U1",
                "trigger_id": "tr-1",
                "response_url": slack.response_url("cmd"),
            },
        )
        assert (status, body) == (200, "")
        payload = {
            "type": "message_action",
            "callback_id": "factcheck_message",
            "trigger_id": "tr-2",
            "response_url": slack.response_url("sc"),
            "team": {"id": "T1", "domain": "acme"},
            "channel": {"id": "C1", "name": "general"},
            "user": {"id": "U3"},
            "message": {"type": "message", "user": "U2", "ts": PARENT, "text": CLAIM},
            "message_ts": PARENT,
        }
        assert (await slack.deliver_interaction(url, payload))[0] == 200
        await idle(app, requests=2)
    hooks = slack.calls("response_url")
    assert sorted(h.path for h in hooks) == ["/response/cmd", "/response/sc"]
    assert all(
        "Checking" in h.body["text"] and h.body["response_type"] == "ephemeral" for h in hooks
    )
    calls = slack.calls("chat.postMessage")
    assert len(calls) == 3  # one 429, then one reply each
    assert calls[1].at - calls[0].at >= 1.0  # retried after Retry-After
    posted = slack.posted("T1", "C1")
    assert sorted(str(m.get("thread_ts")) for m in posted) == sorted(["None", PARENT])
    assert all(reference_urls(m["blocks"]) for m in posted)


async def test_bad_signatures_are_401_and_bots_are_ignored(
    slack: FakeSlack, corpus_app: Callable[[SlackSettings], App]
) -> None:
    app = corpus_app(settings_for(slack))
    async with serving(app) as base:
        url = base + "/slack/events"
        bad = await slack.deliver_event(url, mention(event_id="Ev2"), secret="wrong")
        stale = await slack.deliver_event(
            url, mention(event_id="Ev3"), timestamp=int(time.time()) - 301
        )
        assert bad[0] == 401 and stale[0] == 401
        bot = mention(event_id="Ev4", bot_id="B9", thread_ts=None)
        assert (await slack.deliver_event(url, bot))[0] == 200
        slack.add_message("T1", "C1", ts="1700000050.000100", bot_id="B9", text=CLAIM)
        on_bot = mention(event_id="Ev5", thread_ts="1700000050.000100")
        assert (await slack.deliver_event(url, on_bot))[0] == 200
        good = await slack.deliver_event(url, mention(event_id="Ev6"))  # the endpoint works
        assert good[0] == 200
        await idle(app, requests=1)
    rows = app.store.db.execute("SELECT event_key FROM platform_requests").fetchall()
    assert [r[0] for r in rows] == ["Ev6"]
    assert jobs_count(app) == 2  # its check and its reply; nothing for the others
    [reply] = slack.calls("chat.postMessage")
    assert reply.body["thread_ts"] == PARENT
    # Asking about a bot's message is refused privately; the bot's own event got nothing.
    [refusal] = slack.calls("chat.postEphemeral")
    assert refusal.body["user"] == "U1" and "bots" in refusal.body["text"]


async def test_an_oversize_image_is_a_note_and_the_text_is_still_checked(
    slack: FakeSlack, corpus_app: Callable[[SlackSettings], App]
) -> None:
    app = corpus_app(settings_for(slack))
    files = [
        {
            "name": "huge.png",
            "mimetype": "image/png",
            "size": 80_000_000,
            "url_private": "https://files.slack.com/huge.png",
        },
        {"name": "broken.png", "mode": "tombstone"},
    ]
    slack.add_message("T1", "C2", ts=PARENT, user="U2", text=CLAIM, files=files)
    async with serving(app) as base:
        await slack.deliver_event(base + "/slack/events", mention(channel="C2"))
        await idle(app)
    [reply] = slack.calls("chat.postMessage")
    context = [b for b in reply.body["blocks"] if b["type"] == "context"][-1]
    notes = " ".join(e["text"] for e in context["elements"])
    assert "The image huge.png is too large to read (80 MB; factbot reads up to 20 MB)" in notes
    assert "The attachment broken.png could not be read; only the text was checked." in notes
    assert reference_urls(reply.body["blocks"])


async def install(http: aiohttp.ClientSession, base: str, code: str) -> None:
    """Go through the install page and Slack's redirect back, as a browser would."""
    async with http.get(base + "/slack/install") as page:
        assert page.status == 200
        state = re.search(r"state=([\w-]+)", await page.text())
        cookie = page.cookies["slack-app-oauth-state"].value
    assert state is not None and cookie == state.group(1)
    browser = {"Cookie": f"slack-app-oauth-state={cookie}"}
    redirect = f"{base}/slack/oauth_redirect?code={code}&state={cookie}"
    async with http.get(redirect, headers=browser) as done:
        assert done.status == 200, await done.text()
    async with http.get(redirect, headers=browser) as again:  # a state is used once
        assert again.status in (400, 401)


async def test_oauth_installs_a_second_workspace_answered_with_its_own_token(
    slack: FakeSlack, corpus_app: Callable[[SlackSettings], App]
) -> None:
    app = corpus_app(settings_for(slack, bot_token=None, client_id="111.222", client_secret="shh"))
    slack.add_oauth_code("code-1", team_id="T1", token="xoxb-one", bot_user_id="UBOT")
    slack.add_oauth_code("code-2", team_id="T2", token="xoxb-two", bot_user_id="UBOT2")
    slack.add_message("T1", "C1", ts=PARENT, user="U2", text=CLAIM)
    slack.add_message("T2", "C7", ts=PARENT, user="U8", text=CLAIM)
    jar = aiohttp.DummyCookieJar()  # the state cookie is Secure: the browser's part is by hand
    async with serving(app) as base, aiohttp.ClientSession(cookie_jar=jar) as http:
        forged = f"{base}/slack/oauth_redirect?code=code-2&state=forged"
        async with http.get(forged, headers={"Cookie": "slack-app-oauth-state=forged"}) as refused:
            assert refused.status in (400, 401)
        await install(http, base, "code-1")
        await install(http, base, "code-2")
        event = mention(team="T2", event_id="EvT2", channel="C7", user="U9", text="<@UBOT2> true?")
        assert (await slack.deliver_event(base + "/slack/events", event))[0] == 200
        await idle(app)
    assert [c.body["code"] for c in slack.calls("oauth.v2.access")] == ["code-1", "code-2"]
    stored = app.store.db.execute("SELECT DISTINCT team_id FROM slack_installations").fetchall()
    assert {r[0] for r in stored} == {"T1", "T2"}
    [reply] = slack.calls("chat.postMessage")
    assert reply.token == "xoxb-two" and reply.body["channel"] == "C7"
    assert reply.body["thread_ts"] == PARENT
    assert slack.calls("conversations.replies")[0].token == "xoxb-two"


async def test_socket_mode_acks_the_envelope_and_replies_once(
    slack: FakeSlack, corpus_app: Callable[[SlackSettings], App]
) -> None:
    app = corpus_app(settings_for(slack, signing_secret=None, app_token="xapp-test"))
    async with serving(app) as base:
        # Without a signing secret nothing could be verified: there is no events endpoint.
        unsigned = await slack.deliver_event(base + "/slack/events", mention(event_id="EvU"))
        assert unsigned[0] in (404, 405)
        await slack.wait_connected()
        envelope = await slack.send_envelope("events_api", mention(event_id="EvS"))
        ack = await slack.wait_ack(envelope)
        assert ack == {"envelope_id": envelope}
        command = {
            "command": "/factcheck",
            "text": "help",
            "team_id": "T1",
            "channel_id": "C1",
            "user_id": "U1",
            "trigger_id": "tr-s",
            "response_url": slack.response_url("sock"),
        }
        acked = await slack.wait_ack(await slack.send_envelope("slash_commands", command))
        assert set(acked) <= {"envelope_id", "payload"}
        await idle(app)
        async with asyncio.timeout(10):
            while not slack.calls("response_url"):  # noqa: ASYNC110 - polls the stand-in
                await asyncio.sleep(0.02)
    assert slack.calls("apps.connections.open")[0].token == "xapp-test"
    [usage] = slack.calls("response_url")
    assert "/factcheck &lt;text&gt;" in usage.body["text"]
    [reply] = slack.calls("chat.postMessage")
    assert reply.body["thread_ts"] == PARENT and reference_urls(reply.body["blocks"])


async def test_opt_out_link_command_help_and_errors_are_answered_privately(
    slack: FakeSlack, corpus_app: Callable[[SlackSettings], App]
) -> None:
    app = corpus_app(settings_for(slack))

    def command(text: str, key: str) -> dict[str, str]:
        return {
            "command": "/factcheck",
            "text": text,
            "team_id": "T1",
            "team_domain": "acme",
            "channel_id": "C1",
            "user_id": "U5",
            "trigger_id": f"tr-{key}",
            "response_url": slack.response_url(key),
        }

    async def said(key: str) -> str:
        """Return what factbot said through the response URL of the command `key`."""
        path = f"/response/{key}"
        async with asyncio.timeout(10):
            while True:
                hooks = [c for c in slack.calls("response_url") if c.path == path]
                if hooks:
                    return str(hooks[0].body["text"])
                await asyncio.sleep(0.02)

    async with serving(app) as base:
        url = base + "/slack/events"
        await slack.deliver_command(url, command("optout me", "out"))
        assert (await said("out")).startswith("Done: factbot will no longer")
        await slack.deliver_event(url, mention(event_id="EvOut", user="U5"))
        async with asyncio.timeout(10):
            while not slack.calls("chat.postEphemeral"):  # noqa: ASYNC110 - polls the record
                await asyncio.sleep(0.02)
        assert "opted out" in slack.calls("chat.postEphemeral")[0].body["text"]
        await slack.deliver_command(url, command("optin me", "in"))
        assert (await said("in")).startswith("Done: factbot takes your requests again")
        await slack.deliver_command(url, command("", "help"))
        assert "/factcheck &lt;text&gt;" in await said("help")
        missing = mention(event_id="EvGone", thread_ts="1700000999.000001")
        await slack.deliver_event(url, missing)
        link = "<https://acme.slack.com/archives/C1/p1700000000000100>"
        await slack.deliver_command(url, command(link, "link"))
        assert (await said("link")).startswith("Checking")
        await idle(app, requests=1)
    failures = [c.body["text"] for c in slack.calls("chat.postEphemeral")]
    assert any("cannot read that message (thread_not_found)" in t for t in failures)
    [row] = app.store.db.execute("SELECT event_key FROM platform_requests").fetchall()
    assert row[0] == "tr-link"
    [reply] = slack.calls("chat.postMessage")
    assert reply.body["thread_ts"] == PARENT and reference_urls(reply.body["blocks"])


async def test_a_reply_whose_connection_dropped_after_posting_is_not_posted_again(
    slack: FakeSlack, corpus_app: Callable[[SlackSettings], App]
) -> None:
    app = corpus_app(settings_for(slack))
    slack.script("chat.postMessage", hang_up=True, after=True)
    async with serving(app) as base:
        await slack.deliver_event(base + "/slack/events", mention(event_id="EvDrop"))
        await idle(app)
    assert len(slack.calls("chat.postMessage")) == 1
    [posted] = slack.posted("T1", "C1")
    assert posted["thread_ts"] == PARENT
    [row] = app.store.db.execute(
        "SELECT status, platform_reply_id FROM replies WHERE kind = 'answer'"
    ).fetchall()  # the :eyes: acknowledgement has a ledger row of its own (kind 'ack')
    assert tuple(row) == ("sent", posted["ts"])  # settled through the message metadata


async def test_at_debug_a_round_trip_logs_no_token_text_or_user_id(
    slack: FakeSlack, corpus_app: Callable[[SlackSettings], App]
) -> None:
    slack.add_message("T1", "C1", ts="1700000060.000100", user="UAUTHOR77", text=CLAIM)
    asked = "<@UBOT> is this true? quartz-heron"
    ask = {"user": "UASKER42", "text": asked, "thread_ts": "1700000060.000100"}
    with debug_logs() as logs:
        app = corpus_app(settings_for(slack))
        async with serving(app, log_level="DEBUG") as base:
            url = base + "/slack/events"
            late = mention(event_id="Ev7", **ask)  # a real message delivered too late
            stale = await slack.deliver_event(url, late, timestamp=int(time.time()) - 301)
            assert stale[0] == 401
            assert (await slack.deliver_event(url, mention(event_id="Ev8", **ask)))[0] == 200
            await idle(app)
    [reply] = slack.calls("chat.postMessage")
    assert reply.body["thread_ts"] == "1700000060.000100"
    text = logs.getvalue()
    assert "slack request" in text and "reply job finished" in text  # the round trip was logged
    assert leaks(text, ["xoxb-one", SECRET, "UASKER42", "UAUTHOR77", "quartz-heron"]) == []


async def test_a_mention_gets_eyes_at_once_then_the_verdict_once_across_redelivery_and_restart(
    slack: FakeSlack, corpus_app: Callable[[SlackSettings], App]
) -> None:
    asked = "1700000100.000200"
    slack.add_message("T1", "C1", ts=asked, user="U1", text="<@UBOT> is this true?")
    settings = settings_for(slack)
    app = corpus_app(settings)
    async with serving(app) as base:
        url = base + "/slack/events"
        sent = time.monotonic()
        assert (await slack.deliver_event(url, mention()))[0] == 200
        while not slack.calls("reactions.add") and time.monotonic() - sent < 3.0:  # noqa: ASYNC110
            await asyncio.sleep(0.02)
        [eyes] = slack.calls("reactions.add")
        assert eyes.at - sent < 3.0 and not slack.calls("chat.postMessage")  # before the answer
        assert eyes.body["name"] == "eyes" and eyes.body["timestamp"] == asked
        for n in (1, 2):  # Slack's retries
            await slack.deliver_event(url, mention(), retry_num=n)
        await idle(app)
    [reply] = slack.calls("chat.postMessage")
    assert "Fact-check: false" in str(reply.body["blocks"][0])
    assert slack.reactions("T1", "C1", asked) == ["x"]  # :eyes: replaced by the verdict
    assert [c.body["name"] for c in slack.calls("reactions.add")] == ["eyes", "x"]
    app.close()
    again = App(app.settings, embedder=app.embedder)  # a restart over the same database
    async with serving(again) as base:
        assert (await slack.deliver_event(base + "/slack/events", mention(), retry_num=3))[0] == 200
        await idle(again)
    again.close()
    assert len(slack.calls("reactions.add")) == 2 and len(slack.calls("chat.postMessage")) == 1
    assert slack.reactions("T1", "C1", asked) == ["x"]


async def test_a_failed_answer_takes_the_eyes_off(slack: FakeSlack) -> None:
    from bots.platforms.slack._sender import SlackSender
    from bots.runtime.delivery.acks import settle
    from bots.runtime.platform.contract import Answer, Destination

    asked = "1700000100.000200"
    slack.add_message("T1", "C1", ts=asked, user="U1", text="<@UBOT> is this true?")
    sender = SlackSender(settings_for(slack))
    dest = Destination("slack", "T1", "C1", message_id=PARENT, public={"ack_ts": asked})
    await sender.acknowledge(dest)
    await sender.acknowledge(dest)  # already_reacted is done, not an error
    assert slack.reactions("T1", "C1", asked) == ["eyes"]
    await settle(sender, dest, Answer("failure", message="Sorry"), "Ev1")
    assert slack.reactions("T1", "C1", asked) == []
    await settle(sender, dest, Answer("failure", message="Sorry"), "Ev1")  # again: no error
    assert slack.calls("reactions.add")[-1].body["name"] == "eyes"


@pytest.mark.timeout(1500)  # a whole check per language on two shared cores
@pytest.mark.parametrize("deployment", ["sqlite"], indirect=True)
async def test_a_post_in_each_language_gets_a_reply_in_it(
    slack: FakeSlack, corpus_app: Callable[..., App]
) -> None:
    asked = {}
    for n, (language, text) in enumerate(POSTS.items()):
        ts = f"1700000200.{n:06d}"
        slack.add_message("T1", "C1", ts=ts, user="U2", text=text)
        asked[ts] = language
    # An asker each, but a check per language at once in one channel.
    app = corpus_app(settings_for(slack), guards=GuardSettings(channel_burst=len(POSTS)))
    await ingest_languages(app)
    async with serving(app) as base:
        for n, ts in enumerate(asked):
            event = mention(
                event_id=f"EvL{n}", ts=f"1700000300.{n:06d}", thread_ts=ts, user=f"U{n + 10}"
            )
            status, _ = await slack.deliver_event(base + "/slack/events", event)
            assert status == 200
        await idle(app, requests=len(POSTS), seconds=1400)
    replies = {r.body["thread_ts"]: r.body for r in slack.calls("chat.postMessage")}
    assert set(replies) == set(asked)
    rows = app.store.db.execute("SELECT check_id FROM platform_requests").fetchall()
    checks = {language_of(c): c for c in (app.store.checks.get(r[0]) for r in rows)}
    for ts, language in asked.items():
        body = replies[ts]
        assert block_problem(body["blocks"]) is None
        texts = [b["text"]["text"] for b in body["blocks"] if "text" in b]
        assert_reply_in(language, checks[language], [*texts, body["text"]])


async def test_opt_outs_and_help_are_in_the_requesters_slack_language(
    slack: FakeSlack, corpus_app: Callable[[SlackSettings], App]
) -> None:
    app = corpus_app(settings_for(slack))
    slack.locales.update({"U5": "es-ES", "U6": "zh-CN", "U7": "el-GR"})

    def command(text: str, key: str, user: str) -> dict[str, str]:
        return {
            "command": "/factcheck",
            "text": text,
            "team_id": "T1",
            "channel_id": "C1",
            "user_id": user,
            "trigger_id": f"tr-{key}",
            "response_url": slack.response_url(key),
        }

    async def said(key: str) -> str:
        async with asyncio.timeout(10):
            while True:
                hooks = [c for c in slack.calls("response_url") if c.path == f"/response/{key}"]
                if hooks:
                    return str(hooks[0].body["text"])
                await asyncio.sleep(0.02)

    async with serving(app) as base:
        url = base + "/slack/events"
        await slack.deliver_command(url, command("optout me", "es", "U5"))
        assert await said("es") == (
            "Hecho: factbot ya no verificará tus mensajes ni aceptará tus solicitudes."
        )
        await slack.deliver_command(url, command("optin channel", "zh", "U6"))
        assert await said("zh") == "已完成：factbot 将重新在此频道回复。"
        # No catalogue for Greek: plain English, without the notice a post would get.
        await slack.deliver_command(url, command("optin me", "el", "U7"))
        assert await said("el") == "Done: factbot takes your requests again."
        # users.info refused (a workspace installed before factbot asked for users:read).
        slack.script("users.info", error="missing_scope")
        await slack.deliver_command(url, command("optin me", "refused", "U5"))
        assert await said("refused") == "Done: factbot takes your requests again."
        # The help too, after what was wrong (Slack's text escapes < and >).
        await slack.deliver_command(url, command("optout everyone", "help", "U5"))
        assert (await said("help")).startswith(
            "`/factcheck optout` admite `me` o `channel`. Usa `/factcheck &lt;texto&gt;`"
        )
        await idle(app, requests=0)  # opt-outs store no request
    asked = slack.calls("users.info")
    assert [c.body["user"] for c in asked] == ["U5", "U6", "U7", "U5", "U5"]
    assert all(str(c.body["include_locale"]).lower() in ("1", "true") for c in asked)
