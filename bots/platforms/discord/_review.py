"""The review channel on Discord: proposal cards with Approve / Edit / Reject, and the Edit modal.

Translation only: a card (`bots.runtime.review.proposals.ReviewCard`) becomes an embed — the reason,
the post checked (escaped, links removed), the proposed reply in a code block (shown exactly,
nothing in it can format or ping), the evidence links (the check's references, the only
links) and the state with who decided — plus, while it is pending, one action row of three
buttons whose custom ids name the action and the proposal (``factbot:review:<action>:<id>``).

A button click arrives as a component interaction (type 3) and is answered within Discord's
3 seconds: Approve / Reject call the review queue and update the card in place (response
type 7: who decided, when; the buttons removed); Edit answers with a modal (type 9) holding
the proposed text; its submission (type 5) goes through `ReviewQueue.approve(text=…)`, which
refuses an unretrieved link. Whatever the queue refuses ("already approved by … at …"), and
a click by someone who is neither in FACTBOT_REVIEW__REVIEWERS nor holds one of
FACTBOT_REVIEW__REVIEWER_ROLES, is answered privately (an ephemeral message). Interactions
are handled in `on_interaction` by custom id, so a click after a restart works the same.

`DiscordReviewChannel` is the worker side (`review:post` jobs): it posts a card to the
review channel over REST (with a nonce made from the card's key, so a retried post returns
the first message) and edits it later.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

import discord

from bots.platforms.discord._render import COLOURS, escape
from bots.platforms.discord._sender import DiscordSender
from bots.runtime.review.proposals import ReviewCard, ReviewError, ReviewQueue
from bots.settings import ReviewSettings
from pipeline.records.domain import Label
from pipeline.reply.render import markdown_url

log = logging.getLogger(__name__)
PREFIX = "factbot:review:"
MODAL_TEXT = 4000  # Discord's text input holds 4,000 characters
NOT_ALLOWED = (
    "You are not one of this factbot's reviewers, so you cannot decide proposals. An operator "
    "can add your user id to FACTBOT_REVIEW__REVIEWERS or give you a reviewer role."
)
_NONE: dict[str, Any] = {"parse": []}
_STYLES = {"approve": 3, "edit": 2, "reject": 4}  # success, secondary, danger


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def card_embed(card: ReviewCard) -> dict[str, Any]:
    """Return the embed of a proposal's card."""
    where = f" ([the post]({markdown_url(card.post_url)}))" if card.post_url else ""
    shown = _clip(card.text, 2400).replace("```", "'''")
    description = (
        f"**Why it needs a reviewer:** {_clip(escape(card.reason), 400)}\n\n"
        f"**Post checked** on {escape(card.platform)}{where}:\n"
        f"> {_clip(escape(card.post_text), 800)}\n\n"
        f"**Language:** {escape(card.language_line())}\n\n"
        f"**Proposed reply** (verdict: {escape(card.verdict)}):\n```\n{shown}\n```"
    )
    lines = [
        f"[{r.number}] [{_clip(escape(r.title), 120) or 'source'}]({markdown_url(r.url)})"
        for r in card.references
    ]
    fields = []
    evidence = ""
    for line in lines:  # whole lines only: a cut link would be a broken one
        if len(evidence) + len(line) + 1 > 1024:
            break
        evidence = f"{evidence}\n{line}".strip()
    if evidence:
        fields.append({"name": "Evidence", "value": evidence, "inline": False})
    state = " ".join(p for p in (card.status_line(), escape(card.decided_line())) if p)
    fields.append({"name": "Status", "value": _clip(state, 1024), "inline": False})
    label = _label(card.verdict)
    colour = COLOURS[label] if label is not None else 0x95A5A6
    return {
        "type": "rich",
        "title": "Proposed correction",
        "description": description,
        "color": colour,
        "fields": fields,
    }


def _label(value: str) -> Label | None:
    try:
        return Label(value)
    except ValueError:
        return None


def card_components(card: ReviewCard) -> list[dict[str, Any]]:
    """Return the card's buttons: one action row while pending, none once decided."""
    if card.status != "pending":
        return []
    buttons = [
        {
            "type": 2,
            "style": _STYLES[action],
            "label": action.capitalize(),
            "custom_id": f"{PREFIX}{action}:{card.proposal_id}",
        }
        for action in ("approve", "edit", "reject")
    ]
    return [{"type": 1, "components": buttons}]


