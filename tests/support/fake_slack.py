"""A stand-in Slack for tests: the Web API, response URLs, Socket Mode and signed event delivery.

The real slack_sdk / slack-bolt are pointed at it (`AsyncWebClient(base_url=fake.api_base)`),
so tests assert on what the library actually sent. It is an aiohttp server on 127.0.0.1, port 0,
in the test's event loop:

    async with FakeSlack(signing_secret="s") as slack:
        slack.add_team("T1", token="xoxb-1")
        slack.add_message("T1", "C1", ts="1700000000.000100", text="the moon is cheese")
        status, body = await slack.deliver_event(url, {...})          # signed, like Slack
        assert slack.calls("chat.postMessage")[0].body["thread_ts"] == "1700000000.000100"

Web API methods answer as Slack does: HTTP 200 with `ok: false` and an `error` code for
invalid calls (`not_authed`, `invalid_auth`, `channel_not_found`, `thread_not_found`, ...), and
an unknown method answers 404 `unknown_method`, is recorded in `unknown`, and fails the test
when the stand-in closes. `conversations.history` pages newest first (`limit`, `cursor`,
`has_more`, `response_metadata.next_cursor`) between `oldest` and `latest` (exclusive unless
`inclusive`); `conversations.info` gives `members[channel]` as `num_members` when asked.
Interactivity: `chat.update` edits a message's text and blocks; `views.open` checks the modal
(a trigger id, the title and buttons' 24 characters, valid input blocks) and records it in
`views`; `deliver_interaction` sends `block_actions` and `view_submission` payloads.
`script(method, ...)` makes the next calls of a method answer 429 with Retry-After or a chosen
error. Socket Mode: `apps.connections.open` (app token) gives a WebSocket URL; the socket says
`hello`, `send_envelope` pushes an envelope and `acks` collects the client's acknowledgements.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

import aiohttp
from aiohttp import web

from tests.support.fake_server import FakeServer
from tests.support.slack_blocks import block_problem

METHODS = (
    "auth.test",
    "chat.postMessage",
    "chat.postEphemeral",
    "chat.update",
    "conversations.replies",
    "conversations.history",
    "conversations.info",
    "users.info",
    "oauth.v2.access",
    "apps.connections.open",
    "views.open",
    "reactions.add",
    "reactions.remove",
)


@dataclass(frozen=True)
class Call:
    """One request the stand-in received."""

    method: str  # Web API method, "response_url" or "unknown"
    path: str
    headers: Mapping[str, str]
    body: Mapping[str, Any]  # form fields or JSON, merged with the query string
    token: str | None  # the bearer token sent, if any
    at: float  # time.monotonic() when it arrived


@dataclass
class Team:
    """A workspace the stand-in knows, with its bot's identity."""

    team_id: str
    token: str
    bot_user_id: str
    bot_id: str
    domain: str
    channels: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


@dataclass
class _Scripted:
    status: int = 200
    error: str | None = None
    retry_after: int | None = None
    hang_up: bool = False
    after: bool = False  # hang up (or stall) only after the call took effect
    stall: float = 0.0  # answer this many seconds late (a test kills the caller meanwhile)


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """Return Slack's request signature of body: v0= HMAC-SHA256 of v0:{ts}:{body}."""
    base = b"v0:" + timestamp.encode() + b":" + body
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


