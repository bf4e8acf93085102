"""Slack events, commands and shortcuts become the right CheckRequests."""

from __future__ import annotations

from datetime import UTC, datetime

from bots.platforms.slack import _events as ev
from bots.runtime.platform.messages import note_text

BODY = {
    "team_id": "T1",
    "event_id": "Ev1",
    "event": {
        "type": "app_mention",
        "user": "U1",
        "channel": "C1",
        "ts": "1700000100.000200",
        "thread_ts": "1700000000.000100",
        "text": "<@UBOT> is this true?",
    },
}


def test_markup_is_decoded_as_a_reader_sees_it() -> None:
    text = (
        "See <https://ex.com/a?b=1&amp;c=2|the report> and <https://ex.com/x> "
        "<@U123|ann> <@U9> in <#C1|general> <!here> <!subteam^S1|@team> 5 &lt; 6 &amp; 7 &gt; 1"
    )
    assert ev.decode_markup(text) == (
        "See the report (https://ex.com/a?b=1&c=2) and https://ex.com/x @ann @U9 in #general "
        "@here @team 5 < 6 & 7 > 1"
    )


def test_a_mention_in_a_thread_checks_the_parent_and_answers_in_the_thread() -> None:
    parent = {
        "type": "message",
        "user": "U2",
        "ts": "1700000000.000100",
        "text": "The moon is made of <https://cheese.example|cheese>",
    }
    request = ev.mention_request(BODY, bot_user_id="UBOT", parent=parent)
    assert request.event_key == "Ev1"
    assert request.via == "mention"
    assert request.post.platform_id == "T1:C1:1700000000.000100"
    assert request.post.text == "The moon is made of cheese (https://cheese.example)"
    assert request.post.links == ("https://cheese.example",)
    assert request.post.created_at == datetime.fromtimestamp(1700000000.0001, UTC)
    assert request.requester.user_id == "U1" and not request.requester.is_bot
    assert request.author is not None and request.author.user_id == "U2"
    dest = request.destination
    assert (dest.workspace_id, dest.channel_id) == ("T1", "C1")
    assert dest.message_id == "1700000000.000100"
    assert dest.thread_id == "1700000000.000100"
    assert dest.private == {"user_id": "U1"}


def test_a_mention_outside_a_thread_checks_its_own_text_without_the_mention() -> None:
    body = {**BODY, "event": {**BODY["event"], "text": "<@UBOT> Paris is in Spain"}}
    del body["event"]["thread_ts"]  # type: ignore[attr-defined]
    request = ev.mention_request(body, bot_user_id="UBOT", parent=None)
    assert request.post.text == "Paris is in Spain"
    assert request.destination.thread_id == "1700000100.000200"


def test_a_shortcut_on_a_bot_message_marks_its_author_a_bot() -> None:
    payload = {
        "type": "message_action",
        "callback_id": "factcheck_message",
        "trigger_id": "tr1",
        "response_url": "https://hooks.slack.com/x",
        "team": {"id": "T1", "domain": "acme"},
        "channel": {"id": "C1"},
        "user": {"id": "U1"},
        "message": {
            "type": "message",
            "bot_id": "B9",
            "subtype": "bot_message",
            "ts": "1700000000.000100",
            "text": "hi",
        },
    }
    request = ev.shortcut_request(payload, bot_user_id="UBOT")
    assert request.author is not None and request.author.is_bot
    assert request.post.url == "https://acme.slack.com/archives/C1/p1700000000000100"
    assert request.destination.private["response_url"] == "https://hooks.slack.com/x"
    assert request.event_key == "tr1"


def test_files_images_become_refs_and_the_rest_notes() -> None:
    message = {
        "ts": "1.000001",
        "text": "look",
        "files": [
            {
                "name": "a.png",
                "mimetype": "image/png",
                "size": 10,
                "url_private": "https://files.slack.com/a.png",
            },
            {
                "name": "b.pdf",
                "mimetype": "application/pdf",
                "size": 10,
                "url_private": "https://files.slack.com/b.pdf",
            },
            {
                "name": "c.png",
                "mimetype": "image/png",
                "size": 99_000_000,
                "url_private": "https://files.slack.com/c.png",
            },
            {
                "name": "d.png",
                "mimetype": "image/png",
                "size": 0,
                "url_private": "https://files.slack.com/d.png",
            },
            {"name": "e.png", "mode": "tombstone"},
            {"name": "f.png", "file_access": "check_file_info"},
            {"name": "notes.md", "mimetype": "text/markdown", "size": 5},
            {
                "name": "g.png",
                "mimetype": "image/png",
                "size": 10,
                "file_access": "visible",
                "url_private": "https://files.slack.com/g.png",
            },
        ],
    }
    post, notes = ev.message_post(ev.Target("T1", "C1", message))
    assert post.image_refs == ("https://files.slack.com/a.png", "https://files.slack.com/g.png")
    assert len(notes) == 6
    said = [note_text(note) for note in notes]  # in English; the reply job says it in the post's
    assert said[-1] == "An attachment is not an image; only the text was checked."  # "notes.md"
    assert said[0] == "The attachment b.pdf is not an image; only the text was checked."
    assert said[1].startswith("The image c.png is too large to read (99 MB; factbot reads up to")
    assert said[2:5] == [
        f"The attachment {name} could not be read; only the text was checked."
        for name in ("d.png", "e.png", "f.png")
    ]
    dest = ev.destination(ev.Target("T1", "C1", message), requester="U1", event_key="k")
    assert dest.public["image_auth"] == "slack-bot-token"


def test_commands_are_parsed() -> None:
    assert ev.parse_command("") == ("help", "")
    assert ev.parse_command("optout me") == ("optout", "user")
    assert ev.parse_command("optin channel") == ("optin", "channel")
    assert ev.parse_command("optout everyone")[0] == "help"
    assert ev.parse_command("the earth is flat") == ("check", "the earth is flat")
    link = "<https://acme.slack.com/archives/C123/p1700000000000100>"
    assert ev.parse_message_link(link) == ("C123", "1700000000.000100")
    assert ev.parse_message_link("https://example.com/p1") is None


def test_a_text_command_is_answered_in_the_channel() -> None:
    command = {
        "team_id": "T1",
        "channel_id": "C1",
        "user_id": "U1",
        "trigger_id": "tr2",
        "response_url": "https://hooks.slack.com/y",
        "text": "x",
    }
    request = ev.command_text_request(command, "Water boils at 50 &lt;C", bot_user_id="UBOT")
    assert request.post.text == "Water boils at 50 <C"
    assert request.destination.message_id is None and request.destination.thread_id is None
    assert request.event_key == "tr2"
