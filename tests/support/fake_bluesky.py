"""A stand-in Bluesky PDS + AppView for tests: XRPC over HTTP on 127.0.0.1 port 0, in the test loop.

The real atproto `AsyncClient(base_url=fake.url)` talks to it. Sessions: `createSession` answers
without a `didDoc` (so the client stays on this server), access and refresh tokens are unsigned
JWTs with an `exp`; `refreshSession` rotates both and the old refresh token stops working (as on
Bluesky); an expired access token gets 400 `ExpiredToken`. Reads: `listNotifications` (newest
first, `cursor` pages), `updateSeen`, `getPosts`, `getPostThread`, `searchPosts`, `getAuthorFeed`,
`getProfile(s)`, `getRecord`. Writes: `createRecord` (a post: at most 300 graphemes, facets
inside the text's UTF-8 bytes, reply root/parent that exist with the right CIDs, else 400
`InvalidRequest`) and `putRecord` (the profile, `swapRecord` honoured). Every request is recorded
(`requests`); `script` makes the next matching calls fail (429 with `ratelimit-*` headers, 5xx,
or a dropped connection); `hold` keeps calls unanswered until several are in flight together;
unknown methods are a loud 404 naming them.
"""

from __future__ import annotations

import asyncio
import base64
import fnmatch
import hashlib
import itertools
import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import regex
from aiohttp import web

from tests.support.fake_server import FakeServer

BOT_DID = "did:plc:factbot"
BOT_HANDLE = "factbot.test"
PASSWORD = "app-pass-1234"


@dataclass(frozen=True)
class Recorded:
    """One XRPC call as the stand-in received it."""

    method: str  # the NSID
    http: str
    params: dict[str, list[str]]
    body: Any
    auth: str | None


@dataclass
class _Script:
    method: str  # NSID glob
    status: int
    times: int = 1
    headers: dict[str, str] = field(default_factory=dict)
    error: str = "RateLimitExceeded"
    hang_up: bool = False


@dataclass
class _Hold:
    method: str  # NSID glob
    left: int
    barrier: asyncio.Barrier


def _b64(data: dict[str, Any]) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


def jwt(sub: str, scope: str, exp: float) -> str:
    """Return an unsigned JWT (atproto's client reads `exp` without checking a signature)."""
    header = _b64({"alg": "HS256", "typ": "JWT"})
    payload = _b64(
        {
            "sub": sub,
            "scope": scope,
            "iat": int(time.time()),
            "exp": int(exp),
            "jti": _cid(str(time.time_ns())),
        }
    )
    return f"{header}.{payload}.c2lnbmF0dXJl"


def _cid(seed: str) -> str:
    return "bafyrei" + hashlib.sha256(seed.encode()).hexdigest()[:40]


def graphemes(text: str) -> int:
    """Return the number of extended grapheme clusters in text."""
    return len(regex.findall(r"\X", text))