class FakeSlack(FakeServer):
    """The stand-in server; use as an async context manager."""

    name = "Slack"
    access_log = False

    def __init__(self, *, signing_secret: str = "test-signing-secret") -> None:
        super().__init__()
        self.signing_secret = signing_secret
        self.teams: dict[str, Team] = {}
        self.app_tokens: set[str] = {"xapp-test"}
        self.oauth_codes: dict[str, dict[str, Any]] = {}  # code -> oauth.v2.access answer
        self.members: dict[str, int] = {}  # channel -> num_members (conversations.info)
        self.locales: dict[str, str] = {}  # user -> locale (users.info, include_locale)
        self.requests: list[Call] = []
        self.unknown: list[Call] = []  # failed on close (FakeServer)
        self.acks: list[dict[str, Any]] = []
        self.views: list[dict[str, Any]] = []  # modals opened with views.open
        self.sockets: list[web.WebSocketResponse] = []
        self._scripts: dict[str, list[_Scripted]] = {}
        self._ts = itertools.count(1)
        self._envelopes = itertools.count(1)
        self._ack_event = asyncio.Event()
        self._connected = asyncio.Event()

    # -- lifecycle -------------------------------------------------------------------------

    def add_routes(self, router: web.UrlDispatcher) -> None:
        router.add_route("*", "/api/{method}", self._api)
        router.add_post("/response/{key}", self._response_url)
        router.add_get("/socket", self._socket)
        router.add_route("*", "/{tail:.*}", self._unknown)

    async def close_connections(self) -> None:
        for ws in list(self.sockets):
            await ws.close()

    @property
    def base_url(self) -> str:
        """Return the server's root URL."""
        return self.url

    @property
    def api_base(self) -> str:
        """Return the Web API base URL (`SlackSettings.api_base`)."""
        return f"{self.base_url}/api/"

    # -- the world -------------------------------------------------------------------------

    def add_team(
        self, team_id: str, *, token: str, bot_user_id: str = "UBOT", bot_id: str = "BBOT"
    ) -> Team:
        """Make a workspace whose bot token is token."""
        team = Team(team_id, token, bot_user_id, bot_id, domain=team_id.lower())
        self.teams[team_id] = team
        return team

    def add_message(self, team_id: str, channel: str, **message: Any) -> dict[str, Any]:
        """Store a message (fields as Slack sends them; ts made when absent); return it."""
        message.setdefault("type", "message")
        message.setdefault("ts", self.new_ts())
        self.teams[team_id].channels.setdefault(channel, []).append(message)
        return message

    def add_oauth_code(self, code: str, *, team_id: str, token: str, bot_user_id: str) -> None:
        """Let oauth.v2.access exchange code for an install of team_id (and add the team)."""
        self.add_team(team_id, token=token, bot_user_id=bot_user_id, bot_id=f"B{team_id}")
        self.oauth_codes[code] = {
            "ok": True,
            "app_id": "A0FACTBOT",
            "authed_user": {"id": "UINSTALLER"},
            "scope": "app_mentions:read,chat:write,commands,channels:history",
            "token_type": "bot",
            "access_token": token,
            "bot_user_id": bot_user_id,
            "team": {"id": team_id, "name": f"Team {team_id}"},
            "enterprise": None,
            "is_enterprise_install": False,
        }

    def new_ts(self) -> str:
        """Return a fresh message timestamp."""
        return f"{1_700_000_000 + next(self._ts)}.{next(self._ts):06d}"

    def script(
        self,
        method: str,
        *,
        status: int = 200,
        error: str | None = None,
        retry_after: int = 1,
        times: int = 1,
        hang_up: bool = False,
        after: bool = False,
        stall: float = 0.0,
    ) -> None:
        """Make the next `times` calls of method answer 429 (status=429), an `ok: false` error,
        or hang up once the request arrived (hang_up: did Slack post it? nobody knows; with
        after, it did), or answer `stall` seconds late (with after, the call took effect at
        once; without, it takes effect at the end, unless the caller has gone)."""
        entry = _Scripted(
            status, error, retry_after if status == 429 else None, hang_up, after, stall
        )
        self._scripts.setdefault(method, []).extend([entry] * times)

    def calls(self, method: str) -> list[Call]:
        """Return the recorded calls of one method, in order."""
        return [c for c in self.requests if c.method == method]

    def posted(self, team_id: str, channel: str) -> list[dict[str, Any]]:
        """Return the messages the bot posted in a channel."""
        team = self.teams[team_id]
        return [m for m in team.channels.get(channel, []) if m.get("bot_id") == team.bot_id]

    # -- Web API ---------------------------------------------------------------------------

    async def _record(self, request: web.Request, method: str) -> Call:
        raw = await request.read()
        body: dict[str, Any] = dict(request.query)
        kind = request.content_type
        if raw and kind == "application/json":
            body.update(json.loads(raw))
        elif raw:
            body.update(parse_qsl(raw.decode(), keep_blank_values=True))
        auth = request.headers.get("Authorization", "")
        token = auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None
        token = token or body.get("token")
        call = Call(method, request.path, dict(request.headers), body, token, time.monotonic())
        self.requests.append(call)
        return call

    async def _unknown(self, request: web.Request) -> web.Response:
        call = await self._record(request, "unknown")
        self.unknown.append(call)
        return web.json_response({"ok": False, "error": "unknown_method"}, status=404)

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        if method not in METHODS:
            return await self._unknown(request)
        call = await self._record(request, method)
        scripted = self._scripts.get(method)
        if scripted and scripted[0].stall:
            entry = scripted.pop(0)
            team = next((t for t in self.teams.values() if t.token == call.token), None)
            assert team is not None
            handler = getattr(self, "_" + method.replace(".", "_").lower())
            done = handler(team, call.body) if entry.after else None
            await asyncio.sleep(entry.stall)
            if done is None:
                if request.transport is None or request.transport.is_closing():
                    raise ConnectionResetError("the caller went away before the call took effect")
                done = handler(team, call.body)
            return web.json_response(done)
        if scripted:
            entry = scripted.pop(0)
            if entry.hang_up and entry.after:
                team = next((t for t in self.teams.values() if t.token == call.token), None)
                assert team is not None
                getattr(self, "_" + method.replace(".", "_").lower())(team, call.body)
            if entry.hang_up:
                assert request.transport is not None
                request.transport.close()
                raise ConnectionResetError("the stand-in hung up")
            if entry.status == 429:
                headers = {"Retry-After": str(entry.retry_after)}
                return web.json_response(
                    {"ok": False, "error": "ratelimited"}, status=429, headers=headers
                )
            return web.json_response({"ok": False, "error": entry.error}, status=entry.status)
        if method == "oauth.v2.access":
            return web.json_response(self._oauth(call))
        if method == "apps.connections.open":
            if call.token not in self.app_tokens:
                return web.json_response({"ok": False, "error": "invalid_auth"})
            return web.json_response({"ok": True, "url": f"ws://127.0.0.1:{self.port}/socket"})
        team = next((t for t in self.teams.values() if t.token == call.token), None)
        if team is None:
            error = "not_authed" if not call.token else "invalid_auth"
            return web.json_response({"ok": False, "error": error})
        handler = getattr(self, "_" + method.replace(".", "_").lower())
        result: dict[str, Any] = handler(team, call.body)
        return web.json_response(result)

    def _oauth(self, call: Call) -> dict[str, Any]:
        answer = self.oauth_codes.get(str(call.body.get("code")))
        if answer is None:
            return {"ok": False, "error": "invalid_code"}
        if "Authorization" not in call.headers and "client_secret" not in call.body:
            return {"ok": False, "error": "invalid_client_id"}
        return answer

    def _auth_test(self, team: Team, body: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": f"https://{team.domain}.slack.com/",
            "team": f"Team {team.team_id}",
            "user": "factbot",
            "team_id": team.team_id,
            "user_id": team.bot_user_id,
            "bot_id": team.bot_id,
            "is_enterprise_install": False,
        }

    def _channel(self, team: Team, body: Mapping[str, Any]) -> list[dict[str, Any]] | None:
        return team.channels.get(str(body.get("channel")))

    def _message(self, team: Team, body: Mapping[str, Any]) -> dict[str, Any] | None:
        ts = str(body.get("timestamp"))
        return next((m for m in self._channel(team, body) or () if m.get("ts") == ts), None)

    def _reactions_add(self, team: Team, body: Mapping[str, Any]) -> dict[str, Any]:
        """Add the bot's reaction; Slack answers `already_reacted` to a second one."""
        message = self._message(team, body)
        if message is None:
            return {"ok": False, "error": "message_not_found"}
        mine = message.setdefault("reactions_by_bot", [])
        if body.get("name") in mine:
            return {"ok": False, "error": "already_reacted"}
        mine.append(str(body.get("name")))
        return {"ok": True}

    def _reactions_remove(self, team: Team, body: Mapping[str, Any]) -> dict[str, Any]:
        """Remove the bot's reaction; Slack answers `no_reaction` when it has none."""
        message = self._message(team, body)
        if message is None:
            return {"ok": False, "error": "message_not_found"}
        mine = message.setdefault("reactions_by_bot", [])
        if body.get("name") not in mine:
            return {"ok": False, "error": "no_reaction"}
        mine.remove(str(body.get("name")))
        return {"ok": True}

    def reactions(self, team_id: str, channel: str, ts: str) -> list[str]:
        """Return the bot's reactions on a message, in the order added."""
        found = [m for m in self.teams[team_id].channels.get(channel, []) if m.get("ts") == ts]
        return list(found[0].get("reactions_by_bot", [])) if found else []

    def _chat_postmessage(self, team: Team, body: Mapping[str, Any]) -> dict[str, Any]:
        messages = self._channel(team, body)
        if messages is None:
            return {"ok": False, "error": "channel_not_found"}
        if not body.get("text") and not body.get("blocks"):
            return {"ok": False, "error": "no_text"}
        blocks = body.get("blocks")
        if isinstance(blocks, str):
            blocks = json.loads(blocks)
        problem = block_problem(blocks or [])
        if problem:
            return {"ok": False, "error": "invalid_blocks", "errors": [problem]}
        if len(str(body.get("text") or "")) > 40_000:
            return {"ok": False, "error": "msg_too_long"}
        message = {
            "type": "message",
            "ts": self.new_ts(),
            "user": team.bot_user_id,
            "bot_id": team.bot_id,
            "text": body.get("text") or "",
            "blocks": blocks or [],
        }
        if body.get("metadata"):
            metadata = body["metadata"]
            message["metadata"] = json.loads(metadata) if isinstance(metadata, str) else metadata
        if body.get("thread_ts"):
            message["thread_ts"] = body["thread_ts"]
        messages.append(message)
        return {"ok": True, "channel": body["channel"], "ts": message["ts"], "message": message}

    def _chat_postephemeral(self, team: Team, body: Mapping[str, Any]) -> dict[str, Any]:
        if self._channel(team, body) is None:
            return {"ok": False, "error": "channel_not_found"}
        if not body.get("user"):
            return {"ok": False, "error": "user_not_in_channel"}
        return {"ok": True, "message_ts": self.new_ts()}

    def _chat_update(self, team: Team, body: Mapping[str, Any]) -> dict[str, Any]:
        blocks = body.get("blocks")
        if isinstance(blocks, str):
            blocks = json.loads(blocks)
        if blocks is not None:
            problem = block_problem(blocks)
            if problem:
                return {"ok": False, "error": "invalid_blocks", "errors": [problem]}
        for message in self._channel(team, body) or []:
            if message["ts"] == body.get("ts"):
                if message.get("bot_id") != team.bot_id:
                    return {"ok": False, "error": "cant_update_message"}
                message["text"] = body.get("text") or ""
                if blocks is not None:
                    message["blocks"] = blocks
                return {"ok": True, "channel": body["channel"], "ts": message["ts"]}
        return {"ok": False, "error": "message_not_found"}

    def _views_open(self, team: Team, body: Mapping[str, Any]) -> dict[str, Any]:
        view = body.get("view")
        if isinstance(view, str):
            view = json.loads(view)
        if not body.get("trigger_id"):
            return {"ok": False, "error": "invalid_trigger_id"}
        if not isinstance(view, dict) or view.get("type") != "modal":
            return {"ok": False, "error": "invalid_arguments"}
        for part in ("title", "submit", "close"):
            text = (view.get(part) or {}).get("text", "")
            if (part == "title" and not text) or len(text) > 24:
                return {"ok": False, "error": "invalid_arguments", "errors": [f"{part} > 24"]}
        problem = block_problem(view.get("blocks") or [])
        if problem or len(str(view.get("private_metadata") or "")) > 3000:
            return {"ok": False, "error": "invalid_arguments", "errors": [problem or "metadata"]}
        opened = {**view, "id": f"V{len(self.views) + 1}", "team_id": team.team_id}
        self.views.append(opened)
        return {"ok": True, "view": opened}

    def _conversations_replies(self, team: Team, body: Mapping[str, Any]) -> dict[str, Any]:
        messages = self._channel(team, body)
        if messages is None:
            return {"ok": False, "error": "channel_not_found"}
        ts = body.get("ts")
        parent = next((m for m in messages if m["ts"] == ts), None)
        if parent is None:
            return {"ok": False, "error": "thread_not_found"}
        thread = [parent] + [m for m in messages if m.get("thread_ts") == ts and m is not parent]
        limit = int(body.get("limit") or 1000)
        shown = [_shown(m, body) for m in thread[:limit]]
        return {"ok": True, "messages": shown, "has_more": len(thread) > limit}

    def _conversations_history(self, team: Team, body: Mapping[str, Any]) -> dict[str, Any]:
        messages = self._channel(team, body)
        if messages is None:
            return {"ok": False, "error": "channel_not_found"}
        top = [m for m in messages if m.get("thread_ts") in (None, m["ts"])]
        inclusive = str(body.get("inclusive")).lower() in ("1", "true")
        if body.get("oldest"):
            oldest = float(body["oldest"])
            top = [
                m
                for m in top
                if float(m["ts"]) > oldest or (inclusive and float(m["ts"]) == oldest)
            ]
        if body.get("latest"):
            latest = float(body["latest"])
            top = [
                m
                for m in top
                if float(m["ts"]) < latest or (inclusive and float(m["ts"]) == latest)
            ]
        limit = int(body.get("limit") or 100)
        start = int(str(body.get("cursor") or "page:0").removeprefix("page:") or 0)
        newest = sorted(top, key=lambda m: float(m["ts"]), reverse=True)
        page = newest[start : start + limit]
        more = start + limit < len(newest)
        return {
            "ok": True,
            "messages": [_shown(m, body) for m in page],
            "has_more": more,
            "response_metadata": {"next_cursor": f"page:{start + limit}" if more else ""},
        }

    def _conversations_info(self, team: Team, body: Mapping[str, Any]) -> dict[str, Any]:
        if self._channel(team, body) is None:
            return {"ok": False, "error": "channel_not_found"}
        channel: dict[str, Any] = {"id": body["channel"], "is_archived": False}
        if str(body.get("include_num_members")).lower() in ("1", "true"):
            channel["num_members"] = self.members.get(str(body["channel"]), 0)
        return {"ok": True, "channel": channel}

    def _users_info(self, team: Team, body: Mapping[str, Any]) -> dict[str, Any]:
        user = str(body.get("user") or "")
        if not user:
            return {"ok": False, "error": "user_not_found"}
        found: dict[str, Any] = {"id": user, "team_id": team.team_id, "is_bot": False}
        if str(body.get("include_locale")).lower() in ("1", "true"):
            found["locale"] = self.locales.get(user, "en-US")  # Slack's answer: an IETF tag
        return {"ok": True, "user": found}

    async def _response_url(self, request: web.Request) -> web.Response:
        await self._record(request, "response_url")
        return web.Response(text="ok")

    # -- Socket Mode -----------------------------------------------------------------------

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self.sockets.append(ws)
        await ws.send_json({"type": "hello", "num_connections": 1, "debug_info": {}})
        self._connected.set()
        async for message in ws:
            if message.type == aiohttp.WSMsgType.TEXT:
                self.acks.append(json.loads(message.data))
                self._ack_event.set()
        self.sockets.remove(ws)
        return ws

    async def wait_connected(self, seconds: float = 10.0) -> None:
        """Wait until a Socket Mode client has connected."""
        async with asyncio.timeout(seconds):
            await self._connected.wait()

    async def send_envelope(self, kind: str, payload: Mapping[str, Any]) -> str:
        """Push an envelope (events_api, slash_commands, interactive); return its envelope_id."""
        envelope_id = f"env-{next(self._envelopes)}"
        envelope = {
            "envelope_id": envelope_id,
            "type": kind,
            "payload": dict(payload),
            "accepts_response_payload": kind != "events_api",
            "retry_attempt": 0,
            "retry_reason": "",
        }
        await self.sockets[-1].send_json(envelope)
        return envelope_id

    async def wait_ack(self, envelope_id: str, seconds: float = 10.0) -> dict[str, Any]:
        """Return the client's acknowledgement of an envelope once it arrives."""
        async with asyncio.timeout(seconds):
            while True:
                for ack in self.acks:
                    if ack.get("envelope_id") == envelope_id:
                        return ack
                self._ack_event.clear()
                await self._ack_event.wait()

    # -- signed HTTP delivery --------------------------------------------------------------

    async def deliver(
        self,
        url: str,
        body: bytes,
        *,
        content_type: str,
        timestamp: int | None = None,
        secret: str | None = None,
        retry_num: int | None = None,
        retry_reason: str = "http_timeout",
    ) -> tuple[int, str]:
        """POST body to url signed as Slack signs it; return the status and the answer."""
        ts = str(int(time.time()) if timestamp is None else timestamp)
        headers = {
            "Content-Type": content_type,
            "X-Slack-Request-Timestamp": ts,
            "X-Slack-Signature": sign(secret or self.signing_secret, ts, body),
        }
        if retry_num is not None:
            headers["X-Slack-Retry-Num"] = str(retry_num)
            headers["X-Slack-Retry-Reason"] = retry_reason
        async with (
            aiohttp.ClientSession() as session,
            session.post(url, data=body, headers=headers) as response,
        ):
            return response.status, await response.text()

    async def deliver_event(
        self, url: str, envelope: Mapping[str, Any], **kw: Any
    ) -> tuple[int, str]:
        """Deliver an Events API envelope (JSON)."""
        body = json.dumps(envelope).encode()
        return await self.deliver(url, body, content_type="application/json", **kw)

    async def deliver_command(
        self, url: str, fields: Mapping[str, str], **kw: Any
    ) -> tuple[int, str]:
        """Deliver a slash command (form-encoded)."""
        body = urlencode(fields).encode()
        return await self.deliver(url, body, content_type="application/x-www-form-urlencoded", **kw)

    async def deliver_interaction(
        self, url: str, payload: Mapping[str, Any], **kw: Any
    ) -> tuple[int, str]:
        """Deliver a shortcut or other interaction (`payload=<json>`, form-encoded)."""
        body = urlencode({"payload": json.dumps(payload)}).encode()
        return await self.deliver(url, body, content_type="application/x-www-form-urlencoded", **kw)

    def response_url(self, key: str) -> str:
        """Return a response URL the stand-in records."""
        return f"{self.base_url}/response/{key}"


def _shown(message: Mapping[str, Any], body: Mapping[str, Any]) -> dict[str, Any]:
    """Return a message as Slack lists it: metadata only when include_all_metadata is true."""
    if str(body.get("include_all_metadata")).lower() in ("1", "true"):
        return dict(message)
    return {k: v for k, v in message.items() if k != "metadata"}
