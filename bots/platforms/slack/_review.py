"""The review channel on Slack: proposal cards with Approve / Edit / Reject, and the Edit modal.

Translation only: a card (`bots.runtime.review.proposals.ReviewCard`) becomes Block Kit — the
reason, the post checked (escaped, links removed), the proposed correction, the evidence links (the
check's references, the only links), the state and who decided, and while it is pending the three
buttons, whose `value` is the proposal id. A click (`block_actions`) or an Edit modal's submission
(`view_submission`) becomes a call to `ReviewQueue.approve` / `reject`; the queue decides exactly
once, the adapter shows the result: the card is edited in place (who decided, when), and whatever
the queue refused ("already approved by … at …", an edit with an unretrieved link, a reviewer not in
FACTBOT_REVIEW__REVIEWERS) is said privately — in the modal itself for an edit, so the reviewer can
fix the text.

`SlackReviewChannel` is the worker side (`review:post` jobs): it posts a card to the review
channel (`chat.postMessage`, with message metadata naming the card) and edits it later
(`chat.update`).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from slack_bolt.app.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from bots.platforms.slack._render import escape, shorten, slack_url
from bots.platforms.slack._sender import SlackSender, _call, web_client
from bots.runtime.review.proposals import (
    MAX_TEXT,
    EditRefusedError,
    ReviewCard,
    ReviewError,
    ReviewQueue,
)
from bots.settings import ReviewSettings

log = logging.getLogger(__name__)
ACTION = "factbot_review_"  # + approve, edit, reject
EDIT_VIEW = "factbot_review_edit"
METADATA_TYPE = "factbot_review"
NOT_ALLOWED = (
    "You are not one of this factbot's reviewers, so you cannot decide proposals. "
    "An operator can add your user id to FACTBOT_REVIEW__REVIEWERS."
)
_ACTION_RE = re.compile(rf"^{ACTION}(approve|edit|reject)$")


def card_message(card: ReviewCard) -> tuple[str, list[dict[str, Any]]]:
    """Return the fallback text and the blocks of a proposal's card."""
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": "Proposed correction"}},
        _section(f"*Why it needs a reviewer:* {shorten(card.reason, 500)}"),
    ]
    post = shorten(card.post_text, 1200)
    where = f" (<{slack_url(card.post_url)}|the post>)" if card.post_url else ""
    blocks.append(_section(f"*Post checked* on {escape(card.platform)}{where}:\n> {post}"))
    blocks.append(_section(f"*Language:* {escape(card.language_line())}"))
    blocks.append(_section(f"*Proposed reply* (verdict: {escape(card.verdict)}):"))
    blocks.append(_section(shorten(card.text, 2900, render=escape)))
    if card.references:
        lines = [
            f"[{r.number}] <{slack_url(r.url)}|{shorten(r.title, 200) or 'source'}>"
            for r in card.references
        ]
        blocks.append(_section("*Evidence*\n" + "\n".join(lines)[:2900]))
    state = " ".join(p for p in (card.status_line(), escape(card.decided_line())) if p)
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": state}]})
    if card.status == "pending":
        blocks.append(
            {
                "type": "actions",
                "block_id": "factbot_review",
                "elements": [
                    _button("Approve", "approve", card.proposal_id, "primary"),
                    _button("Edit", "edit", card.proposal_id),
                    _button("Reject", "reject", card.proposal_id, "danger"),
                ],
            }
        )
    text = f"Proposed correction ({card.verdict}): {card.status_line()}"
    return escape(text), blocks


def edit_view(card: ReviewCard, *, channel: str, ts: str) -> dict[str, Any]:
    """Return the Edit modal: the proposed text in a multi-line input."""
    return {
        "type": "modal",
        "callback_id": EDIT_VIEW,
        "private_metadata": json.dumps(
            {"proposal": card.proposal_id, "channel": channel, "ts": ts}
        ),
        "title": {"type": "plain_text", "text": "Edit the correction"},
        "submit": {"type": "plain_text", "text": "Approve"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [
            {
                "type": "input",
                "block_id": "text",
                "label": {"type": "plain_text", "text": "The reply factbot will post"},
                "hint": {
                    "type": "plain_text",
                    "text": "Only the check's references may be linked; any other link is refused.",
                },
                "element": {
                    "type": "plain_text_input",
                    "action_id": "text",
                    "multiline": True,
                    "max_length": MAX_TEXT,
                    "initial_value": card.text[:MAX_TEXT],
                },
            }
        ],
    }


def _section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text[:3000] or " "}}


def _button(label: str, action: str, proposal_id: str, style: str | None = None) -> dict[str, Any]:
    button: dict[str, Any] = {
        "type": "button",
        "text": {"type": "plain_text", "text": label},
        "action_id": ACTION + action,
        "value": proposal_id,
    }
    if style:
        button["style"] = style
    return button


