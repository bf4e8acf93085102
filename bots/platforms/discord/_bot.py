"""The gateway listener: the commands people use, each answered within Discord's 3 seconds.

Commands (on one `app_commands.CommandTree`): the message context menu "Fact-check this
message" (the primary path: the interaction carries the whole target message, attachments
included, without the privileged message-content intent), `/factcheck text:` or `link:`, and
`/factbot optout|optin scope:me|channel`. With `message_content` on, a mention of factbot in a
reply to a message checks the message replied to. With the review channel on Discord, its
buttons and Edit modal are answered in `on_interaction` (`_review`).

Every interaction is deferred at once (privately, "thinking"), then handed to
`service.intake`: accepted → the private response says it is being checked and where the
answer will appear; refused → the refusal, privately; ignored (or refused with nothing to say)
→ the deferred response is deleted. Every error goes through `service.answer_for_error` and is
shown privately. What is said about a post (checking, refusals) is in the post's language; what
is said about a command (opt-out confirmations, a missing text, a missing permission) is in the
requester's, their Discord client's locale (`interaction.locale`), English where factbot has no
catalogue for it.

Discord's refusals are answered, never raised into the gateway's tasks: an interaction
delivered again (the same id, e.g. replayed after a resume) is dropped before any callback,
by the ids this client has seen and the requests stored (`service.seen`), and one Discord says
was already acknowledged (40060) is dropped too; an interaction Discord calls unknown when it
is deferred (10062: its 3 seconds passed, say after a slow gateway) is still checked, with no
private response and no interaction token, so the answer goes to the channel or the
message's thread as usual, and the log says so once. No Discord refusal ends in a traceback:
an error answer Discord refuses in turn is logged as a warning.

A mention written by a bot, or under a bot's message, is ignored outright (no loops between
bots); a context-menu request about a bot's message goes to the service, whose guard refuses
it privately (the requester asked, so silence would look broken).

Commands are synced (a bulk overwrite) only when their definitions change: a hash of the
tree's JSON, localisations included, is kept in `store.state` under
`discord:commands-hash:<application id>`. Their names and descriptions are gettext messages,
registered with their translations for each Discord locale a reply catalogue in use writes
(`_localise.CatalogueTranslator`): a Spanish client shows "Verificar este mensaje".
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Literal

import discord
from discord import app_commands

from bots.platforms.discord import _events
from bots.platforms.discord._http import route_client
from bots.platforms.discord._localise import CatalogueTranslator
from bots.platforms.discord._review import DiscordReview
from bots.runtime.platform import messages
from bots.runtime.platform.contract import Answer, CheckRequest
from bots.runtime.review.proposals import ReviewQueue
from pipeline.util.i18n import N_, Translator, locale_language

if TYPE_CHECKING:  # pragma: no cover - types only
    from bots.runtime.platform.contract import PlatformContext
    from bots.settings import DiscordSettings

log = logging.getLogger(__name__)
MENU_NAME = N_("Fact-check this message")
_NONE = discord.AllowedMentions.none()
UNKNOWN_INTERACTION = 10062  # the callback came too late (after 3 s) or the token is gone
ALREADY_ACKNOWLEDGED = 40060  # a second callback to one interaction
SEEN_INTERACTIONS = 4096  # ids remembered against redelivery (the last few minutes' worth)


def commands_hash_key(application_id: int | str) -> str:
    """Return the `store.state` key of the synced commands' hash."""
    return f"discord:commands-hash:{application_id}"


