"""The stand-in Slack answers as Slack does: errors in `ok: false`, loud unknown methods."""

from __future__ import annotations

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from tests.support.fake_slack import FakeSlack, sign


async def test_web_api_errors_form_bodies_and_unknown_methods() -> None:
    with pytest.raises(AssertionError, match=r"does not know: /api/chat\.scheduleMessage"):
        async with FakeSlack() as slack:
            slack.add_team("T1", token="xoxb-1")
            anonymous = AsyncWebClient(base_url=slack.api_base)
            with pytest.raises(SlackApiError) as raised:
                await anonymous.auth_test()
            assert raised.value.response["error"] == "not_authed"
            client = AsyncWebClient(token="xoxb-1", base_url=slack.api_base)
            assert (await client.auth_test())["team_id"] == "T1"
            with pytest.raises(SlackApiError) as raised:
                await client.chat_postMessage(channel="C404", text="hi")
            assert raised.value.response["error"] == "channel_not_found"
            slack.add_message("T1", "C1", ts="1.000001", text="x")
            form = await client.api_call("chat.postMessage", data={"channel": "C1", "text": "hi"})
            assert form["ok"] and slack.calls("chat.postMessage")[-1].body["text"] == "hi"
            with pytest.raises(SlackApiError):
                await client.api_call("chat.scheduleMessage", json={"channel": "C1"})


def test_signatures_are_slacks() -> None:
    # The example of Slack's documentation ("Verifying requests from Slack").
    body = (
        b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id="
        b"G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook"
        b"-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F3977"
        b"00885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d"
        b"10d2c447fce8b6703c"
    )
    secret = "8f742231b10e8888abcd99yyyzzz85a5"
    expected = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"
    assert sign(secret, "1531420618", body) == expected


async def test_modals_and_message_updates_are_checked_as_slack_checks_them() -> None:
    async with FakeSlack() as slack:
        slack.add_team("T1", token="xoxb-1")
        client = AsyncWebClient(token="xoxb-1", base_url=slack.api_base)
        slack.add_message("T1", "C1", ts="1.000001", text="x")
        posted = await client.chat_postMessage(channel="C1", text="card")
        buttons = {
            "type": "actions",
            "elements": [
                {"type": "button", "text": {"type": "plain_text", "text": "OK"}, "action_id": "a"}
            ],
        }
        await client.chat_update(channel="C1", ts=posted["ts"], text="new", blocks=[buttons])
        assert slack.posted("T1", "C1")[0]["blocks"] == [buttons]
        with pytest.raises(SlackApiError) as raised:
            await client.chat_update(channel="C1", ts="1.000001", text="not mine")
        assert raised.value.response["error"] == "cant_update_message"
        bad = {**buttons, "elements": [{"type": "button", "text": {"type": "mrkdwn", "text": "x"}}]}
        with pytest.raises(SlackApiError):
            await client.chat_update(channel="C1", ts=posted["ts"], text="x", blocks=[bad])
        view = {"type": "modal", "title": {"type": "plain_text", "text": "A title"}, "blocks": []}
        with pytest.raises(SlackApiError) as raised:
            await client.views_open(trigger_id="", view=view)
        assert raised.value.response["error"] == "invalid_trigger_id"
        long_title = {**view, "title": {"type": "plain_text", "text": "x" * 25}}
        with pytest.raises(SlackApiError):
            await client.views_open(trigger_id="t1", view=long_title)
        opened = await client.views_open(trigger_id="t1", view=view)
        assert opened["view"]["id"] == "V1" and slack.views[0]["title"]["text"] == "A title"
