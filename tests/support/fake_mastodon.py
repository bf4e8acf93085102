"""A stand-in Mastodon instance for tests: the REST API on 127.0.0.1 port 0, in the test loop.

The real Mastodon.py (`Mastodon(api_base_url=fake.url, ...)`) talks to it; it is synchronous, so
a test calls it through `asyncio.to_thread` as the adapter does. Routes: instance v1 and v2
(the character limit and URL weight are settable, v2 can be switched off), verify_credentials,
account lookup and statuses, notifications (`types[]`, `since_id`, `max_id`, `limit`, newest
first), a status by id, posting a status (`Idempotency-Key` honoured: a repeated key returns the
first status and posts nothing; over the limit, with URLs counted as 23, is 422 as Mastodon
says it; an unknown `in_reply_to_id` is 404), hashtag timelines and trending statuses. Every
request is recorded; `script` makes the next matching requests fail (429 with
`X-RateLimit-Reset`, 5xx); unknown routes are a loud 404 naming them.
"""

from __future__ import annotations

import asyncio
import fnmatch
import itertools
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from html import escape
from typing import Any

from aiohttp import web

from tests.support.fake_server import FakeServer

TOKEN = "masto-token"
BOT_ID = "1"
BOT_ACCT = "factbot"
DOMAIN = "social.test"
_URL_RE = re.compile(r"https?://\S+")


@dataclass(frozen=True)
class Recorded:
    """One request as the stand-in received it."""

    method: str
    path: str
    query: dict[str, list[str]]
    form: dict[str, list[str]]
    headers: dict[str, str]


@dataclass
class _Script:
    method: str
    path: str  # glob
    status: int
    times: int = 1
    reset_in: float = 1.0
    lose_answer: bool = False  # do the request, then drop the connection before answering
    delay: float = 0.0


@dataclass
class _Account:
    id: str
    acct: str
    followers: int = 10
    bot: bool = False

    def json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "username": self.acct.split("@")[0],
            "acct": self.acct,
            "display_name": self.acct,
            "bot": self.bot,
            "followers_count": self.followers,
            "url": f"https://{DOMAIN}/@{self.acct}",
        }


@dataclass
class _Status:
    data: dict[str, Any]
    text: str = ""
    key: str | None = None
    form: dict[str, Any] = field(default_factory=dict)


