"""A stand-in Discord for tests: REST v10 and the gateway, on 127.0.0.1 port 0, in the test's loop.

The real discord.py talks to it (point it at `api_base` and `gateway_url`), so a test asserts on
what the library actually sent. REST: the routes factbot uses (log-in, command sync, interaction
callbacks and their webhook messages, channel messages (posted, fetched and listed with
`limit`/`after`/`before`), threads on messages, channels, guilds with counts); any
other route is a loud 404 naming it, and a message over Discord's limits (embed sizes, field
counts, content, nonce, thread name) is refused with 400 / 50035 as Discord does. Every request
is recorded (`requests`) before it is answered; messages keep their buttons (`components`,
checked as Discord checks them) and can be edited (PATCH), and modal responses (type 9) are
checked too, and `script` makes the next matching requests
fail: 429 with Retry-After (and `Via`, without which discord.py takes a 429 for a Cloudflare
ban), 403, 50x. Channel messages honour `nonce` + `enforce_nonce` the way Discord does: a
repeated nonce returns the first message and posts nothing.

Where Discord refuses, the stand-in refuses with Discord's codes: a second callback to one
interaction is 400 / 40060 ("already acknowledged"); a callback to an interaction `expire`d (its
3 seconds past) is 404 / 10062 ("Unknown interaction") and its token's webhook calls are
404 / 10015; a second thread on one message is 400 / 160004; an unknown channel is 404 / 10003.

Gateway: HELLO, IDENTIFY → READY (its `resume_gateway_url` is this server) and one GUILD_CREATE
per guild, RESUME → RESUMED, heartbeat → ACK; `dispatch` sends an event a test injects to every
session. Frames are compressed as the client asks: discord.py 2.7.1 asks for zstd-stream when
`zstandard` (or `compression.zstd`) is importable, else zlib-stream; the stand-in speaks both
(zstd-stream only with `zstandard` installed; without it, that request is refused loudly).
"""

from __future__ import annotations

import asyncio
import fnmatch
import itertools
import json
import zlib
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from tests.support.fake_server import FakeServer

try:  # discord.py asks for zstd-stream whenever zstandard is importable (atproto brings it)
    import zstandard
except ImportError:  # pragma: no cover - depends on what is installed
    zstandard = None  # type: ignore[assignment]

from tests.support import discord_payloads as payloads

JSON_TYPE = "application/json"  # discord.py parses a body only with exactly this type


@dataclass(frozen=True)
class Recorded:
    """One REST request as the stand-in received it."""

    method: str
    path: str  # without the /api/v10 prefix
    query: dict[str, str]
    json: Any
    headers: dict[str, str]


@dataclass
class Scripted:
    """Answers the next `times` requests matching method and path (fnmatch pattern) with status."""

    method: str
    pattern: str
    status: int
    times: int = 1
    retry_after: float = 0.0
    body: dict[str, Any] | None = None


