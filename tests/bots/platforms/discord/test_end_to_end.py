"""factbot on Discord, end to end: the real discord.py against the stand-in, a real pipeline.

Each test delivers events over the stand-in's gateway, lets a worker pool run the check and
reply jobs, and asserts on what discord.py actually sent.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from bots.platforms.discord._render import embed_texts, nonce_for
from bots.runtime.delivery.deliver import ANSWER, reply_key
from bots.runtime.delivery.replies import ReplyKey
from bots.runtime.platform.contract import Destination
from bots.settings import GuardSettings
from pipeline.evidence.ingest import Ingester
from tests.bots.platforms.discord.conftest import (
    ALICE,
    BOB,
    CHANNEL,
    CLAIM,
    GUILD,
    Bot,
    start_bot,
    stop_bot,
    target_message,
    until,
)
from tests.support import discord_payloads as p
from tests.support.fake_discord import FakeDiscord, Recorded
from tests.support.languages import LANGUAGE_CORPUS, POSTS, assert_reply_in, language_of
from tests.support.logscan import debug_logs, leaks

MESSAGE = p.snowflake(40)


def _references(message: Recorded) -> list[str]:
    [embed] = message.json["embeds"]
    return re.findall(r"^\[\d+\] \[[^\]]*\]\(([^)]+)\)", embed["description"], re.MULTILINE)


def _retrieved(bot: Bot) -> set[str]:
    [check_id] = [r.check_id for r in _requests(bot)]
    check = bot.app.store.checks.get(str(check_id))
    return {e.document.url for e in check.evidence}


def _requests(bot: Bot) -> list[Any]:
    rows = bot.app.store.db.execute("SELECT event_key FROM platform_requests").fetchall()
    return [bot.app.store.platform.find("discord", row[0]) for row in rows]


async def test_context_menu_gets_one_referenced_answer_in_a_thread_on_the_message(
    bot: Bot, discord: FakeDiscord
) -> None:
    await bot.interact(p.context_menu(target_message(MESSAGE)), interaction_id=p.snowflake(50))

    [callback] = discord.sent("POST", f"/interactions/{p.snowflake(50)}/*/callback")
    assert callback.json == {"type": 5, "data": {"flags": 64}}  # deferred, thinking, private
    [checking] = discord.sent("PATCH", "/webhooks/100/*/messages/@original")
    assert checking.json["content"].startswith("Checking this message.")
    assert "thread on the message" in checking.json["content"]
    await bot.drain()

    [thread] = discord.sent("POST", f"/channels/{CHANNEL}/messages/{MESSAGE}/threads")
    assert thread.json["name"] == f"Fact-check: {CLAIM}"
    [reply] = discord.posted_messages()
    assert reply.path == f"/channels/{MESSAGE}/messages"  # in the thread started on it
    assert reply.json["allowed_mentions"] == {"parse": []}
    key = reply_key(ReplyKey("discord", p.snowflake(50), ANSWER))  # the reply ledger's key
    nonce = nonce_for(Destination("discord", GUILD, CHANNEL, public={"reply_key": key}))
    assert reply.json["nonce"] == nonce and reply.json["enforce_nonce"] is True
    refs = _references(reply)
    assert refs and set(refs) <= _retrieved(bot)
    pointer = discord.sent("PATCH", "/webhooks/100/*/messages/@original")[-1]
    assert pointer.json["content"] == f"Checked. The answer is in <#{MESSAGE}>."


async def test_factcheck_text_is_answered_in_the_channel(bot: Bot, discord: FakeDiscord) -> None:
    command = p.slash("factcheck", [{"name": "text", "type": 3, "value": CLAIM}])
    await bot.interact(command, interaction_id=p.snowflake(52))
    await bot.drain()
    [reply] = discord.posted_messages()
    assert reply.path == f"/channels/{CHANNEL}/messages"
    assert "message_reference" not in reply.json
    assert set(_references(reply)) <= _retrieved(bot) and _references(reply)


async def test_factcheck_without_text_or_link_says_so_privately(
    bot: Bot, discord: FakeDiscord
) -> None:
    await bot.interact(p.slash("factcheck", []), interaction_id=p.snowflake(53))
    [edit] = discord.sent("PATCH", "/webhooks/100/*/messages/@original")
    assert edit.json["content"] == "Give a text or a link to check."
    assert _requests(bot) == []


async def test_a_message_in_a_thread_is_answered_in_that_thread(
    bot: Bot, discord: FakeDiscord
) -> None:
    thread_id = p.snowflake(22)
    thread = p.thread(thread_id, GUILD, CHANNEL, "talk")
    discord.channels[thread_id] = thread
    message = p.message(MESSAGE, thread_id, ALICE, CLAIM, guild_id=GUILD)
    await bot.interact(p.context_menu(message), interaction_id=p.snowflake(54), channel=thread)
    await bot.drain()
    assert discord.sent("POST", "/channels/*/threads") == []
    [reply] = discord.posted_messages()
    assert reply.path == f"/channels/{thread_id}/messages"
    assert reply.json["message_reference"]["message_id"] == MESSAGE


async def test_429_on_the_reply_is_retried_after_retry_after(
    bot: Bot, discord: FakeDiscord
) -> None:
    await bot.interact(p.context_menu(target_message(MESSAGE)), interaction_id=p.snowflake(55))
    discord.script("POST", "/channels/*/messages", 429, retry_after=0.5)
    started = time.monotonic()
    await bot.drain()
    first, second = discord.posted_messages()
    assert first.json == second.json  # the same message, retried
    times = [r for r in discord.requests if r in (first, second)]
    assert len(times) == 2 and time.monotonic() - started >= 0.5
    assert sum(1 for m in discord.messages.values() if m.get("embeds")) == 1


async def test_a_bot_author_is_not_checked(bot: Bot, discord: FakeDiscord) -> None:
    robot = p.message(
        MESSAGE, CHANNEL, p.user(p.snowflake(32), "robot", bot=True), CLAIM, guild_id=GUILD
    )
    await bot.interact(p.context_menu(robot), interaction_id=p.snowflake(56))
    await bot.drain()
    assert discord.posted_messages() == []
    [edit] = discord.sent("PATCH", "/webhooks/100/*/messages/@original")
    assert "bots" in edit.json["content"]
    assert bot.app.store.jobs.counts().get("done", 0) == 0


async def test_an_unreadable_attachment_is_noted_and_the_text_still_checked(
    bot: Bot, discord: FakeDiscord
) -> None:
    big = p.attachment(p.snowflake(41), "huge.png", content_type="image/png", size=50_000_000)
    broken = p.attachment(p.snowflake(42), "broken.jpg", content_type="image/jpeg", size=1000)
    fine = p.attachment(p.snowflake(43), "ok.png", content_type="image/png", size=1000)
    fine |= {"width": 10, "height": 10}
    message = target_message(MESSAGE, attachments=[big, broken, fine])
    await bot.interact(p.context_menu(message), interaction_id=p.snowflake(57))
    post = bot.app.store.jobs.post(str(_requests(bot)[0].post_id))
    assert post is not None and post.image_refs == (fine["url"],)
    await bot.drain()
    [reply] = discord.posted_messages()
    [embed] = reply.json["embeds"]
    shown = embed["description"]
    assert "The image huge.png is too large to read (50 MB; factbot reads up to" in shown
    assert "The image broken.jpg could not be read as an image (it may be damaged)" in shown
    assert embed["fields"] and _references(reply)  # the text was checked


async def test_a_mention_in_a_reply_checks_the_message_replied_to(
    indexed: Path, embedder: Any, discord: FakeDiscord
) -> None:
    bot = await start_bot(indexed, embedder, discord, message_content=True)
    try:
        target = target_message(MESSAGE)
        mention = p.message(
            p.snowflake(60),
            CHANNEL,
            BOB,
            f"<@{discord.bot['id']}> is this true?",
            guild_id=GUILD,
            mentions=[discord.bot],
            reference=target,
        )
        await discord.dispatch("MESSAGE_CREATE", mention)
        await until(lambda: _requests(bot))
        # A bot's mention is ignored outright.
        robot = p.user(p.snowflake(33), "robot", bot=True)
        await discord.dispatch(
            "MESSAGE_CREATE",
            p.message(
                p.snowflake(61),
                CHANNEL,
                robot,
                "<@900>",
                guild_id=GUILD,
                mentions=[discord.bot],
                reference=target,
            ),
        )
        await bot.drain()
        [request] = _requests(bot)
        assert request.event_key == p.snowflake(60)
        [reply] = discord.posted_messages()
        assert reply.path == f"/channels/{MESSAGE}/messages"  # a thread on the target
        assert set(_references(reply)) <= _retrieved(bot)
        assert discord.sent("PATCH", "/webhooks/*") == []  # no interaction, no token
    finally:
        await stop_bot(bot)


async def test_opt_out_of_a_channel_needs_manage_channels(bot: Bot, discord: FakeDiscord) -> None:
    optout = {
        "id": "702",
        "name": "factbot",
        "type": 1,
        "options": [
            {
                "name": "optout",
                "type": 1,
                "options": [{"name": "scope", "type": 3, "value": "channel"}],
            }
        ],
    }
    await bot.interact(optout, interaction_id=p.snowflake(58))
    [edit] = discord.sent("PATCH", "/webhooks/100/*/messages/@original")
    assert "Manage Channels" in edit.json["content"]
    assert bot.app.store.platform.find("discord", p.snowflake(58)) is None
    await bot.interact(optout, interaction_id=p.snowflake(59), permissions=p.ALL_PERMISSIONS)
    done = discord.sent("PATCH", "/webhooks/100/*/messages/@original")[-1]
    assert done.json["content"] == "Done: factbot will no longer answer in this channel."
    await bot.interact(p.context_menu(target_message(MESSAGE)), interaction_id=p.snowflake(62))
    await bot.drain()
    assert discord.posted_messages() == []
    refusal = discord.sent("PATCH", "/webhooks/100/*/messages/@original")[-1]
    assert refusal.json["content"] == "This channel has opted out of factbot."


async def test_a_dropped_gateway_is_resumed_and_events_still_arrive(
    bot: Bot, discord: FakeDiscord
) -> None:
    await discord.drop(4000)
    await until(lambda: discord.resumes == 1 and discord.sessions)
    assert len(discord.connections) == 2  # the second one to READY's resume_gateway_url
    await bot.interact(p.context_menu(target_message(MESSAGE)), interaction_id=p.snowflake(63))
    await bot.drain()
    assert len(discord.posted_messages()) == 1


async def test_over_the_rate_limit_one_friendly_refusal_then_silence(
    indexed: Path, embedder: Any, discord: FakeDiscord
) -> None:
    guards = GuardSettings(user_burst=1, user_per_hour=1)
    bot = await start_bot(indexed, embedder, discord, {"guards": guards})
    try:
        for n in range(3):
            message = target_message(p.snowflake(80 + n))
            await bot.interact(p.context_menu(message), interaction_id=p.snowflake(90 + n))
        edits = discord.sent("PATCH", "/webhooks/100/*/messages/@original")
        assert [e.path.split("/")[3] for e in edits] == [
            f"token-{p.snowflake(90)}",
            f"token-{p.snowflake(91)}",
        ]
        assert "try again in about" in edits[1].json["content"]
        [deleted] = discord.sent("DELETE", "/webhooks/100/*/messages/@original")
        assert deleted.path.split("/")[3] == f"token-{p.snowflake(92)}"  # said once, then nothing
        await bot.drain()
        assert len(discord.posted_messages()) == 1
    finally:
        await stop_bot(bot)


async def test_the_request_carries_the_whole_message_and_where_to_answer(
    bot: Bot, discord: FakeDiscord
) -> None:
    preview = {
        "type": "article",
        "url": "https://news.example/story",
        "title": "Towers blamed",
        "description": "A viral claim about masts.",
    }
    text = f"{CLAIM} see https://blog.example/post"
    message = target_message(MESSAGE, text, embeds=[preview])
    await bot.interact(p.context_menu(message), interaction_id=p.snowflake(64))
    [request] = _requests(bot)
    post = bot.app.store.jobs.post(str(request.post_id))
    assert post is not None
    assert post.platform == "discord" and post.platform_id == MESSAGE
    assert post.text == f"{text}\nTowers blamed\nA viral claim about masts."
    assert post.links == ("https://blog.example/post", "https://news.example/story")
    assert post.url == f"https://discord.com/channels/{GUILD}/{CHANNEL}/{MESSAGE}"
    assert post.created_at is not None and post.created_at.year == 2026  # read off the id
    assert post.author is not None and ALICE["id"] not in post.author  # a pseudonym
    job = bot.app.store.jobs.get(str(request.reply_job_id))
    assert job is not None
    destination = job.payload["destination"]
    assert destination["workspace_id"] == GUILD and destination["channel_id"] == CHANNEL
    assert destination["message_id"] == MESSAGE and destination["thread_id"] is None
    assert destination["public"] == {
        "event_key": p.snowflake(64),
        "threads": "1",
        "application_id": "100",
    }
    assert destination["private"]["interaction_token"] == f"token-{p.snowflake(64)}"
    await bot.drain()
    job = bot.app.store.jobs.get(str(request.reply_job_id))
    assert job is not None and job.payload["destination"]["private"] == {}  # token deleted


async def test_at_debug_a_round_trip_logs_no_token_text_or_user_id(
    indexed: Path, embedder: Any
) -> None:
    async with FakeDiscord(token="discord-bot-tok-5rq") as discord:
        discord.add_guild(GUILD, [p.text_channel(CHANNEL)])
        with debug_logs() as logs:
            bot = await start_bot(indexed, embedder, discord)
            try:
                message = target_message(MESSAGE, f"{CLAIM} amber-lynx")
                await bot.interact(p.context_menu(message), interaction_id=p.snowflake(65))
                await bot.drain()
            finally:
                await stop_bot(bot)
        assert discord.posted_messages(), "no reply was posted"
    text = logs.getvalue()
    assert "reply job finished" in text  # the round trip was logged
    secrets = [discord.token, f"token-{p.snowflake(65)}", ALICE["id"], BOB["id"], "amber-lynx"]
    assert leaks(text, secrets) == []


@pytest.mark.timeout(1500)  # a whole check per reply language on two shared cores
async def test_a_post_in_each_language_gets_a_reply_in_it(
    indexed: Path, embedder: Any, discord: FakeDiscord
) -> None:
    # one asker in one channel, a check in each language at once
    guards = GuardSettings(user_burst=len(POSTS), channel_burst=len(POSTS))
    bot = await start_bot(indexed, embedder, discord, {"guards": guards})
    try:
        await Ingester(bot.app.store.documents, embedder).ingest([str(LANGUAGE_CORPUS)])
        nonces = {}
        for n, (language, text) in enumerate(POSTS.items()):
            interaction = p.snowflake(70 + n)
            command = p.slash("factcheck", [{"name": "text", "type": 3, "value": text}])
            await bot.interact(command, interaction_id=interaction)
            key = reply_key(ReplyKey("discord", interaction, ANSWER))
            destination = Destination("discord", GUILD, CHANNEL, public={"reply_key": key})
            nonces[nonce_for(destination)] = language
        await bot.drain()
        replies = {m.json["nonce"]: m for m in discord.posted_messages()}
        assert set(replies) == set(nonces)
        rows = bot.app.store.db.execute("SELECT check_id FROM platform_requests").fetchall()
        checks = {language_of(c): c for c in (bot.app.store.checks.get(str(r[0])) for r in rows)}
        for nonce, language in nonces.items():
            [embed] = replies[nonce].json["embeds"]
            assert_reply_in(language, checks[language], embed_texts(embed))
    finally:
        await stop_bot(bot)


def _factbot_command(action: str, scope: str) -> dict[str, Any]:
    option = {"name": "scope", "type": 3, "value": scope}
    return {
        "id": "702",
        "name": "factbot",
        "type": 1,
        "options": [{"name": action, "type": 1, "options": [option]}],
    }


async def test_commands_answer_in_the_requesters_discord_language(
    bot: Bot, discord: FakeDiscord
) -> None:
    async def said(command: dict[str, Any], n: int, locale: str, **options: Any) -> str:
        await bot.interact(command, interaction_id=p.snowflake(n), locale=locale, **options)
        edit = discord.sent("PATCH", "/webhooks/100/*/messages/@original")[-1]
        return str(edit.json["content"])

    optout_me = _factbot_command("optout", "me")
    assert await said(optout_me, 90, "es-ES") == (
        "Hecho: factbot ya no verificará tus mensajes ni aceptará tus solicitudes."
    )
    assert await said(_factbot_command("optin", "me"), 91, "zh-CN") == (
        "已完成：factbot 将重新接受你的请求。"
    )
    assert await said(_factbot_command("optout", "channel"), 92, "de") == (
        "Nur Mitglieder mit der Berechtigung „Kanäle verwalten“ können das tun."
    )
    done = await said(
        _factbot_command("optout", "channel"), 93, "pt-BR", permissions=p.ALL_PERMISSIONS
    )
    assert done == "Pronto: o factbot não vai mais responder neste canal."
    assert await said(p.slash("factcheck", []), 94, "fr") == (
        "Indiquez un texte ou un lien à vérifier."
    )
    # Japanese has no catalogue: plain English, without the notice a post would get.
    assert await said(
        _factbot_command("optin", "channel"), 95, "ja", permissions=p.ALL_PERMISSIONS
    ) == ("Done: factbot answers in this channel again.")


@pytest.mark.timeout(900)  # two whole checks on two shared cores
async def test_notes_and_notices_about_a_post_are_in_its_language(
    indexed: Path, embedder: Any, discord: FakeDiscord
) -> None:
    bot = await start_bot(indexed, embedder, discord, {"guards": GuardSettings(user_burst=2)})
    try:
        pdf = p.attachment(p.snowflake(44), "report.pdf", content_type="application/pdf", size=900)
        posts = {"es": (p.snowflake(45), POSTS["es"]), "ar": (p.snowflake(46), POSTS["ar"])}
        checking = {}
        for n, (language, (message_id, text)) in enumerate(posts.items()):
            message = p.message(message_id, CHANNEL, ALICE, text, guild_id=GUILD, attachments=[pdf])
            await bot.interact(p.context_menu(message), interaction_id=p.snowflake(96 + n))
            edit = discord.sent("PATCH", "/webhooks/100/*/messages/@original")[-1]
            checking[language] = edit.json["content"]
        assert checking["es"] == (
            "Verificando este mensaje. La respuesta se publicará en un hilo del mensaje."
        )
        assert checking["ar"] == "جارٍ فحص هذه الرسالة. ستُنشر الإجابة في سلسلة محادثة على الرسالة."
        await bot.drain()
        threads = {m.path: m for m in discord.posted_messages()}
        [es_embed] = threads[f"/channels/{posts['es'][0]}/messages"].json["embeds"]
        assert (
            "El archivo adjunto report.pdf no es una imagen; solo se verificó el texto."
            in es_embed["description"]
        )
        [ar_embed] = threads[f"/channels/{posts['ar'][0]}/messages"].json["embeds"]
        # The Latin file name stands isolated (FSI … PDI) inside the Arabic sentence.
        assert (
            "المرفق \u2068report.pdf\u2069 ليس صورة؛ لذا فُحص النص وحده." in ar_embed["description"]
        )
        pointers = discord.sent("PATCH", "/webhooks/100/*/messages/@original")[-2:]
        assert {e.json["content"] for e in pointers} == {
            f"Verificado. La respuesta está en <#{posts['es'][0]}>.",
            f"تم الفحص. الإجابة في <#{posts['ar'][0]}>.",
        }
    finally:
        await stop_bot(bot)