class FakeMastodon(FakeServer):
    """The stand-in server; use `async with FakeMastodon() as masto:`."""

    name = "Mastodon"

    def __init__(self, *, max_characters: int = 500, v2: bool = True) -> None:
        super().__init__()
        self.max_characters = max_characters
        self.url_characters = 23
        self.v2 = v2
        self.requests: list[Recorded] = []
        self.accounts: dict[str, _Account] = {BOT_ID: _Account(BOT_ID, BOT_ACCT, bot=True)}
        self.statuses: dict[str, _Status] = {}
        self.notifications: list[dict[str, Any]] = []  # oldest first
        self.trends: list[str] = []  # status ids
        self.idempotency: dict[str, str] = {}  # key -> status id
        self._scripts: list[_Script] = []
        self._ids = itertools.count(100)

    def add_routes(self, router: web.UrlDispatcher) -> None:
        router.add_route("*", "/{tail:.*}", self._route)

    # --- what a test sets up -------------------------------------------------------------

    def script(
        self,
        method: str,
        path: str,
        status: int = 0,
        *,
        times: int = 1,
        reset_in: float = 1.0,
        lose_answer: bool = False,
        delay: float = 0.0,
    ) -> None:
        """Make the next `times` requests matching method and path (a glob) fail with status,
        or (lose_answer) be done and then answered with a dropped connection, or wait delay."""
        self._scripts.append(_Script(method, path, status, times, reset_in, lose_answer, delay))

    def user(
        self, acct: str, *, followers: int = 10, bot: bool = False, uid: str | None = None
    ) -> str:
        """Add an account (with the id uid, or the next one); return its id."""
        uid = uid or str(next(self._ids))
        self.accounts[uid] = _Account(uid, acct, followers, bot)
        return uid

    def add_status(
        self,
        account: str,
        text: str,
        *,
        visibility: str = "public",
        reply_to: str | None = None,
        mentions: list[str] | None = None,
        tags: list[str] | None = None,
        favourites: int = 0,
        content: str | None = None,
        language: str = "en",
    ) -> dict[str, Any]:
        """Add a status by account (ids); return its JSON."""
        sid = str(next(self._ids))
        mentioned = [self.accounts[m].json() for m in mentions or []]
        if content is None:
            html = escape(text)
            for m in mentioned:
                anchor = f'<a href="{m["url"]}" class="u-url mention">'
                link = f'<span class="h-card">{anchor}@<span>{m["username"]}</span></a></span>'
                html = html.replace(f"@{m['acct']}", link)
            content = f"<p>{html}</p>"
        data = {
            "id": sid,
            "uri": f"https://{DOMAIN}/users/{self.accounts[account].acct}/statuses/{sid}",
            "url": f"https://{DOMAIN}/@{self.accounts[account].acct}/{sid}",
            "created_at": (datetime(2026, 3, 1, tzinfo=UTC) + timedelta(seconds=int(sid)))
            .isoformat()
            .replace("+00:00", ".000Z"),
            "account": self.accounts[account].json(),
            "content": content,
            "visibility": visibility,
            "in_reply_to_id": reply_to,
            "in_reply_to_account_id": self.statuses[reply_to].data["account"]["id"]
            if reply_to
            else None,
            "mentions": [
                {"id": m["id"], "acct": m["acct"], "username": m["username"], "url": m["url"]}
                for m in mentioned
            ],
            "tags": [{"name": t, "url": f"https://{DOMAIN}/tags/{t}"} for t in tags or []],
            "media_attachments": [],
            "favourites_count": favourites,
            "reblogs_count": 0,
            "replies_count": 0,
            "sensitive": False,
            "spoiler_text": "",
            "language": language,
            "emojis": [],
            "card": None,
            "poll": None,
        }
        self.statuses[sid] = _Status(data, text)
        return data

    def mention(
        self,
        account: str,
        text: str | None = None,
        *,
        reply_to: str | None = None,
        visibility: str = "public",
        also: list[str] | None = None,
        language: str = "en",
    ) -> dict[str, Any]:
        """Add a status by account that mentions the bot, and its notification; return it."""
        text = text or f"@{BOT_ACCT} is this true?"
        status = self.add_status(
            account,
            text,
            visibility=visibility,
            reply_to=reply_to,
            mentions=[BOT_ID, *(also or [])],
            language=language,
        )
        self.notify(status)
        return status

    def notify(
        self, status: dict[str, Any] | None, kind: str = "mention", **overrides: Any
    ) -> dict[str, Any]:
        """Add a notification (overrides replace fields: malformed ones)."""
        note = {
            "id": str(next(self._ids)),
            "type": kind,
            "created_at": datetime.now(UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "account": (status or {}).get("account") or self.accounts[BOT_ID].json(),
            "status": status,
        }
        note.update(overrides)
        self.notifications.append(note)
        return note

    # --- what a test reads --------------------------------------------------------------

    def calls(self, method: str, path: str) -> list[Recorded]:
        """Return the recorded requests matching method and path (a glob)."""
        return [r for r in self.requests if r.method == method and fnmatch.fnmatch(r.path, path)]

    def posted_by_bot(self) -> list[_Status]:
        """Return the statuses factbot posted, in order."""
        return [s for s in self.statuses.values() if s.data["account"]["id"] == BOT_ID]

    # --- the server -----------------------------------------------------------------------

    def _error(
        self, status: int, message: str, headers: dict[str, str] | None = None
    ) -> web.Response:
        return web.json_response({"error": message}, status=status, headers=headers)

    def _page(self, items: list[dict[str, Any]], query: Any) -> list[dict[str, Any]]:
        since = int(query.get("since_id") or 0)
        below = int(query.get("max_id") or 10**18)
        limit = int(query.get("limit") or 20)
        newest_first = sorted(items, key=lambda i: -int(i["id"]))
        return [i for i in newest_first if since < int(i["id"]) < below][:limit]

    async def _route(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["tail"].rstrip("/")
        form: dict[str, list[str]] = {}
        if request.method in ("POST", "PUT"):
            data = await request.post()
            for k, v in data.items():
                form.setdefault(k, []).append(str(v))
        query: dict[str, list[str]] = {}
        for k, v in request.query.items():
            query.setdefault(k, []).append(v)
        self.requests.append(
            Recorded(
                request.method,
                path,
                query,
                form,
                {k.lower(): v for k, v in request.headers.items()},
            )
        )
        lose = False
        for script in self._scripts:
            if (
                script.times > 0
                and script.method == request.method
                and fnmatch.fnmatch(path, script.path)
            ):
                script.times -= 1
                if script.delay:
                    await asyncio.sleep(script.delay)
                if script.lose_answer or script.delay:
                    lose = script.lose_answer
                    break
                reset = (datetime.now(UTC) + timedelta(seconds=script.reset_in)).isoformat()
                headers = (
                    {
                        "X-RateLimit-Limit": "300",
                        "X-RateLimit-Remaining": "0",
                        "X-RateLimit-Reset": reset,
                    }
                    if script.status == 429
                    else {}
                )
                return self._error(
                    script.status,
                    "Too many requests" if script.status == 429 else "scripted",
                    headers,
                )
        if (
            request.headers.get("Authorization") != f"Bearer {TOKEN}"
            and not path.startswith("/api/v1/instance")
            and not path.startswith("/api/v2/instance")
        ):
            return self._error(401, "The access token is invalid")
        q = {k: v[-1] for k, v in query.items()}
        f = {k: v[-1] for k, v in form.items()}
        method = request.method
        if method == "GET" and path == "/api/v1/instance":
            return web.json_response(
                {
                    "uri": DOMAIN,
                    "title": "Test",
                    "version": "4.3.0",
                    "configuration": {
                        "statuses": {
                            "max_characters": self.max_characters,
                            "characters_reserved_per_url": self.url_characters,
                        }
                    },
                }
            )
        if method == "GET" and path == "/api/v2/instance":
            if not self.v2:
                return self._error(404, "Record not found")
            return web.json_response(
                {
                    "domain": DOMAIN,
                    "title": "Test",
                    "version": "4.3.0",
                    "configuration": {
                        "statuses": {
                            "max_characters": self.max_characters,
                            "characters_reserved_per_url": self.url_characters,
                        }
                    },
                }
            )
        if method == "GET" and path == "/api/v1/accounts/verify_credentials":
            return web.json_response(self.accounts[BOT_ID].json())
        if method == "GET" and path == "/api/v1/accounts/lookup":
            for account in self.accounts.values():
                if account.acct == q.get("acct"):
                    return web.json_response(account.json())
            return self._error(404, "Record not found")
        if method == "GET" and path == "/api/v1/notifications":
            types = query.get("types[]") or []
            items = [n for n in self.notifications if not types or n.get("type") in types]
            return web.json_response(self._page(items, q))
        if m := re.fullmatch(r"/api/v1/accounts/(\d+)/statuses", path):
            items = [
                s.data for s in self.statuses.values() if s.data["account"]["id"] == m.group(1)
            ]
            return web.json_response(self._page(items, q))
        if m := re.fullmatch(r"/api/v1/timelines/tag/([^/]+)", path):
            tag = m.group(1).lower()
            items = [
                s.data
                for s in self.statuses.values()
                if tag in [t["name"].lower() for t in s.data["tags"]]
                and s.data["visibility"] == "public"
            ]
            return web.json_response(self._page(items, q))
        if method == "GET" and path == "/api/v1/trends/statuses":
            return web.json_response(
                [self.statuses[i].data for i in self.trends][: int(q.get("limit") or 20)]
            )
        if method == "GET" and (m := re.fullmatch(r"/api/v1/statuses/(\d+)", path)):
            if m.group(1) not in self.statuses:
                return self._error(404, "Record not found")
            return web.json_response(self.statuses[m.group(1)].data)
        if method == "POST" and path == "/api/v1/statuses":
            answer = self._post_status(request, f)
            if lose:
                assert request.transport is not None
                request.transport.close()
            return answer
        return self._error(404, f"fake Mastodon: no route {method} {path}")

    def _post_status(self, request: web.Request, form: dict[str, str]) -> web.Response:
        key = request.headers.get("Idempotency-Key")
        if key is not None and key in self.idempotency:
            return web.json_response(self.statuses[self.idempotency[key]].data)
        text = form.get("status", "")
        counted = len(_URL_RE.sub("", text)) + self.url_characters * len(_URL_RE.findall(text))
        if counted > self.max_characters:
            return self._error(
                422, f"Validation failed: Text character limit of {self.max_characters} exceeded"
            )
        reply_to = form.get("in_reply_to_id")
        if reply_to and reply_to not in self.statuses:
            return self._error(404, "Record not found")
        visibility = form.get("visibility", "public")
        mentioned = [
            a.id
            for a in self.accounts.values()
            if re.search(rf"@{re.escape(a.acct)}(?![\w@.])", text)
        ]
        status = self.add_status(
            BOT_ID, text, visibility=visibility, reply_to=reply_to, mentions=mentioned
        )
        self.statuses[status["id"]].key = key
        self.statuses[status["id"]].form = dict(form)
        if key is not None:
            self.idempotency[key] = status["id"]
        return web.json_response(status)