class FactbotClient(discord.Client):
    """factbot's Discord client: the command tree, the mention handler, the service calls."""

    def __init__(self, context: PlatformContext, settings: DiscordSettings) -> None:
        intents = discord.Intents.none()
        intents.guilds = True
        if settings.message_content:
            intents.guild_messages = True
            intents.message_content = True
        options: dict[str, Any] = {}
        if settings.application_id:
            options["application_id"] = int(settings.application_id)
        super().__init__(
            intents=intents,
            **options,
            guild_ready_timeout=settings.guild_ready_timeout,
            allowed_mentions=_NONE,
            max_messages=None,
        )
        route_client(self, api_base=settings.api_base, gateway_url=settings.gateway_url)
        self.context = context
        self.settings = settings
        self.service = context.service
        self.tree = app_commands.CommandTree(self)
        menu = app_commands.ContextMenu(name=app_commands.locale_str(MENU_NAME), callback=_menu)
        self.tree.add_command(menu)
        self.tree.add_command(_factcheck)
        self.tree.add_command(_factbot)
        self.tree.on_error = self._on_tree_error  # type: ignore[method-assign]
        self.tree.interaction_check = self._first_delivery  # type: ignore[method-assign]
        self._seen: OrderedDict[int, None] = OrderedDict()
        self.review: DiscordReview | None = None  # when FACTBOT_REVIEW__PLATFORM is discord
        if context.settings.review.platform == "discord":
            queue = ReviewQueue(context.store, context.settings, clock=context.clock)
            self.review = DiscordReview(queue)

    async def setup_hook(self) -> None:
        """Sync the commands, with their translations, when they changed since the last sync."""
        if self.settings.gateway_url is None:
            _shards, url, _limits = await self.http.get_bot_gateway()
            self.http.gateway_url = url  # type: ignore[attr-defined]
        translator = CatalogueTranslator(self.context.settings.reply_catalogues())
        await self.tree.set_translator(translator)
        await self.sync_commands()

    async def sync_commands(self) -> bool:
        """Bulk-overwrite the global commands unless the stored hash matches; return if synced."""
        translator = self.tree.translator
        commands = self.tree.get_commands(type=None)
        definitions = [
            await c.get_translated_payload(self.tree, translator)
            if translator is not None
            else c.to_dict(self.tree)
            for c in commands
        ]
        digest = hashlib.sha256(json.dumps(definitions, sort_keys=True).encode()).hexdigest()
        key = commands_hash_key(self.application_id or 0)
        store = self.context.store
        if await store.call(store.state.get, key) == digest:
            return False
        await self.tree.sync()
        await store.call(store.state.set, key, digest)
        log.info("discord commands synced", extra={"commands": len(definitions)})
        return True

    # -- interactions ---------------------------------------------------------------------------

    async def first_delivery(self, interaction: discord.Interaction) -> bool:
        """Return whether interaction arrives for the first time (remembering that it has)."""
        if interaction.id in self._seen or await self.service.seen("discord", str(interaction.id)):
            log.info("duplicate discord interaction; ignored", extra={"event": str(interaction.id)})
            return False
        self._seen[interaction.id] = None
        if len(self._seen) > SEEN_INTERACTIONS:
            self._seen.popitem(last=False)
        return True

    async def _first_delivery(self, interaction: discord.Interaction) -> bool:
        return await self.first_delivery(interaction)

    async def acknowledge(self, interaction: discord.Interaction) -> bool:
        """Defer the response privately; return False when Discord says it came too late."""
        try:
            await interaction.response.defer(thinking=True, ephemeral=True)
        except discord.NotFound as exc:
            if exc.code != UNKNOWN_INTERACTION:
                raise
            log.warning(
                "discord interaction expired before it was acknowledged; "
                "the answer goes to the channel",
                extra={"event": str(interaction.id), "code": exc.code},
            )
            return False
        return True

    async def check(self, interaction: discord.Interaction, request: CheckRequest) -> None:
        """Hand request to the service and tell the requester, privately, what happens next."""
        try:
            intake = await self.service.intake(request)
        except Exception as exc:  # noqa: BLE001 - every error is shown to the requester, privately
            language = requester_language(interaction)  # the post's is not known yet
            answer = self.service.answer_for_error(exc, language=language, requester=True)
            await self.answer_privately(interaction, answer)
            return
        log.info(
            "discord check requested",
            extra={"event": request.event_key, "via": request.via, "status": intake.status},
        )
        if not interaction.response.is_done():  # expired: no private response to edit
            return
        if intake.status in ("accepted", "duplicate"):
            t = self.service.translator(intake.language)
            await interaction.edit_original_response(
                content=_checking(request, t), allowed_mentions=_NONE
            )
        elif intake.answer is not None:
            await self.answer_privately(interaction, intake.answer)
        else:
            await interaction.delete_original_response()

    async def answer_privately(self, interaction: discord.Interaction, answer: Answer) -> None:
        """Show answer in the interaction's private response (none when it expired unanswered)."""
        if not interaction.response.is_done():
            log.info(
                "private answer not shown: the interaction expired",
                extra={"event": str(interaction.id)},
            )
            return
        text = " ".join([answer.message, *answer.notes]).strip()[:2000]
        await interaction.edit_original_response(content=text, allowed_mentions=_NONE)

    async def _on_tree_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError
    ) -> None:
        cause = error.__cause__ or error
        code = cause.code if isinstance(cause, discord.HTTPException) else None
        if code in (ALREADY_ACKNOWLEDGED, UNKNOWN_INTERACTION):  # nobody left to apologise to
            log.info(
                "discord interaction not answered",
                extra={"event": str(interaction.id), "code": code},
            )
            return
        log.warning("discord command failed", extra={"error": repr(error)})
        language = requester_language(interaction)
        answer = self.service.answer_for_error(cause, language=language, requester=True)
        try:
            if not interaction.response.is_done():
                await interaction.response.send_message(answer.message, ephemeral=True)
            else:
                await self.answer_privately(interaction, answer)
        except discord.HTTPException as exc:  # the apology refused too: say so, no traceback
            log.warning(
                "discord error answer not shown",
                extra={"event": str(interaction.id), "status": exc.status, "code": exc.code},
            )

    async def on_interaction(self, interaction: discord.Interaction) -> None:
        """Answer the review channel's buttons and Edit modal (commands go to the tree)."""
        kinds = (discord.InteractionType.component, discord.InteractionType.modal_submit)
        if self.review is None or interaction.type not in kinds:
            return
        if not await self.first_delivery(interaction):
            return
        try:
            await self.review.handle(interaction)
        except Exception:  # one bad click never stops the listener
            log.warning("review interaction failed", exc_info=True)

    # -- mentions -------------------------------------------------------------------------------

    async def on_message(self, message: discord.Message) -> None:
        """Check the message a mention of factbot replies to (message-content intent only)."""
        own = self.user
        if not self.settings.message_content or own is None or message.author.bot:
            return
        if own not in message.mentions or message.reference is None:
            return
        target = message.reference.resolved
        if not isinstance(target, discord.Message):
            if message.reference.message_id is None:
                return
            try:
                target = await message.channel.fetch_message(message.reference.message_id)
            except discord.HTTPException as exc:
                await self._reply(message, self.service.answer_for_error(exc))
                return
        if target.author.bot:  # a mention under a bot's message: never a reason to speak
            return
        request = _events.request_for_mention(
            message,
            target,
            own_id=own.id,
            application_id=self.application_id,
            max_image_bytes=self.settings.max_image_bytes,
        )
        try:
            intake = await self.service.intake(request)
        except Exception as exc:  # noqa: BLE001 - every error is told to the requester
            await self._reply(message, self.service.answer_for_error(exc))
            return
        if intake.status == "refused" and intake.answer is not None:
            await self._reply(message, intake.answer)

    async def _reply(self, message: discord.Message, answer: Answer) -> None:
        text = " ".join([answer.message, *answer.notes]).strip()[:2000]
        await message.reply(text, allowed_mentions=_NONE, mention_author=False)