class SlackReviewChannel:
    """Post proposal cards to the review channel and edit them (`ReviewChannel`)."""

    platform = "slack"

    def __init__(self, sender: SlackSender, settings: ReviewSettings) -> None:
        self.sender = sender
        self.settings = settings

    async def _client(self) -> AsyncWebClient:
        token = await self.sender.token(self.settings.workspace_id)
        return web_client(self.sender.settings, token)

    async def post(self, card: ReviewCard, *, key: str) -> str | None:
        """Post card to the review channel; return its ts."""
        text, blocks = card_message(card)
        client = await self._client()
        response = await _call(
            client.chat_postMessage(
                channel=str(self.settings.channel_id),
                text=text,
                blocks=blocks,
                unfurl_links=False,
                unfurl_media=False,
                metadata={"event_type": METADATA_TYPE, "event_payload": {"key": key}},
            )
        )
        return str(response.get("ts") or "") or None

    async def update(self, message_id: str, card: ReviewCard) -> None:
        """Show card's state in the message at ts message_id."""
        await self.update_in(str(self.settings.channel_id), message_id, card)

    async def update_in(self, channel: str, ts: str, card: ReviewCard) -> None:
        """Show card's state in the message at ts in channel."""
        text, blocks = card_message(card)
        client = await self._client()
        await _call(client.chat_update(channel=channel, ts=ts, text=text, blocks=blocks))


Respond = Callable[..., Awaitable[Any]]


class SlackReview:
    """The review channel's buttons and modal, wired to the review queue."""

    def __init__(self, queue: ReviewQueue, channel: SlackReviewChannel) -> None:
        self.queue = queue
        self.channel = channel

    def register(self, app: AsyncApp) -> None:
        """Add the button and modal handlers to the Bolt app."""
        app.action(_ACTION_RE)(self._on_action)
        app.view(EDIT_VIEW)(self._on_edit)

    async def _on_action(
        self,
        ack: Callable[[], Awaitable[None]],
        body: dict[str, Any],
        respond: Respond,
        client: AsyncWebClient,
    ) -> None:
        await ack()
        action = body["actions"][0]
        kind = _ACTION_RE.match(str(action.get("action_id")))
        proposal_id = str(action.get("value") or "")
        user = str((body.get("user") or {}).get("id") or "")
        channel = str((body.get("channel") or {}).get("id") or "")
        ts = str((body.get("container") or {}).get("message_ts") or "")
        assert kind is not None  # the handler is registered for these action ids only
        if not await self.queue.store.call(self.queue.may_decide, "slack", user):
            log.info("review click refused: not a reviewer", extra={"proposal": proposal_id})
            await _private(respond, NOT_ALLOWED)
            return
        try:
            if kind.group(1) == "edit":
                await self.queue.store.call(
                    self.queue.open_proposal, proposal_id
                )  # decided or closed: say so instead
                card = await self.queue.store.call(self.queue.card, proposal_id)
                view = edit_view(card, channel=channel, ts=ts)
                await client.views_open(trigger_id=body["trigger_id"], view=view)
                return
            reviewer = await self.queue.store.call(self.queue.reviewer, "slack", user)
            if kind.group(1) == "approve":
                await self.queue.store.call(self.queue.approve, proposal_id, reviewer=reviewer)
            else:
                await self.queue.store.call(self.queue.reject, proposal_id, reviewer=reviewer)
        except ReviewError as exc:
            await _private(respond, f"Not done: {exc}.")
        await self._refresh(proposal_id, channel, ts)

    async def _on_edit(
        self, ack: Callable[..., Awaitable[None]], body: dict[str, Any], view: dict[str, Any]
    ) -> None:
        user = str((body.get("user") or {}).get("id") or "")
        meta = json.loads(view.get("private_metadata") or "{}")
        proposal_id = str(meta.get("proposal") or "")
        if not await self.queue.store.call(self.queue.may_decide, "slack", user):
            await ack(response_action="errors", errors={"text": NOT_ALLOWED})
            return
        text = str(view["state"]["values"]["text"]["text"].get("value") or "")
        try:
            await self.queue.store.call(
                self.queue.approve,
                proposal_id,
                reviewer=await self.queue.store.call(self.queue.reviewer, "slack", user),
                text=text,
            )
        except EditRefusedError as exc:
            await ack(response_action="errors", errors={"text": str(exc)})
            return
        except ReviewError as exc:
            await ack(response_action="errors", errors={"text": f"Not done: {exc}."})
            return
        await ack()
        await self._refresh(proposal_id, str(meta.get("channel") or ""), str(meta.get("ts") or ""))

    async def _refresh(self, proposal_id: str, channel: str, ts: str) -> None:
        """Edit the card that was clicked to show the proposal's state now."""
        if not channel or not ts:
            return
        try:
            await self.channel.update_in(
                channel, ts, await self.queue.store.call(self.queue.card, proposal_id)
            )
        except Exception:  # the decision stands; the card job refreshes the card too
            log.warning("review card not updated", extra={"proposal": proposal_id}, exc_info=True)


async def _private(respond: Respond, text: str) -> None:
    try:
        await respond(text=escape(text), response_type="ephemeral", replace_original=False)
    except Exception:  # a lost notice must not fail the click
        log.warning("could not answer a reviewer privately", exc_info=True)