class DiscordReviewChannel:
    """Post proposal cards to the review channel and edit them (`ReviewChannel`)."""

    platform = "discord"

    def __init__(self, sender: DiscordSender, settings: ReviewSettings) -> None:
        self.sender = sender
        self.settings = settings

    async def post(self, card: ReviewCard, *, key: str) -> str | None:
        """Post card to the review channel; return the message id."""
        body = {
            "embeds": [card_embed(card)],
            "components": card_components(card),
            "allowed_mentions": _NONE,
            "nonce": hashlib.sha256(f"discord-review:{key}".encode()).hexdigest()[:25],
            "enforce_nonce": True,
        }
        channel = str(self.settings.channel_id)
        path = "/channels/{channel_id}/messages"
        message = await self.sender.rest("POST", path, body, channel_id=channel)
        return str(message["id"])

    async def update(self, message_id: str, card: ReviewCard) -> None:
        """Show card's state in the message posted earlier."""
        body = {"embeds": [card_embed(card)], "components": card_components(card)}
        await self.sender.rest(
            "PATCH",
            "/channels/{channel_id}/messages/{message_id}",
            body,
            channel_id=str(self.settings.channel_id),
            message_id=message_id,
        )


class _EditModal(discord.ui.Modal):
    """The Edit modal; its submission is handled by custom id in `on_interaction`."""

    def __init__(self, card: ReviewCard) -> None:
        super().__init__(
            title="Edit the correction", custom_id=f"{PREFIX}edit:{card.proposal_id}", timeout=None
        )
        self.add_item(
            discord.ui.TextInput(
                label="The reply factbot will post",
                style=discord.TextStyle.paragraph,
                custom_id="text",
                default=card.text[:MODAL_TEXT],
                max_length=MODAL_TEXT,
            )
        )


class DiscordReview:
    """The review channel's buttons and modal, wired to the review queue."""

    def __init__(self, queue: ReviewQueue) -> None:
        self.queue = queue

    async def handle(self, interaction: discord.Interaction) -> bool:
        """Answer a review button or modal; return False when it is not one of factbot's."""
        data: dict[str, Any] = dict(interaction.data or {})
        custom_id = str(data.get("custom_id") or "")
        kinds = (discord.InteractionType.component, discord.InteractionType.modal_submit)
        if interaction.type not in kinds or not custom_id.startswith(PREFIX):
            return False
        action, _, proposal_id = custom_id.removeprefix(PREFIX).partition(":")
        user = interaction.user
        roles = [str(role.id) for role in getattr(user, "roles", ())]
        if not await self.queue.store.call(self.queue.may_decide, "discord", str(user.id), roles):
            log.info("review click refused: not a reviewer", extra={"proposal": proposal_id})
            await self._private(interaction, NOT_ALLOWED)
            return True
        reviewer = await self.queue.store.call(self.queue.reviewer, "discord", str(user.id))
        try:
            if interaction.type is discord.InteractionType.modal_submit:
                text = _submitted(data, "text")
                await self.queue.store.call(
                    self.queue.approve, proposal_id, reviewer=reviewer, text=text
                )
            elif action == "edit":
                await self.queue.store.call(
                    self.queue.open_proposal, proposal_id
                )  # decided or closed: say so instead
                modal = _EditModal(await self.queue.store.call(self.queue.card, proposal_id))
                modal.stop()  # not kept in memory: the submission is routed by custom id
                await interaction.response.send_modal(modal)
                return True
            elif action == "approve":
                await self.queue.store.call(self.queue.approve, proposal_id, reviewer=reviewer)
            elif action == "reject":
                await self.queue.store.call(self.queue.reject, proposal_id, reviewer=reviewer)
            else:
                await self._private(interaction, "This button is not one factbot knows.")
                return True
        except ReviewError as exc:
            await self._private(interaction, f"Not done: {exc}.")
            return True
        await self._show(interaction, proposal_id)
        return True

    async def _show(self, interaction: discord.Interaction, proposal_id: str) -> None:
        """Update the clicked card (response type 7) to the proposal's state now."""
        card = await self.queue.store.call(self.queue.card, proposal_id)
        if interaction.message is None:  # a modal not opened from the card: say it privately
            await self._private(interaction, card.status_line())
            return
        embed = discord.Embed.from_dict(card_embed(card))
        await interaction.response.edit_message(embed=embed, view=None)

    async def _private(self, interaction: discord.Interaction, text: str) -> None:
        await interaction.response.send_message(
            _clip(text, 2000), ephemeral=True, allowed_mentions=discord.AllowedMentions.none()
        )


def _submitted(data: dict[str, Any], custom_id: str) -> str:
    """Return the value of a modal's text input (in an action row or a label)."""
    for row in data.get("components") or ():
        inputs = row.get("components") or ([row["component"]] if "component" in row else [])
        for field in inputs:
            if field.get("custom_id") == custom_id:
                return str(field.get("value") or "")
    return ""
