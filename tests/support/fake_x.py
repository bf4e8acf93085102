"""A stand-in X API v2 for tests: mentions, posts, search, timelines and Community Notes.

The real tweepy AsyncClient is pointed at it through an injected aiohttp session that
rewrites api.twitter.com to this server (`FACTBOT_X__API_BASE`), so tests assert on what the
library actually sent. An aiohttp server on 127.0.0.1, port 0, in the test's event loop:

    async with FakeX(bot_id="100", bot_username="factbot") as x:
        x.add_user("200", "alice", followers=5000)
        x.add_tweet("1000", "200", "5G spreads the virus")
        x.add_tweet("1001", "300", "@factbot is this true?", replied_to="1000")
        ...
        [reply] = x.created()                 # POST /2/tweets bodies, in order

Answers follow the v2 shapes: `data`, `includes` (tweets, users, media) for the expansions
asked, `meta` (newest_id, oldest_id, result_count, next_token). Every answer carries
`x-rate-limit-limit/remaining/reset` headers. `script(route, ...)` makes the next calls of a
route answer 429 (with a reset time) or 403 (X's "reply not allowed" problem) or 5xx. X's reply
policy is enforced: a reply is refused with 403 unless the post replied to mentions the bot or
is the bot's own. Given the app's and the account's OAuth 1.0a keys (`oauth1=`), a request
signed with them is refused (401) unless its HMAC-SHA1 signature, computed here per RFC 5849,
covers the URL the stand-in was actually called at. Unknown routes answer a loud 404 and are
kept in `unknown`; the stand-in fails on close if any arrived. The Community Notes routes
validate what X validates (text of 1-280 characters with a URL, a known classification and
tags, `test_mode`) and record notes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import parse_qsl, quote, unquote

from aiohttp import web

from tests.support.fake_server import FakeServer

NOT_ALLOWED = (
    "Reply to this conversation is not allowed because you have not been mentioned or "
    "otherwise engaged by the author of the post you are replying to."
)
CLASSIFICATIONS = ("misinformed_or_potentially_misleading", "not_misleading")
TAGS = (
    "disputed_claim_as_fact",
    "factual_error",
    "manipulated_media",
    "misinterpreted_satire",
    "missing_important_context",
    "outdated_information",
    "other",
)
_URL_RE = re.compile(r"https?://\S+")
_AUTH_PARAM = re.compile(r'([\w-]+)="([^"]*)"')


def _pct(value: str) -> str:
    """Percent-encode all but ALPHA, DIGIT, '-', '.', '_' and '~' (RFC 5849 3.6)."""
    return quote(value, safe="")


def x_time(when: datetime) -> str:
    """Return when as X writes a `created_at` (UTC, milliseconds, Z)."""
    return when.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def oauth1_signature(
    method: str,
    base_uri: str,
    params: Sequence[tuple[str, str]],
    consumer_secret: str,
    token_secret: str,
) -> str:
    """Return the HMAC-SHA1 signature (base64) of a request, as RFC 5849 3.4 defines it."""
    pairs = sorted((_pct(k), _pct(v)) for k, v in params)
    normalized = "&".join(f"{k}={v}" for k, v in pairs)
    base = "&".join((method.upper(), _pct(base_uri), _pct(normalized)))
    key = f"{_pct(consumer_secret)}&{_pct(token_secret)}"
    digest = hmac.new(key.encode(), base.encode(), hashlib.sha1).digest()
    return base64.b64encode(digest).decode()


@dataclass(frozen=True)
class Call:
    """One request the stand-in received."""

    route: str
    method: str
    path: str
    query: Mapping[str, str]
    headers: Mapping[str, str]
    body: Any


@dataclass
class _Scripted:
    status: int
    reset_in: float = 60.0
    detail: str = ""
    skip: int = 0  # calls answered normally before this one applies


@dataclass
class Note:
    """A Community Note the stand-in received."""

    note_id: str
    post_id: str
    text: str
    body: dict[str, Any]
    test_mode: bool
    status: str = "needs_more_ratings"
    test_result: list[dict[str, str]] = field(default_factory=list)


class FakeX(FakeServer):
    """The stand-in server; use as an async context manager."""

    name = "X"

    def __init__(
        self,
        *,
        bot_id: str = "100",
        bot_username: str = "factbot",
        oauth1: tuple[str, str, str, str] | None = None,
    ) -> None:
        super().__init__()
        self.bot_id = bot_id
        self.oauth1 = oauth1  # consumer key, consumer secret, access token, token secret
        self.bot_username = bot_username
        self.users: dict[str, dict[str, Any]] = {}
        self.tweets: dict[str, dict[str, Any]] = {}
        self.media: dict[str, dict[str, Any]] = {}
        self.eligible: list[str] = []
        self.notes: list[Note] = []
        self.claim_opinion_score = 0.8
        self.requests: list[Call] = []
        self.unknown: list[Call] = []  # failed on close (FakeServer)
        self._scripts: dict[str, list[_Scripted]] = {}
        self._ids = itertools.count(9_000_000)
        self.add_user(bot_id, bot_username)

    # -- lifecycle -------------------------------------------------------------------------

    def add_routes(self, router: web.UrlDispatcher) -> None:
        router.add_route("*", "/{tail:.*}", self._dispatch)

    @property
    def api_base(self) -> str:
        """Return the base URL to give the adapter (FACTBOT_X__API_BASE)."""
        return self.url

    # -- content ---------------------------------------------------------------------------

    def add_user(self, user_id: str, username: str, *, followers: int = 10) -> None:
        """Add an account."""
        self.users[user_id] = {
            "id": user_id,
            "name": username.title(),
            "username": username,
            "public_metrics": {"followers_count": followers},
        }

    def add_media(self, key: str, *, kind: str = "photo", url: str = "") -> None:
        """Add a media object (a photo's url, or a video's preview image)."""
        media: dict[str, Any] = {"media_key": key, "type": kind}
        media["url" if kind == "photo" else "preview_image_url"] = url
        self.media[key] = media

    def add_tweet(
        self,
        tweet_id: str,
        author_id: str,
        text: str,
        *,
        replied_to: str | None = None,
        quoted: str | None = None,
        media_keys: tuple[str, ...] = (),
        urls: Mapping[str, str] | None = None,
        likes: int = 0,
        created_at: str | None = None,
    ) -> dict[str, Any]:
        """Add a post (posted now, unless created_at says when); `urls` maps t.co links in the
        text to what they expand to."""
        if created_at is None:
            created_at = x_time(datetime.now(UTC))
        refs = []
        if replied_to:
            refs.append({"type": "replied_to", "id": replied_to})
        if quoted:
            refs.append({"type": "quoted", "id": quoted})
        parent = self.tweets.get(replied_to or "")
        tweet: dict[str, Any] = {
            "id": tweet_id,
            "author_id": author_id,
            "text": text,
            "created_at": created_at,
            "conversation_id": parent["conversation_id"] if parent else tweet_id,
            "public_metrics": {
                "like_count": likes,
                "retweet_count": 0,
                "reply_count": 0,
                "quote_count": 0,
            },
            "edit_history_tweet_ids": [tweet_id],
        }
        if refs:
            tweet["referenced_tweets"] = refs
        if media_keys:
            tweet["attachments"] = {"media_keys": list(media_keys)}
        entities: dict[str, Any] = {}
        mentions = [
            {"username": u["username"], "id": uid}
            for uid, u in self.users.items()
            if f"@{u['username']}".lower() in text.lower()
        ]
        if mentions:
            entities["mentions"] = mentions
        tags = [{"tag": t} for t in re.findall(r"#(\w+)", text)]
        if tags:
            entities["hashtags"] = tags
        if urls:
            entities["urls"] = [
                {"url": short, "expanded_url": full, "display_url": full.split("//")[-1][:30]}
                for short, full in urls.items()
            ]
        if entities:
            tweet["entities"] = entities
        self.tweets[tweet_id] = tweet
        return tweet

    def script(
        self,
        route: str,
        status: int,
        *,
        times: int = 1,
        reset_in: float = 60.0,
        detail: str = "",
        after: int = 0,
    ) -> None:
        """Make `times` calls of route ("create", "mentions", "notes"...) fail with status,
        after letting `after` calls through."""
        scripted = [_Scripted(status, reset_in, detail) for _ in range(times)]
        scripted[0].skip = after
        self._scripts.setdefault(route, []).extend(scripted)

    def calls(self, route: str) -> list[Call]:
        """Return the requests of one route, in order."""
        return [c for c in self.requests if c.route == route]

    def created(self) -> list[dict[str, Any]]:
        """Return the bodies of every post created, in order."""
        return [c.body for c in self.calls("create") if c.body.get("_created")]

    def bot_posts(self) -> list[dict[str, Any]]:
        """Return the posts the bot created, oldest first."""
        return [t for t in self.tweets.values() if t["author_id"] == self.bot_id]

    def set_note_status(self, post_id: str, status: str, **buckets: str) -> None:
        """Set a received note's rating status and its evaluator buckets (test mode)."""
        for note in self.notes:
            if note.post_id == post_id:
                note.status = status
                note.test_result = [
                    {"evaluator_type": k, "evaluator_score_bucket": v} for k, v in buckets.items()
                ]

    # -- dispatch --------------------------------------------------------------------------

    _ROUTES = (
        ("GET", re.compile(r"/2/users/me"), "me"),
        ("GET", re.compile(r"/2/users/(\d+)/mentions"), "mentions"),
        ("GET", re.compile(r"/2/users/(\d+)/tweets"), "timeline"),
        ("GET", re.compile(r"/2/tweets/search/recent"), "search"),
        ("GET", re.compile(r"/2/tweets"), "lookup"),
        ("POST", re.compile(r"/2/tweets"), "create"),
        ("GET", re.compile(r"/2/notes/search/posts_eligible_for_notes"), "eligible"),
        ("GET", re.compile(r"/2/notes/search/notes_written"), "written"),
        ("POST", re.compile(r"/2/evaluate_note"), "evaluate"),
        ("POST", re.compile(r"/2/notes"), "notes"),
    )

    async def _dispatch(self, request: web.Request) -> web.Response:
        raw = await request.read()
        body: Any = None
        if raw:
            try:
                body = await request.json()
            except ValueError:
                body = raw.decode(errors="replace")
        route, match = "unknown", None
        for method, pattern, name in self._ROUTES:
            found = pattern.fullmatch(request.path)
            if found and request.method == method:
                route, match = name, found
                break
        call = Call(
            route,
            request.method,
            request.path,
            dict(request.query),
            dict(request.headers),
            body if body is not None else {},
        )
        self.requests.append(call)
        if route == "unknown":
            self.unknown.append(call)
            return self._problem(404, "Not Found", f"no route {request.method} {request.path}")
        auth = request.headers.get("Authorization", "")
        if not (auth.startswith("OAuth ") or auth.startswith("Bearer ")):
            return self._problem(401, "Unauthorized", "no user authentication")
        refused = self._unsigned(request, raw, auth)
        if refused:
            return self._problem(401, "Unauthorized", refused)
        scripts = self._scripts.get(route) or []
        if scripts and scripts[0].skip > 0:
            scripts[0].skip -= 1
        elif scripts:
            return self._scripted(scripts.pop(0))
        handler = getattr(self, f"_{route}")
        answer: web.Response = handler(call, *(match.groups() if match else ()))
        return answer

    def _unsigned(self, request: web.Request, raw: bytes, auth: str) -> str:
        """Return why an OAuth 1.0a request's signature is refused ("" when it holds)."""
        if self.oauth1 is None or not auth.startswith("OAuth "):
            return ""
        consumer_key, consumer_secret, token, token_secret = self.oauth1
        given = {k: unquote(v) for k, v in _AUTH_PARAM.findall(auth)}
        if given.get("oauth_signature_method") != "HMAC-SHA1":
            return "signature method is not HMAC-SHA1"
        if given.get("oauth_consumer_key") != consumer_key or given.get("oauth_token") != token:
            return "unknown consumer key or token"
        params = [(k, v) for k, v in given.items() if k not in ("realm", "oauth_signature")]
        path, _, query = request.raw_path.partition("?")
        params += parse_qsl(query, keep_blank_values=True)
        if request.content_type == "application/x-www-form-urlencoded":
            params += parse_qsl(raw.decode(), keep_blank_values=True)
        # the URL this server was reached at, whatever the client thinks it signed
        expected = oauth1_signature(
            request.method, self.api_base + path, params, consumer_secret, token_secret
        )
        if not hmac.compare_digest(expected, given.get("oauth_signature", "")):
            return f"invalid signature for {request.method} {self.api_base}{path}"
        return ""

    def _headers(self, remaining: int = 99, reset_in: float = 900.0) -> dict[str, str]:
        return {
            "x-rate-limit-limit": "100",
            "x-rate-limit-remaining": str(remaining),
            "x-rate-limit-reset": str(int(time.time() + reset_in)),
        }

    def _json(self, data: Any, status: int = 200) -> web.Response:
        return web.json_response(data, status=status, headers=self._headers())

    def _problem(self, status: int, title: str, detail: str) -> web.Response:
        body = {"title": title, "detail": detail, "type": "about:blank", "status": status}
        return web.json_response(body, status=status, headers=self._headers())

    def _scripted(self, s: _Scripted) -> web.Response:
        if s.status == 429:
            body = {
                "title": "Too Many Requests",
                "detail": "Too Many Requests",
                "type": "about:blank",
                "status": 429,
            }
            return web.json_response(body, status=429, headers=self._headers(0, s.reset_in))
        if s.status == 403:
            return self._problem(403, "Forbidden", s.detail or NOT_ALLOWED)
        return self._problem(s.status, "Error", s.detail or "scripted failure")

    # -- expansions ------------------------------------------------------------------------

    def _page(
        self, call: Call, tweets: list[dict[str, Any]], more: str | None = None
    ) -> web.Response:
        expansions = set(filter(None, call.query.get("expansions", "").split(",")))
        fields = set(filter(None, call.query.get("tweet.fields", "").split(",")))
        users: dict[str, Any] = {}
        media: dict[str, Any] = {}
        included: dict[str, Any] = {}

        def shown(t: dict[str, Any]) -> dict[str, Any]:
            keep = {"id", "text", "edit_history_tweet_ids"} | fields
            return {k: v for k, v in t.items() if k in keep}

        def expand(t: dict[str, Any], prefix: str) -> None:
            if f"{prefix}author_id" in expansions and t.get("author_id") in self.users:
                users[t["author_id"]] = self.users[t["author_id"]]
            if f"{prefix}attachments.media_keys" in expansions:
                for key in (t.get("attachments") or {}).get("media_keys", []):
                    if key in self.media:
                        media[key] = self.media[key]

        for t in tweets:
            expand(t, "")
            if "referenced_tweets.id" in expansions:
                for ref in t.get("referenced_tweets") or []:
                    target = self.tweets.get(ref["id"])
                    if target is not None:
                        included[target["id"]] = shown(target)
                        expand(target, "referenced_tweets.id.")
        body: dict[str, Any] = {"data": [shown(t) for t in tweets]} if tweets else {}
        includes: dict[str, Any] = {}
        if users:
            includes["users"] = list(users.values())
        if media:
            includes["media"] = list(media.values())
        if included:
            includes["tweets"] = list(included.values())
        if includes:
            body["includes"] = includes
        meta: dict[str, Any] = {"result_count": len(tweets)}
        if tweets:
            meta["newest_id"], meta["oldest_id"] = tweets[0]["id"], tweets[-1]["id"]
        if more:
            meta["next_token"] = more
        body["meta"] = meta
        return self._json(body)

    def _newest_first(
        self, tweets: list[dict[str, Any]], call: Call, default_max: int = 10
    ) -> tuple[list[dict[str, Any]], str | None]:
        since = int(call.query.get("since_id") or 0)
        chosen = sorted((t for t in tweets if int(t["id"]) > since), key=lambda t: -int(t["id"]))
        start = int(call.query.get("pagination_token") or 0)
        size = int(call.query.get("max_results") or default_max)
        page = chosen[start : start + size]
        more = str(start + size) if start + size < len(chosen) else None
        return page, more

    # -- routes ----------------------------------------------------------------------------

    def _me(self, call: Call) -> web.Response:
        return self._json({"data": self.users[self.bot_id]})

    def _mentions(self, call: Call, user_id: str) -> web.Response:
        name = f"@{self.users[user_id]['username']}".lower()
        mentioning = [
            t
            for t in self.tweets.values()
            if name in t["text"].lower() and t.get("author_id") != user_id
        ]
        page, more = self._newest_first(mentioning, call)
        return self._page(call, page, more)

    def _timeline(self, call: Call, user_id: str) -> web.Response:
        own = [t for t in self.tweets.values() if t["author_id"] == user_id]
        page, _ = self._newest_first(own, call)
        return self._page(call, page)

    def _search(self, call: Call) -> web.Response:
        terms = [w for w in call.query.get("query", "").split() if not w.startswith("-")]
        found = [
            t
            for t in self.tweets.values()
            if all(term.lower() in t["text"].lower() for term in terms)
        ]
        page, _ = self._newest_first(found, call)
        return self._page(call, page)

    def _lookup(self, call: Call) -> web.Response:
        ids = [i for i in call.query.get("ids", "").split(",") if i]
        return self._page(call, [self.tweets[i] for i in ids if i in self.tweets])

    def _create(self, call: Call) -> web.Response:
        body = call.body if isinstance(call.body, dict) else {}
        text = str(body.get("text") or "")
        if not text:
            return self._problem(400, "Invalid Request", "text is required")
        weighted = len(_URL_RE.sub("", text)) + 23 * len(_URL_RE.findall(text))
        if weighted > 280:
            return self._problem(400, "Invalid Request", "Your Tweet text is too long.")
        parent_id = str((body.get("reply") or {}).get("in_reply_to_tweet_id") or "")
        if parent_id:
            parent = self.tweets.get(parent_id)
            if parent is None:
                return self._problem(400, "Invalid Request", "the post replied to is gone")
            mentions_bot = f"@{self.bot_username}".lower() in parent["text"].lower()
            if parent["author_id"] != self.bot_id and not mentions_bot:
                return self._problem(403, "Forbidden", NOT_ALLOWED)
        tweet_id = str(next(self._ids))
        self.add_tweet(tweet_id, self.bot_id, text, replied_to=parent_id or None)
        body["_created"] = tweet_id
        return self._json(
            {"data": {"id": tweet_id, "text": text, "edit_history_tweet_ids": [tweet_id]}},
            status=201,
        )

    def _eligible(self, call: Call) -> web.Response:
        if "test_mode" not in call.query:
            return self._problem(400, "Invalid Request", "test_mode is required")
        size = int(call.query.get("max_results") or 10)
        return self._page(call, [self.tweets[i] for i in self.eligible[:size]])

    def _evaluate(self, call: Call) -> web.Response:
        body = call.body if isinstance(call.body, dict) else {}
        if not body.get("note_text") or not body.get("post_id"):
            return self._problem(400, "Invalid Request", "note_text and post_id are required")
        return self._json({"data": {"claim_opinion_score": self.claim_opinion_score}})

    def _notes(self, call: Call) -> web.Response:
        body = call.body if isinstance(call.body, dict) else {}
        info = body.get("info") or {}
        text = str(info.get("text") or "")
        problems = []
        if not 1 <= len(_URL_RE.sub("x" * 23, text)) <= 280:
            problems.append("text must have 1 to 280 characters")
        if not _URL_RE.search(text):
            problems.append("text must contain a source URL")
        if info.get("classification") not in CLASSIFICATIONS:
            problems.append("unknown classification")
        if any(tag not in TAGS for tag in info.get("misleading_tags") or []):
            problems.append("unknown misleading tag")
        if not isinstance(info.get("trustworthy_sources"), bool):
            problems.append("trustworthy_sources must be a boolean")
        if "test_mode" not in body:
            problems.append("test_mode is required")
        if str(body.get("post_id")) not in self.tweets:
            problems.append("unknown post")
        if problems:
            return self._problem(400, "Invalid Request", "; ".join(problems))
        if any(n.post_id == str(body["post_id"]) for n in self.notes):
            return self._problem(409, "Conflict", "a note by this writer exists on that post")
        note = Note(str(next(self._ids)), str(body["post_id"]), text, body, bool(body["test_mode"]))
        self.notes.append(note)
        return self._json({"data": {"note_id": note.note_id}}, status=201)

    def _written(self, call: Call) -> web.Response:
        test_mode = call.query.get("test_mode") == "true"
        data = []
        for note in self.notes:
            if note.test_mode != test_mode:
                continue
            item: dict[str, Any] = {
                "id": note.note_id,
                "info": {"post_id": note.post_id, "text": note.text},
                "status": note.status,
            }
            if note.test_result:
                item["test_result"] = {"evaluation_outcome": note.test_result}
            data.append(item)
        return self._json({"data": data, "meta": {"result_count": len(data)}})