def _checking(request: CheckRequest, t: Translator) -> str:
    """Return the private note that a check is under way, and where its answer will appear."""
    destination = request.destination
    if destination.message_id is None:
        return messages.say(messages.CHECKING_HERE, t)
    if destination.thread_id is not None:
        return messages.say(messages.CHECKING_IN_THREAD, t)
    if destination.public.get("threads") == "1":
        return messages.say(messages.CHECKING_NEW_THREAD, t)
    return messages.say(messages.CHECKING_AS_REPLY, t)


def requester_language(interaction: discord.Interaction) -> str | None:
    """Return the language of the person asking: their Discord client's locale."""
    return locale_language(interaction.locale)


def _refusal(client: FactbotClient, interaction: discord.Interaction, message: str) -> Answer:
    """Return a refusal of a command, in the requester's language (plain English without one)."""
    t = client.service.translator(requester_language(interaction), requester=True)
    return Answer("refusal", message=messages.say(message, t), private=True)


def _client(interaction: discord.Interaction) -> FactbotClient:
    client = interaction.client
    assert isinstance(client, FactbotClient)
    return client


async def _menu(interaction: discord.Interaction, message: discord.Message) -> None:
    client = _client(interaction)
    live = await client.acknowledge(interaction)
    request = _events.request_for_message(
        interaction,
        message,
        max_image_bytes=client.settings.max_image_bytes,
        now=client.context.clock.now(),
        live=live,
    )
    await client.check(interaction, request)