class FakeBluesky(FakeServer):
    """The stand-in server; use `async with FakeBluesky() as bsky:`."""

    name = "Bluesky"

    def __init__(self, *, access_seconds: float = 7200) -> None:
        super().__init__()
        self.requests: list[Recorded] = []
        self.posts: dict[str, dict[str, Any]] = {}  # uri -> post view (without replies)
        self.notifications: list[dict[str, Any]] = []  # oldest first
        self.profiles: dict[str, dict[str, Any]] = {
            BOT_DID: {"did": BOT_DID, "handle": BOT_HANDLE, "followersCount": 3}
        }
        self.records: dict[tuple[str, str, str], dict[str, Any]] = {}  # (repo, coll, rkey)
        self.access_seconds = access_seconds
        self.access: dict[str, float] = {}  # token -> expiry
        self.refresh: set[str] = set()
        self.seen_at: str | None = None
        self.sessions_created = 0
        self.sessions_refreshed = 0
        self._scripts: list[_Script] = []
        self._holds: list[_Hold] = []
        self._seq = itertools.count(1)
        self._clock = itertools.count(1)
        self._start = datetime.now(UTC) - timedelta(minutes=10)

    def add_routes(self, router: web.UrlDispatcher) -> None:
        router.add_route("*", "/xrpc/{nsid}", self._xrpc)

    # --- what a test sets up -------------------------------------------------------------

    def script(
        self,
        method: str,
        status: int,
        *,
        times: int = 1,
        headers: dict[str, str] | None = None,
        error: str = "RateLimitExceeded",
        hang_up: bool = False,
    ) -> None:
        """Make the next `times` calls of method (an NSID glob) fail with status."""
        self._scripts.append(_Script(method, status, times, dict(headers or {}), error, hang_up))

    def hold(self, method: str, count: int) -> None:
        """Answer none of the next `count` calls of method (an NSID glob) before all have come."""
        self._holds.append(_Hold(method, count, asyncio.Barrier(count)))

    def user(self, handle: str, *, followers: int = 10, bot: bool = False) -> str:
        """Add an account; return its DID."""
        did = f"did:plc:{handle.split('.')[0]}"
        labels = [{"val": "bot", "src": did}] if bot else []
        self.profiles[did] = {
            "did": did,
            "handle": handle,
            "followersCount": followers,
            "labels": labels,
        }
        return did

    def stamp(self, *, ago: float | None = None) -> str:
        """Return the next indexedAt (strictly increasing, a few minutes before now), or the
        time `ago` seconds before now."""
        if ago is not None:
            at = datetime.now(UTC) - timedelta(seconds=ago)
        else:
            at = self._start + timedelta(milliseconds=next(self._clock))
        return at.isoformat(timespec="milliseconds").replace("+00:00", "Z")

    def add_post(
        self,
        did: str,
        text: str,
        *,
        reply_to: str | None = None,
        facets: list[Any] | None = None,
        likes: int = 0,
        embed: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Add a post by did (a reply to the post at reply_to); return its view."""
        rkey = f"3k{next(self._seq):08d}"
        uri = f"at://{did}/app.bsky.feed.post/{rkey}"
        record: dict[str, Any] = {
            "$type": "app.bsky.feed.post",
            "text": text,
            "createdAt": "2026-03-01T10:00:00.000Z",
        }
        if facets:
            record["facets"] = facets
        if embed:
            record["embed"] = embed
        if reply_to is not None:
            parent = self.posts[reply_to]
            root = parent["record"].get("reply", {}).get("root") or {
                "uri": parent["uri"],
                "cid": parent["cid"],
            }
            record["reply"] = {"root": root, "parent": {"uri": parent["uri"], "cid": parent["cid"]}}
        return self._store(did, uri, record, likes=likes)

    def _store(
        self, did: str, uri: str, record: dict[str, Any], *, likes: int = 0
    ) -> dict[str, Any]:
        profile = self.profiles[did]
        view = {
            "uri": uri,
            "cid": _cid(uri + json.dumps(record, sort_keys=True)),
            "author": {
                "did": did,
                "handle": profile["handle"],
                "labels": profile.get("labels", []),
            },
            "record": record,
            "indexedAt": self.stamp(),
            "likeCount": likes,
            "repostCount": 0,
            "replyCount": 0,
            "quoteCount": 0,
        }
        self.posts[uri] = view
        return view

    def mention(
        self,
        did: str,
        text: str | None = None,
        *,
        reply_to: str | None = None,
        reason: str = "mention",
    ) -> dict[str, Any]:
        """Add a post by did that mentions the bot (a facet), and its notification."""
        text = text or f"@{BOT_HANDLE} is this true?"
        start = text.encode().find(f"@{BOT_HANDLE}".encode())
        facets = []
        if start >= 0:
            end = start + len(f"@{BOT_HANDLE}".encode())
            facets = [
                {
                    "index": {"byteStart": start, "byteEnd": end},
                    "features": [{"$type": "app.bsky.richtext.facet#mention", "did": BOT_DID}],
                }
            ]
        view = self.add_post(did, text, reply_to=reply_to, facets=facets)
        self.notify(view, reason)
        return view

    def notify(
        self, view: dict[str, Any], reason: str = "mention", **overrides: Any
    ) -> dict[str, Any]:
        """Add a notification about a post view (overrides replace fields: malformed ones)."""
        note = {
            "uri": view["uri"],
            "cid": view["cid"],
            "author": view["author"],
            "reason": reason,
            "record": view["record"],
            "isRead": False,
            "indexedAt": view["indexedAt"],
            "labels": [],
        }
        note.update(overrides)
        self.notifications.append(note)
        return note

    # --- what a test reads --------------------------------------------------------------

    def calls(self, method: str) -> list[Recorded]:
        """Return the recorded calls of an NSID."""
        return [r for r in self.requests if r.method == method]

    def replies_by_bot(self) -> list[dict[str, Any]]:
        """Return the posts factbot created, in order."""
        return [p for p in self.posts.values() if p["author"]["did"] == BOT_DID]

    # --- the server -----------------------------------------------------------------------

    async def _xrpc(self, request: web.Request) -> web.StreamResponse:
        nsid = request.match_info["nsid"]
        body: Any = None
        if request.method == "POST" and request.can_read_body:
            raw = await request.read()
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw
        params: dict[str, list[str]] = {}
        for k, v in request.query.items():
            params.setdefault(k, []).append(v)
        self.requests.append(
            Recorded(nsid, request.method, params, body, request.headers.get("Authorization"))
        )
        for hold in self._holds:
            if hold.left > 0 and fnmatch.fnmatch(nsid, hold.method):
                hold.left -= 1
                await asyncio.wait_for(hold.barrier.wait(), timeout=10)
                break
        for script in self._scripts:
            if script.times > 0 and fnmatch.fnmatch(nsid, script.method):
                script.times -= 1
                if script.hang_up:
                    assert request.transport is not None
                    request.transport.close()
                    return web.Response(status=500)
                return self._error(
                    script.status, script.error, f"scripted {script.status}", script.headers
                )
        handler = getattr(self, "_" + nsid.replace(".", "_").lower(), None)
        if handler is None:
            return self._error(404, "MethodNotImplemented", f"fake Bluesky: no method {nsid}")
        if nsid not in ("com.atproto.server.createSession", "com.atproto.server.refreshSession"):
            denied = self._denied(request)
            if denied is not None:
                return denied
        return await handler(request, params, body)

    def _error(
        self, status: int, error: str, message: str, headers: dict[str, str] | None = None
    ) -> web.Response:
        return web.json_response(
            {"error": error, "message": message}, status=status, headers=headers
        )

    def _denied(self, request: web.Request) -> web.Response | None:
        token = (request.headers.get("Authorization") or "").removeprefix("Bearer ")
        if token not in self.access:
            return self._error(401, "AuthenticationRequired", "Invalid identifier or token")
        if self.access[token] < time.time():
            return self._error(400, "ExpiredToken", "Token has expired")
        return None

    def _tokens(self) -> dict[str, Any]:
        expires = time.time() + self.access_seconds
        access = jwt(BOT_DID, "com.atproto.access", expires)
        refresh = jwt(BOT_DID, "com.atproto.refresh", time.time() + 86400 * 60)
        self.access[access] = expires
        self.refresh.add(refresh)
        return {
            "did": BOT_DID,
            "handle": BOT_HANDLE,
            "accessJwt": access,
            "refreshJwt": refresh,
            "active": True,
        }

    def expire_access(self) -> None:
        """Make every access token expired on the server (whatever its exp claims)."""
        for token in self.access:
            self.access[token] = 0

    async def _com_atproto_server_createsession(
        self, request: web.Request, params: Any, body: Any
    ) -> web.Response:
        if body.get("identifier") not in (BOT_HANDLE, BOT_DID) or body.get("password") != PASSWORD:
            return self._error(401, "AuthenticationRequired", "Invalid identifier or password")
        self.sessions_created += 1
        return web.json_response(self._tokens())

    async def _com_atproto_server_refreshsession(
        self, request: web.Request, params: Any, body: Any
    ) -> web.Response:
        token = (request.headers.get("Authorization") or "").removeprefix("Bearer ")
        if token not in self.refresh:
            return self._error(400, "ExpiredToken", "Token has been revoked")
        self.refresh.discard(token)
        self.sessions_refreshed += 1
        return web.json_response(self._tokens())

    async def _app_bsky_actor_getprofile(
        self, request: web.Request, params: Any, body: Any
    ) -> web.Response:
        actor = params["actor"][0]
        for profile in self.profiles.values():
            if actor in (profile["did"], profile["handle"]):
                return web.json_response(profile)
        return self._error(400, "InvalidRequest", "Profile not found")

    async def _app_bsky_actor_getprofiles(
        self, request: web.Request, params: Any, body: Any
    ) -> web.Response:
        found = [
            p
            for p in self.profiles.values()
            if p["did"] in params.get("actors", []) or p["handle"] in params.get("actors", [])
        ]
        return web.json_response({"profiles": found})

    async def _app_bsky_notification_listnotifications(
        self, request: web.Request, params: Any, body: Any
    ) -> web.Response:
        limit = int(params.get("limit", ["50"])[0])
        start = int(params.get("cursor", ["0"])[0])
        newest_first = list(reversed(self.notifications))
        page = newest_first[start : start + limit]
        out: dict[str, Any] = {"notifications": page, "seenAt": self.seen_at}
        if start + limit < len(newest_first):
            out["cursor"] = str(start + limit)
        return web.json_response(out)

    async def _app_bsky_notification_updateseen(
        self, request: web.Request, params: Any, body: Any
    ) -> web.Response:
        self.seen_at = body["seenAt"]
        return web.Response(status=200)

    async def _app_bsky_feed_getposts(
        self, request: web.Request, params: Any, body: Any
    ) -> web.Response:
        return web.json_response(
            {"posts": [self.posts[u] for u in params.get("uris", []) if u in self.posts]}
        )

    def _thread(self, uri: str, depth: int) -> dict[str, Any]:
        node: dict[str, Any] = {
            "$type": "app.bsky.feed.defs#threadViewPost",
            "post": self.posts[uri],
        }
        if depth > 0:
            node["replies"] = [
                self._thread(p["uri"], depth - 1)
                for p in self.posts.values()
                if p["record"].get("reply", {}).get("parent", {}).get("uri") == uri
            ]
        return node

    async def _app_bsky_feed_getpostthread(
        self, request: web.Request, params: Any, body: Any
    ) -> web.Response:
        uri = params["uri"][0]
        if uri not in self.posts:
            return self._error(400, "NotFound", f"Post not found: {uri}")
        return web.json_response({"thread": self._thread(uri, int(params.get("depth", ["6"])[0]))})

    async def _app_bsky_feed_searchposts(
        self, request: web.Request, params: Any, body: Any
    ) -> web.Response:
        q = params["q"][0].lower()
        since = params.get("since", [""])[0]
        hits = [
            p
            for p in reversed(self.posts.values())
            if q in p["record"]["text"].lower() and p["indexedAt"] > since
        ]
        return web.json_response(
            {"posts": hits[: int(params.get("limit", ["25"])[0])], "hitsTotal": len(hits)}
        )

    async def _app_bsky_feed_getauthorfeed(
        self, request: web.Request, params: Any, body: Any
    ) -> web.Response:
        actor = params["actor"][0]
        dids = {p["did"] for p in self.profiles.values() if actor in (p["did"], p["handle"])}
        feed = [{"post": p} for p in reversed(self.posts.values()) if p["author"]["did"] in dids]
        return web.json_response({"feed": feed[: int(params.get("limit", ["50"])[0])]})

    async def _com_atproto_repo_getrecord(
        self, request: web.Request, params: Any, body: Any
    ) -> web.Response:
        key = (params["repo"][0], params["collection"][0], params["rkey"][0])
        if key not in self.records:
            return self._error(400, "RecordNotFound", "Could not locate record")
        value = self.records[key]
        uri = f"at://{key[0]}/{key[1]}/{key[2]}"
        return web.json_response(
            {"uri": uri, "cid": _cid(json.dumps(value, sort_keys=True)), "value": value}
        )

    async def _com_atproto_repo_putrecord(
        self, request: web.Request, params: Any, body: Any
    ) -> web.Response:
        key = (body["repo"], body["collection"], body["rkey"])
        current = self.records.get(key)
        swap = body.get("swapRecord")
        if swap is not None and (
            current is None or _cid(json.dumps(current, sort_keys=True)) != swap
        ):
            return self._error(400, "InvalidSwap", "Record was at another version")
        self.records[key] = body["record"]
        uri = f"at://{key[0]}/{key[1]}/{key[2]}"
        return web.json_response(
            {"uri": uri, "cid": _cid(json.dumps(body["record"], sort_keys=True))}
        )

    async def _com_atproto_repo_createrecord(
        self, request: web.Request, params: Any, body: Any
    ) -> web.Response:
        if body.get("repo") != BOT_DID or body.get("collection") != "app.bsky.feed.post":
            return self._error(
                400,
                "InvalidRequest",
                f"cannot write {body.get('collection')} to {body.get('repo')}",
            )
        record = body["record"]
        text = record.get("text", "")
        problem = None
        if graphemes(text) > 300:
            problem = f"Record/text must not be longer than 300 graphemes ({graphemes(text)})"
        size = len(text.encode())
        for facet in record.get("facets") or ():
            index = facet["index"]
            if not 0 <= index["byteStart"] < index["byteEnd"] <= size:
                problem = f"facet {index} is outside the text's {size} bytes"
        reply = record.get("reply")
        if reply is not None:
            for part in ("root", "parent"):
                ref = reply.get(part) or {}
                post = self.posts.get(ref.get("uri", ""))
                if post is None or post["cid"] != ref.get("cid"):
                    problem = f"reply {part} {ref} does not exist at that CID"
        if problem:
            return self._error(400, "InvalidRequest", problem)
        rkey = f"3kbot{next(self._seq):06d}"
        uri = f"at://{BOT_DID}/app.bsky.feed.post/{rkey}"
        view = self._store(BOT_DID, uri, record)
        return web.json_response({"uri": uri, "cid": view["cid"], "validationStatus": "valid"})
