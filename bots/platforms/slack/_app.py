"""The Slack listener: a Bolt `AsyncApp` whose handlers turn requests into checks.

Three ways in: a mention of factbot (`app_mention`; it checks the thread's parent message,
read with `conversations.replies`, else the mention's own text), `/factcheck <text or link>`
(plus `/factcheck optout|optin me|channel`), and the message shortcut "Fact-check this
message" (`factcheck_message`). Each acknowledges first (Slack wants it within 3 s; Bolt acks
events itself), then hands the request to `PlatformService.intake`, which guards, stores and
enqueues; a worker posts the answer later through `SlackSender`. Accepted commands and
shortcuts get an ephemeral "Checking…"; a refusal is shown privately; an ignored request gets
nothing. Every error the requester sees comes from `service.answer_for_error`. What is said
about a post is in the post's language; the help and opt-out confirmations are in the
requester's (their Slack locale, read with `users.info`), English when it cannot be read.

Bot messages and factbot's own are skipped by a middleware (answering 200, as Bolt needs).
A redelivered event (X-Slack-Retry-Num) goes to intake again, which finds its `event_id`
and enqueues nothing. HTTP mode: `mount` adds the events endpoint (Bolt verifies signatures
and the 5-minute window) and, with OAuth, the install and redirect pages. Socket Mode:
`listen` runs `AsyncSocketModeHandler` while an app token is set.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

import aiohttp
from fastapi import Request
from slack_bolt.adapter.fastapi.async_handler import AsyncSlackRequestHandler
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.app.async_app import AsyncApp
from slack_bolt.oauth.async_oauth_settings import AsyncOAuthSettings
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from bots.platforms.slack import _events
from bots.platforms.slack._installs import SlackInstallationStore, SlackStateStore
from bots.platforms.slack._sender import SlackSender, web_client
from bots.runtime.delivery.acks import acknowledge
from bots.runtime.platform import messages
from bots.runtime.platform.contract import (
    Answer,
    CheckRequest,
    Destination,
    Intake,
    RequestService,
)
from bots.settings import SlackSettings
from pipeline.errors import InputError
from pipeline.inputs.posts import ensure_checkable
from pipeline.util.i18n import locale_language
from storage.tx import DatabaseUnavailableError

log = logging.getLogger(__name__)
# Bolt and Socket Mode log request bodies (text, raw user ids) below WARNING through the logger
# they are given: theirs sit under the library names `bots.logs` holds at WARNING.
# Slack has its 200 before intake runs and will not deliver the event again: a database that
# is restarting (a few seconds) is waited out, one try a second, instead of losing the request.
INTAKE_TRIES = 30
BOLT_LOG = logging.getLogger("slack_bolt.factbot")
SOCKET_LOG = logging.getLogger("slack_sdk.socket_mode.factbot")
SCOPES = (
    "app_mentions:read",
    "chat:write",
    "commands",
    "channels:history",
    "groups:history",
    "reactions:write",
    "users:read",  # users.info: the locale an opt-out is confirmed in
)


async def _read_message(client: AsyncWebClient, channel: str, ts: str) -> dict[str, Any]:
    """Return the message at ts (a thread's parent, a linked message): conversations.replies."""
    try:
        found = await client.conversations_replies(channel=channel, ts=ts, limit=1)
    except SlackApiError as exc:
        error = exc.response.get("error") if isinstance(exc.response.data, dict) else "error"
        raise InputError(
            f"factbot cannot read that message ({error}); invite factbot to the channel first"
        ) from exc
    messages = found.get("messages") or []
    if not messages or messages[0].get("ts") != ts:
        raise InputError("the Slack message to check was not found")
    return dict(messages[0])


async def requester_language(client: AsyncWebClient, user_id: str | None) -> str | None:
    """Return the language of the person asking (their Slack locale), or None (English).

    A slash command carries no locale: `users.info` with `include_locale` says it (the
    `users:read` scope). Any failure (a workspace installed before factbot asked for that
    scope answers `missing_scope`) only means the answer is in English.
    """
    if not user_id:
        return None
    try:
        found = await client.users_info(user=user_id, include_locale=True)
    except (SlackClientError, aiohttp.ClientError, TimeoutError) as exc:
        log.info("slack user's locale not read", extra={"error": type(exc).__name__})
        return None
    user = found.get("user")
    return locale_language(user.get("locale")) if isinstance(user, Mapping) else None


class SlackBot:
    """The Bolt app wired to factbot's service."""

    def __init__(
        self,
        settings: SlackSettings,
        service: RequestService,
        sender: SlackSender,
        installations: SlackInstallationStore | None = None,
        states: SlackStateStore | None = None,
    ) -> None:
        self.settings = settings
        self.service = service
        self.sender = sender
        self.installations = installations
        self.app = self._build(installations, states)

    # -- composition -----------------------------------------------------------------------

    def _build(
        self, installations: SlackInstallationStore | None, states: SlackStateStore | None
    ) -> AsyncApp:
        s = self.settings
        secret = s.signing_secret.get_secret_value() if s.signing_secret else ""
        common: dict[str, Any] = {
            "name": "factbot",
            "logger": BOLT_LOG,
            "signing_secret": secret,
            # Socket Mode needs no signature; HTTP mode cannot start without a secret (settings).
            "request_verification_enabled": bool(secret),
        }
        if installations is not None and s.client_id and s.client_secret:
            oauth = AsyncOAuthSettings(
                client_id=s.client_id,
                client_secret=s.client_secret.get_secret_value(),
                scopes=list(SCOPES),
                redirect_uri=s.redirect_uri,
                install_path=s.install_path,
                redirect_uri_path=s.redirect_path,
                installation_store=installations,
                state_store=states,
                logger=BOLT_LOG,
            )
            app = AsyncApp(client=web_client(s), oauth_settings=oauth, **common)
        else:
            token = s.bot_token.get_secret_value() if s.bot_token else None
            app = AsyncApp(client=web_client(s, token), **common)
        app.middleware(self._skip_bots)
        app.event("app_mention")(self._on_mention)
        app.command("/factcheck")(self._on_command)
        app.shortcut("factcheck_message")(self._on_shortcut)
        return app

    async def _skip_bots(
        self, body: dict[str, Any], context: Any, next: Callable[[], Awaitable[BoltResponse]]
    ) -> BoltResponse:
        event = body.get("event")
        if isinstance(event, Mapping) and (
            _events.is_bot_message(event)
            or (event.get("user") and event.get("user") == context.get("bot_user_id"))
        ):
            log.debug("skipping a bot's event", extra={"event_id": body.get("event_id")})
            return BoltResponse(status=200, body="")
        return await next()

    # -- handlers --------------------------------------------------------------------------

    async def _on_mention(self, body: dict[str, Any], context: Any, client: AsyncWebClient) -> None:
        event = body["event"]
        fallback = _reply_to(body.get("team_id"), event.get("channel"), event.get("user"), None)
        bot_user = context.get("bot_user_id")
        try:
            parent = None
            thread = event.get("thread_ts")
            if thread and thread != event.get("ts"):
                parent = await _read_message(client, event["channel"], thread)
            request = _events.mention_request(body, bot_user_id=bot_user, parent=parent)
            await self._submit(request, checking=False)
        except Exception as exc:  # noqa: BLE001 - the boundary: the requester sees it privately
            await self._fail(exc, fallback)

    async def _on_shortcut(
        self, ack: Callable[[], Awaitable[None]], body: dict[str, Any], context: Any
    ) -> None:
        await ack()
        fallback = _reply_to(
            (body.get("team") or {}).get("id"),
            (body.get("channel") or {}).get("id"),
            (body.get("user") or {}).get("id"),
            body.get("response_url"),
        )
        try:
            request = _events.shortcut_request(body, bot_user_id=context.get("bot_user_id"))
            await self._submit(request, checking=True)
        except Exception as exc:  # noqa: BLE001 - the boundary: the requester sees it privately
            await self._fail(exc, fallback)

    async def _on_command(
        self,
        ack: Callable[[], Awaitable[None]],
        command: dict[str, Any],
        context: Any,
        client: AsyncWebClient,
    ) -> None:
        await ack()
        here = _reply_to(
            command.get("team_id"),
            command.get("channel_id"),
            command.get("user_id"),
            command.get("response_url"),
        )
        bot_user = context.get("bot_user_id")
        try:
            kind, arg = _events.parse_command(str(command.get("text") or ""))
            if kind == "help":
                language = await requester_language(client, here.private.get("user_id"))
                t = self.service.translator(language, requester=True)
                message = messages.slack_usage(arg, t)
                await self._private(here, Answer(kind="notice", message=message, private=True))
            elif kind in ("optout", "optin"):
                subject = here.private["user_id"] if arg == "user" else here.channel_id
                language = await requester_language(client, here.private.get("user_id"))
                out = kind == "optout"
                answer = await self.service.set_opt_out(
                    "slack", arg, subject, out, language=language
                )
                await self._private(here, answer)
            else:
                link = _events.parse_message_link(arg)
                if link is None:
                    request = _events.command_text_request(command, arg, bot_user_id=bot_user)
                else:
                    channel, ts = link
                    target = await _read_message(client, channel, ts)
                    request = _events.command_link_request(
                        command, target, channel, bot_user_id=bot_user
                    )
                await self._submit(request, checking=True)
        except Exception as exc:  # noqa: BLE001 - the boundary: the requester sees it privately
            await self._fail(exc, here)

    # -- the service -----------------------------------------------------------------------

    async def _submit(self, request: CheckRequest, *, checking: bool) -> None:
        """Hand request to the service; tell the requester what it said (privately)."""
        ensure_checkable(request.post)
        # A Slack retry that arrives while the first delivery is in intake is the service's to
        # spot: it dedupes on the event key in the write transaction that spends the tokens.
        result = await self._intake(request)
        log.info(
            "slack request",
            extra={
                "event_key": request.event_key,
                "via": request.via,
                "status": result.status,
                "reason": result.reason,
            },
        )
        if request.via == "mention" and result.status in ("accepted", "duplicate"):
            # Within Slack's 3 s: :eyes: on the mention, once (a redelivery after a crash
            # adds it if the first delivery could not).
            store = self.service.store
            await acknowledge(store, self.sender, request.destination, request.event_key)
        if result.status == "accepted" and checking and result.answer is not None:
            await self._private(request.destination, result.answer)  # "Checking…"
        elif result.status == "refused" and result.answer is not None:
            await self._private(request.destination, result.answer)

    async def _intake(self, request: CheckRequest) -> Intake:
        """Hand request to the service, waiting out a database that is unavailable for a while."""
        for attempt in range(1, INTAKE_TRIES + 1):
            try:
                return await self.service.intake(request)
            except DatabaseUnavailableError as exc:
                if attempt == INTAKE_TRIES:
                    raise
                log.warning(
                    "slack request waits for the database",
                    extra={"event_key": request.event_key, "attempt": attempt, "error": str(exc)},
                )
                await asyncio.sleep(1.0)
        raise AssertionError("unreachable")

    async def _fail(self, exc: Exception, where: Destination) -> None:
        log.warning(
            "slack request failed",
            extra={"error": type(exc).__name__, "channel": where.channel_id},
            exc_info=not isinstance(exc, InputError),
        )
        answer = self.service.answer_for_error(exc)
        await self._private(where, answer)

    async def _private(self, where: Destination, answer: Answer) -> None:
        if not where.private.get("user_id") and not where.private.get("response_url"):
            return
        private = replace(answer, private=True)
        try:
            await self.sender.send(where, self.sender.render(private, where))
        except Exception:
            log.warning("could not show a private Slack message", exc_info=True)

    # -- running ---------------------------------------------------------------------------

    async def listen(self, stop: asyncio.Event) -> None:
        """Run Socket Mode until stop is set; return at once in HTTP mode."""
        if self.settings.app_token is None:
            return
        handler = AsyncSocketModeHandler(
            self.app, self.settings.app_token.get_secret_value(), logger=SOCKET_LOG
        )
        await handler.connect_async()  # type: ignore[no-untyped-call]
        log.info("slack socket mode connected")
        try:
            await stop.wait()
        finally:
            await handler.close_async()  # type: ignore[no-untyped-call]

    def mount(self, api: Any) -> None:
        """Add the events endpoint (when requests can be verified) and the OAuth pages."""
        handler = AsyncSlackRequestHandler(self.app)

        async def endpoint(req: Request) -> Any:
            return await handler.handle(req)

        if self.settings.signing_secret is not None:
            api.add_api_route(
                self.settings.events_path, endpoint, methods=["POST"], include_in_schema=False
            )
        else:  # Socket Mode only: without a secret no request could be verified, so no endpoint
            log.info("no FACTBOT_SLACK__SIGNING_SECRET: the Slack events endpoint is off")
        if self.app.oauth_flow is not None:
            for path in (self.settings.install_path, self.settings.redirect_path):
                api.add_api_route(path, endpoint, methods=["GET"], include_in_schema=False)


def _reply_to(team: Any, channel: Any, user: Any, response_url: Any) -> Destination:
    """Return where a private message to the requester goes, before a request exists."""
    private = {"user_id": str(user or "")}
    if response_url:
        private["response_url"] = str(response_url)
    return Destination(
        platform="slack",
        workspace_id=str(team or ""),
        channel_id=str(channel or ""),
        private={k: v for k, v in private.items() if v},
    )