_L = app_commands.locale_str


@app_commands.command(
    name=_L(N_("factcheck")), description=_L(N_("Fact-check a text or the page at a link"))
)
@app_commands.describe(text=_L(N_("the text to check")), link=_L(N_("a link to the page to check")))
async def _factcheck(
    interaction: discord.Interaction, text: str | None = None, link: str | None = None
) -> None:
    client = _client(interaction)
    live = await client.acknowledge(interaction)
    given = " ".join(p for p in (text, link) if p).strip()
    if not given:
        await client.answer_privately(
            interaction, _refusal(client, interaction, messages.NOTHING_GIVEN)
        )
        return
    now = client.context.clock.now()
    links = (link,) if link else ()
    request = _events.request_for_text(interaction, given, links=links, now=now, live=live)
    await client.check(interaction, request)


_factbot = app_commands.Group(name="factbot", description=_L(N_("factbot settings")))


@_factbot.command(name="optout", description=_L(N_("Stop factbot answering you or this channel")))
@app_commands.describe(
    scope=_L(N_("me: requests about your messages; channel: this whole channel"))
)
async def _optout(interaction: discord.Interaction, scope: Literal["me", "channel"]) -> None:
    await _set_opt_out(interaction, scope, out=True)


@_factbot.command(name="optin", description=_L(N_("Let factbot answer you or this channel again")))
@app_commands.describe(scope=_L(N_("me: yourself; channel: this whole channel")))
async def _optin(interaction: discord.Interaction, scope: Literal["me", "channel"]) -> None:
    await _set_opt_out(interaction, scope, out=False)


async def _set_opt_out(interaction: discord.Interaction, scope: str, *, out: bool) -> None:
    client = _client(interaction)
    await client.acknowledge(interaction)  # expired: the setting still changes, untold
    service = client.service
    language = requester_language(interaction)  # the confirmation is in the asker's language
    if scope == "channel":
        perms = interaction.permissions
        if not perms.manage_channels:
            refusal = _refusal(client, interaction, messages.NEEDS_MANAGE_CHANNELS)
            await client.answer_privately(interaction, refusal)
            return
        channel = interaction.channel
        # A thread's messages are answered as its parent channel's (the guards' channel).
        parent = channel.parent_id if isinstance(channel, discord.Thread) else None
        subject = str(parent or interaction.channel_id)
        answer = await service.set_opt_out("discord", "channel", subject, out, language=language)
    else:
        user = str(interaction.user.id)
        answer = await service.set_opt_out("discord", "user", user, out, language=language)
    await client.answer_privately(interaction, answer)
