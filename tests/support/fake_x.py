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
signed with them is refused (401) unless its HMAC-SHA1 signature, computed here per RFC 5849
§3.4.1.2 from the request as received (its scheme, its Host header, its path and query),
holds. `prefix` serves the API under a path (a proxy's base URL). Unknown routes answer a loud
404 and are kept in `unknown`; the stand-in fails on close if any arrived.

The Community Notes routes follow X's public contract where it varies: evaluation under
`POST /2/evaluate_note`, `POST /2/notes/evaluate` or both (`evaluate_paths`; the other answers
404), a created note answered 201 `{data: {note_id}}` or 200 `{data: {id}}` (`create_answer`),
the eligible posts with `tweet.fields`/`referenced_tweets` or the newer `post.fields`/
`referenced_posts` (`spelling`; the newer refuses the older with a 400), `note.fields` choosing
what `notes_written` shows. They validate what X validates (text of 1-280 characters with a
URL, a known classification and tags, `test_mode`), record notes, and keep X's documented
limits (`notes_limit`: 90 requests in 15 minutes across them; `creates_limit`: 250 notes a
day; fixed windows from the first call, on the clock `now`), answering 429 with
`x-rate-limit-limit/remaining/reset` past them; each such answer is kept in `limited`.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal
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
NOTES_ROUTES = frozenset({"eligible", "written", "evaluate", "notes"})
EVALUATE_PATHS = ("/2/evaluate_note", "/2/notes/evaluate")
NOTE_FIELDS = frozenset({"id", "info", "status", "test_result"})
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


def base_string_uri(scheme: str, host: str, path: str) -> str:
    """Return the base string URI of a request (RFC 5849 3.4.1.2): scheme and host in lower
    case, the port only when it is not the scheme's default, the path as sent."""
    scheme, host = scheme.lower(), host.lower()
    default = {"http": ":80", "https": ":443"}.get(scheme, "")
    if default and host.endswith(default):
        host = host[: -len(default)]
    return f"{scheme}://{host}{path or '/'}"


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
    style: str = "problem"  # or "code": {code, message}


@dataclass
class _Window:
    limit: int
    seconds: float
    start: float = 0.0
    used: int = 0


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
        prefix: str = "",
        evaluate_paths: Sequence[str] = ("/2/evaluate_note",),
        create_answer: Literal["note_id", "id"] = "note_id",
        spelling: Literal["tweets", "posts"] = "tweets",
        notes_limit: tuple[int, float] = (90, 15 * 60.0),
        creates_limit: tuple[int, float] = (250, 24 * 3600.0),
        now: Callable[[], float] = time.time,
    ) -> None:
        super().__init__()
        self.bot_id = bot_id
        self.oauth1 = oauth1  # consumer key, consumer secret, access token, token secret
        self.prefix = prefix.rstrip("/")
        self.evaluate_paths = tuple(evaluate_paths)
        self.create_answer = create_answer
        self.spelling = spelling
        self.now = now
        self.windows = {"notes": _Window(*notes_limit), "create": _Window(*creates_limit)}
        self.limited: list[Call] = []  # calls answered 429 because a documented limit was passed
        self.missing: list[Call] = []  # calls of an evaluate path this X does not have
        self.unknown_fields: set[str] = set()  # post fields this X refuses (400) when asked
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
        return self.url + self.prefix

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
        lang: str = "en",
        **fields: Any,
    ) -> dict[str, Any]:
        """Add a post (posted now, unless created_at says when); `urls` maps t.co links in the
        text to what they expand to; `fields` are more post fields (`note_tweet`,
        `suggested_source_links_with_counts`, ...), shown when asked for."""
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
            "lang": lang,
            **fields,
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
        style: Literal["problem", "code"] = "problem",
    ) -> None:
        """Make `times` calls of route ("create", "mentions", "notes"...) fail with status,
        after letting `after` calls through; the body a problem JSON or {code, message}."""
        scripted = [_Scripted(status, reset_in, detail, style=style) for _ in range(times)]
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
        ("POST", re.compile(r"/2/evaluate_note|/2/notes/evaluate"), "evaluate"),
        ("POST", re.compile(r"/2/notes"), "notes"),
    )

    def _route(self, method: str, path: str) -> tuple[str, re.Match[str] | None]:
        if self.prefix:
            if not path.startswith(self.prefix + "/"):
                return "unknown", None
            path = path[len(self.prefix) :]
        for wanted, pattern, name in self._ROUTES:
            found = pattern.fullmatch(path)
            if found and method == wanted:
                return name, found
        return "unknown", None

    async def _dispatch(self, request: web.Request) -> web.Response:
        raw = await request.read()
        body: Any = None
        if raw:
            try:
                body = await request.json()
            except ValueError:
                body = raw.decode(errors="replace")
        route, match = self._route(request.method, request.path)
        path = request.path[len(self.prefix) :] if route != "unknown" else request.path
        call = Call(
            route,
            request.method,
            path,
            dict(request.query),
            dict(request.headers),
            body if body is not None else {},
        )
        self.requests.append(call)
        if route == "unknown":
            self.unknown.append(call)
            return self._problem(404, "Not Found", f"no route {request.method} {request.path}")
        if route == "evaluate" and path not in self.evaluate_paths:
            self.missing.append(call)  # a spelling this X does not have: what X answers
            return self._problem(404, "Not Found", f"no route {request.method} {path}")
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
        limited = self._over_limit(call)
        if limited is not None:
            return limited
        handler = getattr(self, f"_{route}")
        answer: web.Response = handler(call, *(match.groups() if match else ()))
        if route in NOTES_ROUTES:
            answer.headers.update(self._window_headers(self.windows["notes"]))
        return answer

    def _over_limit(self, call: Call) -> web.Response | None:
        """Count a Community Notes call in X's windows; answer 429 past a documented limit."""
        if call.route not in NOTES_ROUTES:
            return None
        names = ["notes", "create"] if call.route == "notes" else ["notes"]
        now = self.now()
        for name in names:
            window = self.windows[name]
            if now >= window.start + window.seconds:
                window.start, window.used = now, 0
        full = [self.windows[n] for n in names if self.windows[n].used >= self.windows[n].limit]
        if full:
            self.limited.append(call)
            body = {"title": "Too Many Requests", "detail": "Too Many Requests", "status": 429}
            headers = self._window_headers(max(full, key=lambda w: w.start + w.seconds))
            return web.json_response(body, status=429, headers=headers)
        for name in names:
            self.windows[name].used += 1
        return None

    def _window_headers(self, window: _Window) -> dict[str, str]:
        return {
            "x-rate-limit-limit": str(window.limit),
            "x-rate-limit-remaining": str(max(0, window.limit - window.used)),
            "x-rate-limit-reset": str(int(window.start + window.seconds)),
        }

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
        # RFC 5849 3.4.1.2: the URI of the request as received, its host from the Host header
        received = base_string_uri(request.scheme, request.headers.get("Host", ""), path)
        expected = oauth1_signature(request.method, received, params, consumer_secret, token_secret)
        if not hmac.compare_digest(expected, given.get("oauth_signature", "")):
            return f"bad oauth_signature for {request.method} {received}"
        return ""

    def _headers(self, remaining: int = 99, reset_in: float = 900.0) -> dict[str, str]:
        return {
            "x-rate-limit-limit": "100",
            "x-rate-limit-remaining": str(remaining),
            "x-rate-limit-reset": str(int(self.now() + reset_in)),
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
        if s.style == "code":  # the older error shape: {code, message}
            body = {"code": s.status, "message": s.detail or "scripted failure"}
            return web.json_response(body, status=s.status, headers=self._headers())
        return self._problem(s.status, "Error", s.detail or "scripted failure")

    # -- expansions ------------------------------------------------------------------------

    def _page(
        self, call: Call, tweets: list[dict[str, Any]], more: str | None = None
    ) -> web.Response:
        expansions = set(filter(None, call.query.get("expansions", "").split(",")))
        asked = call.query.get("tweet.fields") or call.query.get("post.fields") or ""
        fields = set(filter(None, asked.split(",")))
        refs = "referenced_posts" if self.spelling == "posts" else "referenced_tweets"
        users: dict[str, Any] = {}
        media: dict[str, Any] = {}
        included: dict[str, Any] = {}

        def shown(t: dict[str, Any]) -> dict[str, Any]:
            keep = {"id", "text", "edit_history_tweet_ids"} | fields
            if "referenced_tweets" in keep or "referenced_posts" in keep:
                keep.add("referenced_tweets")
            found = {k: v for k, v in t.items() if k in keep}
            if "referenced_tweets" in found:
                found[refs] = found.pop("referenced_tweets")
            return found

        def expand(t: dict[str, Any], prefix: str) -> None:
            if f"{prefix}author_id" in expansions and t.get("author_id") in self.users:
                users[t["author_id"]] = self.users[t["author_id"]]
            if f"{prefix}attachments.media_keys" in expansions:
                for key in (t.get("attachments") or {}).get("media_keys", []):
                    if key in self.media:
                        media[key] = self.media[key]

        for t in tweets:
            expand(t, "")
            if f"{refs}.id" in expansions:
                for ref in t.get("referenced_tweets") or []:
                    target = self.tweets.get(ref["id"])
                    if target is not None:
                        included[target["id"]] = shown(target)
                        expand(target, f"{refs}.id.")
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
        if self.spelling == "posts" and "tweet.fields" in call.query:
            detail = "The query parameters [tweet.fields] is not one of [post.fields, ...]"
            return self._problem(400, "Invalid Request", detail)
        asked = call.query.get("tweet.fields") or call.query.get("post.fields") or ""
        unknown = sorted(f for f in asked.split(",") if f and f in self.unknown_fields)
        if unknown:
            detail = f"The `post.fields` query parameter value [{unknown[0]}] is not one of [...]"
            return self._problem(400, "Invalid Request", detail)
        selection = dict(
            part.split(":", 1) for part in call.query.get("post_selection", "").split(",") if part
        )
        wanted = selection.get("feed_lang", "all")
        found = [
            self.tweets[i]
            for i in self.eligible
            if wanted == "all" or self.tweets[i].get("lang", "en") == wanted
        ]
        return self._page(call, found[: int(call.query.get("max_results") or 10)])

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
        if self.create_answer == "id":  # the spec's answer; the quickstart's is 201 note_id
            return self._json({"data": {"id": note.note_id}}, status=200)
        return self._json({"data": {"note_id": note.note_id}}, status=201)

    def _written(self, call: Call) -> web.Response:
        test_mode = call.query.get("test_mode") == "true"
        # what X shows by default is the id and the note; status and test_result when asked
        fields = {"id", "info"} | set(call.query.get("note.fields", "").split(","))
        unknown = sorted(f for f in fields if f and f not in NOTE_FIELDS)
        if unknown:
            detail = f"The `note.fields` query parameter value [{unknown[0]}] is not one of [...]"
            return self._problem(400, "Invalid Request", detail)
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
            data.append({k: v for k, v in item.items() if k in fields})
        return self._json({"data": data, "meta": {"result_count": len(data)}})