class _Stream:
    """One gateway session's transport compression: every frame flushed, the stream kept."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        if kind == "zstd-stream":
            assert zstandard is not None
            self._zstd = zstandard.ZstdCompressor().compressobj()
        else:
            self._zlib = zlib.compressobj()

    def frame(self, raw: bytes) -> bytes:
        """Return raw compressed as the next frame of the stream."""
        if self.kind == "zstd-stream":
            flush = zstandard.COMPRESSOBJ_FLUSH_BLOCK
            return bytes(self._zstd.compress(raw) + self._zstd.flush(flush))
        return self._zlib.compress(raw) + self._zlib.flush(zlib.Z_SYNC_FLUSH)


@dataclass
class _Session:
    ws: web.WebSocketResponse
    compressor: Any | None
    seq: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class FakeDiscord(FakeServer):
    """The stand-in server; use `async with FakeDiscord() as discord:`."""

    name = "Discord"

    def __init__(self, *, token: str = "bot-token", application_id: str = "100") -> None:
        super().__init__()
        self.token = token
        self.application_id = application_id
        self.bot = payloads.user("900", "factbot", bot=True)
        self.guilds: dict[str, dict[str, Any]] = {}
        self.channels: dict[str, dict[str, Any]] = {}
        self.messages: dict[str, dict[str, Any]] = {}  # id -> message payload
        self.commands: list[dict[str, Any]] = []
        self.command_syncs = 0
        self.requests: list[Recorded] = []
        self.scripts: list[Scripted] = []
        self.identified = asyncio.Event()
        self.sessions: list[_Session] = []
        self.connections: list[dict[str, str]] = []  # each gateway connection's query
        self.gateway_headers: list[dict[str, str]] = []  # each gateway connection's headers
        self.acknowledged: set[str] = set()  # interactions with a callback answered
        self.expired: set[str] = set()  # interactions past their 3 seconds
        self._tokens: dict[str, str] = {}  # interaction token -> interaction id
        self.resumes = 0
        self.member_counts: dict[str, int] = {}  # guild -> approximate_member_count
        self._nonces: dict[tuple[str, str], str] = {}
        self._ids = itertools.count(900_000)

    # -- life cycle ---------------------------------------------------------------------------

    def add_routes(self, router: web.UrlDispatcher) -> None:
        router.add_get("/gateway", self._gateway)
        router.add_route("*", "/api/v10/{tail:.*}", self._rest)
        router.add_route("*", "/{tail:.*}", self._unknown)

    async def close_connections(self) -> None:
        for session in self.sessions:
            await session.ws.close()

    @property
    def api_base(self) -> str:
        """Return the REST base URL (DiscordSettings.api_base)."""
        return f"{self.url}/api/v10"

    @property
    def gateway_url(self) -> str:
        """Return the gateway URL (DiscordSettings.gateway_url)."""
        return f"ws://127.0.0.1:{self.port}/gateway"

    # -- test set-up ----------------------------------------------------------------------------

    def add_guild(self, guild_id: str, channels: list[dict[str, Any]]) -> None:
        """Add a guild with channels; READY and GUILD_CREATE announce it."""
        self.guilds[guild_id] = payloads.guild(guild_id, self.bot, channels)
        for channel in channels:
            self.channels[channel["id"]] = {**channel, "guild_id": guild_id}

    def add_message(self, message: dict[str, Any]) -> None:
        """Store a message (GET /channels/{id}/messages/{mid} returns it)."""
        self.messages[message["id"]] = message

    def script(self, method: str, pattern: str, status: int, **options: Any) -> Scripted:
        """Make the next matching request(s) fail with status; return the script entry."""
        entry = Scripted(method, pattern, status, **options)
        self.scripts.append(entry)
        return entry

    def expire(self, interaction_id: str) -> None:
        """Make interaction_id too late to answer (as after 3 s): its callback gets 10062."""
        self.expired.add(interaction_id)

    def new_id(self) -> str:
        """Return a fresh snowflake-like id."""
        return payloads.snowflake(next(self._ids))

    def sent(self, method: str, pattern: str) -> list[Recorded]:
        """Return the recorded requests matching method and path pattern."""
        return [r for r in self.requests if r.method == method and fnmatch.fnmatch(r.path, pattern)]

    def posted_messages(self) -> list[Recorded]:
        """Return every channel message factbot posted (POST /channels/*/messages)."""
        return self.sent("POST", "/channels/*/messages")

    # -- gateway --------------------------------------------------------------------------------

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        """Send a dispatch event (op 0) to every connected session."""
        await asyncio.wait_for(self.identified.wait(), 10)
        if event == "INTERACTION_CREATE":
            self._tokens[data["token"]] = data["id"]
        for session in list(self.sessions):
            await self._send(session, {"op": 0, "t": event, "d": data})

    async def drop(self, code: int = 4000) -> None:
        """Close every gateway session with code (4000: "unknown error", resumable)."""
        for session in list(self.sessions):
            await session.ws.close(code=code)

    async def _send(self, session: _Session, frame: dict[str, Any]) -> None:
        async with session.lock:
            if frame["op"] == 0:
                session.seq += 1
                frame["s"] = session.seq
            else:
                frame.setdefault("s", None)
            frame.setdefault("t", None)
            raw = json.dumps(frame).encode()
            if session.compressor is None:
                await session.ws.send_str(raw.decode())
            else:
                await session.ws.send_bytes(session.compressor.frame(raw))

    async def _gateway(self, request: web.Request) -> web.StreamResponse:
        self.connections.append(dict(request.query))
        self.gateway_headers.append({k.lower(): v for k, v in request.headers.items()})
        compress = request.query.get("compress")
        if compress not in (None, "zlib-stream", "zstd-stream") or (
            compress == "zstd-stream" and zstandard is None
        ):
            raise web.HTTPBadRequest(text=f"fake Discord: compression {compress!r} not supported")
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        session = _Session(ws, _Stream(compress) if compress else None)
        self.sessions.append(session)
        await self._send(session, {"op": 10, "d": {"heartbeat_interval": 30_000}})
        try:
            async for msg in ws:
                if msg.type is not WSMsgType.TEXT:
                    break
                await self._on_frame(session, json.loads(msg.data))
        finally:
            self.sessions.remove(session)
        return ws

    async def _on_frame(self, session: _Session, frame: dict[str, Any]) -> None:
        op, data = frame["op"], frame.get("d") or {}
        if op == 1:
            await self._send(session, {"op": 11})
        elif op == 2:
            if data["token"] != self.token:
                await session.ws.close(code=4004, message=b"Authentication failed.")
                return
            ready = {
                "v": 10,
                "user": self.bot,
                "guilds": [{"id": gid, "unavailable": True} for gid in self.guilds],
                "session_id": "session-1",
                "resume_gateway_url": self.gateway_url,
                "application": {"id": self.application_id, "flags": 0},
                "shard": [0, 1],
            }
            await self._send(session, {"op": 0, "t": "READY", "d": ready})
            for guild in self.guilds.values():
                await self._send(session, {"op": 0, "t": "GUILD_CREATE", "d": guild})
            self.identified.set()
        elif op == 6:
            self.resumes += 1
            await self._send(session, {"op": 0, "t": "RESUMED", "d": {}})
        elif op in (3, 8):  # presence update, request guild members: nothing to answer
            return
        else:
            await session.ws.close(code=4001, message=f"fake Discord: unknown op {op}".encode())

    # -- REST -----------------------------------------------------------------------------------

    async def _unknown(self, request: web.Request) -> web.Response:
        return web.json_response(
            {"message": f"fake Discord: no route {request.method} {request.path}", "code": 0},
            status=404,
        )

    async def _rest(self, request: web.Request) -> web.Response:
        path = "/" + request.match_info["tail"]
        body = await request.read()
        is_json = request.content_type == JSON_TYPE and body
        recorded = Recorded(
            request.method,
            path,
            dict(request.query),
            json.loads(body) if is_json else None,
            {k.lower(): v for k, v in request.headers.items()},
        )
        self.requests.append(recorded)
        for entry in self.scripts:
            matches = entry.method == request.method and fnmatch.fnmatch(path, entry.pattern)
            if entry.times > 0 and matches:
                entry.times -= 1
                return self._scripted(entry)
        authorized = recorded.headers.get("authorization") == f"Bot {self.token}"
        if not authorized and not path.startswith(("/interactions/", "/webhooks/")):
            return _json({"message": "401: Unauthorized", "code": 0}, 401)
        problems = form_problems(recorded.json) if request.method in ("POST", "PATCH") else []
        if problems:  # what Discord answers a message over its limits
            return _json({"message": "Invalid Form Body", "code": 50035, "errors": problems}, 400)
        refusal = self._interaction_refusal(request.method, path.split("/")[1:])
        if refusal is not None:
            return refusal
        handler = self._route(request.method, path.split("/")[1:])
        if handler is None:
            return _json({"message": f"fake Discord: no route {request.method} {path}"}, 404)
        response: web.Response = handler(recorded)
        return response

    def _scripted(self, entry: Scripted) -> web.Response:
        if entry.status == 429:
            body = {"message": "You are being rate limited.", "retry_after": entry.retry_after}
            headers = {"Retry-After": str(entry.retry_after), "Via": "1.1 google"}
            headers |= {"X-RateLimit-Scope": "user", "X-RateLimit-Global": "false"}
            return _json({**body, "global": False}, 429, headers)
        default = {
            "message": f"scripted {entry.status}",
            "code": 50013 if entry.status == 403 else 0,
        }
        return _json(entry.body or default, entry.status)

    def _interaction_refusal(self, method: str, parts: list[str]) -> web.Response | None:
        """Return Discord's refusal of a callback or webhook call it would refuse, else None."""
        match method, parts:
            case "POST", ["interactions", iid, _token, "callback"]:
                if iid in self.expired:
                    return _json({"message": "Unknown interaction", "code": 10062}, 404)
                if iid in self.acknowledged:
                    message = "Interaction has already been acknowledged."
                    return _json({"message": message, "code": 40060}, 400)
                self.acknowledged.add(iid)
            case _, ["webhooks", _app, token, *_rest] if self._tokens.get(token) in self.expired:
                return _json({"message": "Unknown Webhook", "code": 10015}, 404)
        return None

    def _route(self, method: str, parts: list[str]) -> Any:
        match method, parts:
            case "GET", ["users", "@me"]:
                return lambda r: _json(self.bot)
            case "GET", ["oauth2", "applications", "@me"]:
                return lambda r: _json(payloads.application(self.application_id, self.bot))
            case "GET", ["gateway", "bot"]:
                limit = {"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}
                return lambda r: _json(
                    {"url": self.gateway_url, "shards": 1, "session_start_limit": limit}
                )
            case "GET", ["gateway"]:
                return lambda r: _json({"url": self.gateway_url})
            case "PUT", ["applications", app, "commands"] if app == self.application_id:
                return self._sync_commands
            case "GET", ["applications", app, "commands"] if app == self.application_id:
                return lambda r: _json(self.commands)
            case "POST", ["interactions", iid, _token, "callback"]:
                return lambda r: _json(payloads.callback_response(iid, r.json))
            case (("PATCH" | "GET"), ["webhooks", app, _token, "messages", _mid]):
                return lambda r: _json(self._webhook_message(r, app))
            case "DELETE", ["webhooks", _app, _token, "messages", _mid]:
                return lambda r: web.Response(status=204)
            case "POST", ["webhooks", app, _token]:
                return lambda r: _json(self._webhook_message(r, app))
            case "GET", ["channels", cid] if cid in self.channels:
                return lambda r: _json(self.channels[cid])
            case "GET", ["channels", cid] if cid.isdigit():
                return lambda r: _json({"message": "Unknown Channel", "code": 10003}, 404)
            case "GET", ["channels", cid, "messages"] if cid in self.channels:
                return lambda r: _json(self._channel_messages(cid, r.query))
            case "GET", ["guilds", gid] if gid in self.guilds:
                return lambda r: _json(self._guild(gid))
            case "GET", ["channels", cid, "messages", mid] if mid in self.messages:
                return lambda r: _json(self.messages[mid])
            case "PATCH", ["channels", cid, "messages", mid] if mid in self.messages:
                return lambda r: self._edit_message(cid, mid, r.json)
            case "POST", ["channels", cid, "messages"] if cid in self.channels:
                return lambda r: _json(self._post_message(cid, r.json))
            case "POST", ["channels", cid, "messages", mid, "threads"] if mid in self.channels:
                message = "A thread has already been created for this message"
                return lambda r: _json({"message": message, "code": 160004}, 400)
            case "POST", ["channels", cid, "messages", mid, "threads"] if cid in self.channels:
                return lambda r: _json(self._start_thread(cid, mid, r.json))
        return None

    def _channel_messages(self, channel_id: str, query: dict[str, str]) -> list[dict[str, Any]]:
        """List a channel's messages as Discord does: newest first; `after` gives the oldest."""
        limit = min(int(query.get("limit") or 50), 100)
        found = sorted(
            (m for m in self.messages.values() if m.get("channel_id") == channel_id),
            key=lambda m: int(m["id"]),
        )
        if "before" in query:
            found = [m for m in found if int(m["id"]) < int(query["before"])]
        if "after" in query:
            found = [m for m in found if int(m["id"]) > int(query["after"])][:limit]
        else:
            found = found[-limit:]
        return list(reversed(found))

    def _guild(self, guild_id: str) -> dict[str, Any]:
        guild = dict(self.guilds[guild_id])
        guild["approximate_member_count"] = self.member_counts.get(guild_id, 0)
        return guild

    def _sync_commands(self, recorded: Recorded) -> web.Response:
        self.command_syncs += 1
        self.commands = [
            {"description": "", "default_member_permissions": None, "nsfw": False}
            | command
            | {"id": self.new_id(), "application_id": self.application_id, "version": "1"}
            for command in recorded.json
        ]
        return _json(self.commands)

    def _webhook_message(self, recorded: Recorded, app: str) -> dict[str, Any]:
        data = recorded.json or {}
        return payloads.message(
            self.new_id(), "0", self.bot, data.get("content") or "", webhook_id=app
        ) | {"embeds": data.get("embeds", []), "flags": data.get("flags", 0)}

    def _post_message(self, channel_id: str, data: dict[str, Any]) -> dict[str, Any]:
        nonce = data.get("nonce")
        if nonce is not None and data.get("enforce_nonce"):
            first = self._nonces.get((channel_id, nonce))
            if first is not None:
                return self.messages[first]
        message = payloads.message(
            self.new_id(),
            channel_id,
            self.bot,
            data.get("content") or "",
            guild_id=self.channels[channel_id].get("guild_id"),
        )
        message |= {
            "embeds": data.get("embeds", []),
            "components": data.get("components", []),
            "nonce": nonce,
        }
        if data.get("message_reference"):
            message["message_reference"] = data["message_reference"]
        self.messages[message["id"]] = message
        if nonce is not None:
            self._nonces[(channel_id, nonce)] = message["id"]
        return message

    def _edit_message(self, channel_id: str, message_id: str, data: dict[str, Any]) -> web.Response:
        message = self.messages[message_id]
        if message["channel_id"] != channel_id:
            return _json({"message": "Unknown Message", "code": 10008}, 404)
        if message["author"]["id"] != self.bot["id"]:
            return _json({"message": "Cannot edit a message authored by another user"}, 403)
        for part in ("content", "embeds", "components"):
            if part in data:
                message[part] = data[part]
        message["edited_timestamp"] = payloads.NOW
        return _json(message)

    def _start_thread(
        self, channel_id: str, message_id: str, data: dict[str, Any]
    ) -> dict[str, Any]:
        parent = self.channels[channel_id]
        thread = payloads.thread(message_id, parent["guild_id"], channel_id, data["name"])
        self.channels[message_id] = thread
        return thread


def form_problems(body: Any) -> list[str]:
    """Return how a message body breaks Discord's limits (empty when it does not)."""
    if not isinstance(body, dict):
        return []
    callback = body.get("type") if isinstance(body.get("data"), dict) else None
    body = body.get("data") if isinstance(body.get("data"), dict) else body  # a callback
    problems = []
    if len(body.get("content") or "") > 2000:
        problems.append("content: more than 2000 characters")
    if len(str(body.get("nonce") or "")) > 25:
        problems.append("nonce: more than 25 characters")
    if "name" in body and len(body["name"]) > 100:
        problems.append("name: more than 100 characters")
    if callback == 9:  # a modal: text inputs, not buttons
        problems += modal_problems(body)
    else:
        problems += component_problems(body.get("components") or [])
    embeds = body.get("embeds") or []
    if len(embeds) > 10:
        problems.append("embeds: more than 10")
    total = 0
    for n, embed in enumerate(embeds):
        parts = {
            "title": (embed.get("title") or "", 256),
            "description": (embed.get("description") or "", 4096),
            "footer.text": ((embed.get("footer") or {}).get("text") or "", 2048),
            "author.name": ((embed.get("author") or {}).get("name") or "", 256),
        }
        fields = embed.get("fields") or []
        if len(fields) > 25:
            problems.append(f"embeds.{n}.fields: more than 25")
        for i, entry in enumerate(fields):
            parts[f"fields.{i}.name"] = (entry.get("name") or "", 256)
            parts[f"fields.{i}.value"] = (entry.get("value") or "", 1024)
            if not entry.get("name") or not entry.get("value"):
                problems.append(f"embeds.{n}.fields.{i}: empty name or value")
        for name, (text, limit) in parts.items():
            total += len(text)
            if len(text) > limit:
                problems.append(f"embeds.{n}.{name}: more than {limit} characters")
    if total > 6000:
        problems.append("embeds: more than 6000 characters in all")
    return problems


def component_problems(rows: Any) -> list[str]:
    """Return how message components break Discord's rules (action rows of buttons)."""
    problems: list[str] = []
    if len(rows) > 5:
        problems.append("components: more than 5 action rows")
    for n, row in enumerate(rows):
        if row.get("type") != 1:
            problems.append(f"components.{n}: a top-level component must be an action row")
            continue
        buttons = row.get("components") or []
        if not 0 < len(buttons) <= 5:
            problems.append(f"components.{n}: an action row holds 1-5 buttons")
        for i, button in enumerate(buttons):
            where = f"components.{n}.components.{i}"
            if button.get("type") != 2 or button.get("style") not in (1, 2, 3, 4):
                problems.append(f"{where}: a button of style 1-4 (5 is a link) expected")
            if len(button.get("label") or "") > 80:
                problems.append(f"{where}.label: more than 80 characters")
            if not 0 < len(button.get("custom_id") or "") <= 100:
                problems.append(f"{where}.custom_id: 1-100 characters")
    return problems


def modal_problems(data: dict[str, Any]) -> list[str]:
    """Return how a modal (interaction response type 9) breaks Discord's rules."""
    problems: list[str] = []
    if not 0 < len(data.get("title") or "") <= 45:
        problems.append("title: 1-45 characters")
    if not 0 < len(data.get("custom_id") or "") <= 100:
        problems.append("custom_id: 1-100 characters")
    for n, row in enumerate(data.get("components") or []):
        inputs = row.get("components") or ([row["component"]] if "component" in row else [])
        for field_ in inputs:
            if field_.get("type") != 4:
                problems.append(f"components.{n}: a text input expected")
                continue
            label = row.get("label") if row.get("type") == 18 else field_.get("label")
            if not 0 < len(label or "") <= 45:
                problems.append(f"components.{n}: label 1-45 characters")
            limit = int(field_.get("max_length") or 4000)
            if limit > 4000 or len(field_.get("value") or "") > limit:
                problems.append(f"components.{n}: value longer than max_length (at most 4000)")
    return problems


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(
        status=status, body=json.dumps(data).encode(), content_type=JSON_TYPE, headers=headers
    )
