"""The X API v2: tweepy's AsyncClient sending to `FACTBOT_X__API_BASE`, limits kept, costs kept.

Requests. tweepy builds every call's route and parameters; `_Client.request` (tweepy's one
request method, overridden) sends it to `FACTBOT_X__API_BASE` + route — a path prefix in the
base is kept — and signs exactly the URL it sends: OAuth 1.0a (RFC 5849 §3.4.1.2) covers the
scheme, host, port, path and query of the request, and the Host header is the base's own, so
a proxy, `https://api.x.com` or a stand-in verifies what arrives. A bearer token is sent as is.

Limits, kept by the client rather than learned from 429s (storage/call_limits.py), by the
credentials' identity (a hash of the consumer key and access token, or of the bearer token):

- the Community Notes endpoints (`/2/notes...`, `/2/evaluate_note`) share one window of 90
  requests in 15 minutes, and `POST /2/notes` has 250 a day (`Limits`; X documents both);
- a 429 (`x-rate-limit-reset`, epoch seconds; else Retry-After) or a response saying none is
  left sets a reset on the window it belongs to — all the Community Notes endpoints at once,
  else the endpoint's own — that every job and process with the same keys waits out before
  its next call (they share the database).

A wait of up to `Limits.max_wait` seconds is slept through in place; a longer one raises
`XRateLimitedError` before anything is sent, with the wait, for the caller to come back then
(a job is retried then; the poller and the monitor pause). tweepy's own `wait_on_rate_limit`
stays off (it crashes on user-auth retries in 4.17). Every billed call is recorded in
`api_costs` (X's pay-per-use prices are settings): posts read, posts created, posts with a URL.

Errors raised here (callers map them to the runtime's), with X's message read from a problem
JSON (`title`, `detail`), a `{code, message}` body or an `errors` list:

    XApiError                 any refusal (status, codes, messages)
    ├── XRateLimitedError     429, or a limit kept here: retry_after seconds
    └── XForbiddenError       403: e.g. a reply X does not allow under that post
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import aiohttp
from oauthlib.oauth1 import Client as OAuth1Signer
from tweepy.asynchronous import AsyncClient
from yarl import URL

from bots.settings import XSettings
from pipeline.util.clock import SYSTEM, Clock
from pipeline.util.retry_after import retry_after
from storage.call_limits import CallLimits, Window
from storage.x_notes import ApiCosts

log = logging.getLogger(__name__)

DEFAULT_HOST = "https://api.twitter.com"
PLATFORM = "x"
TWEET_FIELDS = [
    "attachments",
    "author_id",
    "conversation_id",
    "created_at",
    "entities",
    "note_tweet",
    "referenced_tweets",
]
MENTION_EXPANSIONS = [
    "author_id",
    "attachments.media_keys",
    "referenced_tweets.id",
    "referenced_tweets.id.author_id",
    "referenced_tweets.id.attachments.media_keys",
]
MEDIA_FIELDS = ["url", "preview_image_url", "alt_text", "type"]
USER_FIELDS = ["username", "public_metrics"]
NOTES_ROUTES = ("/2/notes", "/2/evaluate_note")  # the Community Notes endpoints' paths
CREATE_NOTE = ("POST", "/2/notes")
MAX_429 = 3  # 429s answered to one call before it gives up with the last wait
_URL_RE = re.compile(r"https?://\S+", re.IGNORECASE)
NOTES_WINDOW = Window("notes", 90, 15 * 60)  # every Community Notes endpoint together
CREATES_WINDOW = Window("notes:create", 250, 24 * 3600)  # POST /2/notes


@dataclass(frozen=True)
class Limits:
    """What the client keeps to: X's documented Community Notes limits, and how long a wait
    is slept through in place (tests shrink them)."""

    notes: Window = NOTES_WINDOW
    creates: Window = CREATES_WINDOW
    max_wait: float = 10.0


class XApiError(Exception):
    """X refused a request."""

    def __init__(self, message: str, *, status: int, codes: Sequence[int | str] = ()) -> None:
        super().__init__(message)
        self.status = status
        self.codes = tuple(codes)


class XRateLimitedError(XApiError):
    """X said 429, or a limit kept here is reached: wait `retry_after` seconds."""

    def __init__(self, message: str, *, retry_after: float) -> None:
        super().__init__(message, status=429)
        self.retry_after = retry_after


class XForbiddenError(XApiError):
    """X said 403 (a reply not allowed under that post, a client not enrolled in notes)."""


def _secret(value: Any) -> str | None:
    return value.get_secret_value() if value is not None else None


def credentials_id(settings: XSettings) -> str:
    """Return a stable name of the credentials (a hash, never the keys): X counts per keys."""
    if settings.oauth1:
        material = f"oauth1:{_secret(settings.consumer_key)}:{_secret(settings.access_token)}"
    else:
        material = f"bearer:{_secret(settings.bearer_token)}"
    return "x:" + hashlib.sha256(material.encode()).hexdigest()[:16]


def encode_query(params: Mapping[str, Any] | None) -> str:
    """Return params as a query string, sorted, every reserved character percent-encoded."""
    pairs = sorted((str(k), str(v)) for k, v in (params or {}).items() if v is not None)
    return "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in pairs)


class _Client(AsyncClient):  # type: ignore[misc]
    """tweepy's client, each request sent to api_base and signed for the URL sent."""

    def __init__(self, api_base: str, signer: OAuth1Signer | None, **keys: Any) -> None:
        super().__init__(**keys, return_type=aiohttp.ClientResponse, wait_on_rate_limit=False)
        self.base = api_base.rstrip("/")
        self.signer = signer

    async def request(  # tweepy's signature
        self,
        method: str,
        route: str,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        user_auth: bool = False,
    ) -> aiohttp.ClientResponse:
        """Send one request; return the response, whatever its status (XApi reads it)."""
        query = encode_query(params)
        url = self.base + route + (f"?{query}" if query else "")
        headers = {"User-Agent": self.user_agent}
        if json is not None:
            headers["Content-Type"] = "application/json"
        if user_auth and self.signer is not None:
            url, headers, _ = self.signer.sign(url, method, headers=headers)
        else:
            headers["Authorization"] = f"Bearer {self.bearer_token}"
        session: aiohttp.ClientSession | None = self.session
        assert session is not None  # XApi.client() gives it one
        async with session.request(
            method, URL(url, encoded=True), json=json, headers=headers
        ) as response:
            await response.read()
        return response


def wait_from(headers: Mapping[str, str], now: float) -> float:
    """Return the seconds a 429's headers ask to wait (x-rate-limit-reset, else Retry-After)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    reset = lowered.get("x-rate-limit-reset", "")
    if reset.isdigit():
        return max(1.0, float(reset) - now + 1.0)
    asked = retry_after(headers)
    return max(1.0, asked) if asked is not None else 60.0


def error_text(body: Any, fallback: str) -> tuple[str, tuple[int | str, ...]]:
    """Return X's message in an error body (problem JSON, {code, message}, an `errors` list)
    and the codes it names."""
    if not isinstance(body, Mapping):
        return fallback, ()
    parts: list[str] = []
    codes: list[int | str] = []
    title, detail = body.get("title"), body.get("detail")
    if detail and title and str(detail) != str(title):
        parts.append(f"{title}: {detail}")
    elif detail or title:
        parts.append(str(detail or title))
    if body.get("message"):
        parts.append(str(body["message"]))
    if body.get("code") is not None:
        codes.append(body["code"])
    for item in body.get("errors") or []:
        if isinstance(item, Mapping):
            text = item.get("message") or item.get("detail") or item.get("title")
            if text and str(text) not in parts:
                parts.append(str(text))
            if item.get("code") is not None:
                codes.append(item["code"])
    if body.get("type") and str(body["type"]) != "about:blank" and not parts:
        parts.append(str(body["type"]))
    text = "; ".join(dict.fromkeys(parts)) or fallback
    if codes and all(str(c) not in text for c in codes):
        text += f" (code {', '.join(str(c) for c in codes)})"
    return text, tuple(codes)


@dataclass(frozen=True)
class _Plan:
    """The windows a call counts in and the resets it waits for."""

    windows: tuple[Window, ...]
    resets: tuple[str, ...]
    bucket: str  # the window a 429 on this call sets the reset of


class XApi:
    """The calls factbot makes to X, each kept within X's limits, mapped to factbot's errors
    and billed."""

    def __init__(
        self,
        settings: XSettings,
        costs: ApiCosts,
        *,
        limits: CallLimits | None = None,
        keep: Limits = Limits(),
        clock: Clock = SYSTEM,
        wall: Callable[[], float] = time.time,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.settings = settings
        self.costs = costs
        self.limits = limits if limits is not None else CallLimits(costs.db, clock=clock)
        self.keep = keep
        self.clock = clock
        self.wall = wall  # epoch seconds, what x-rate-limit-reset is measured in
        self.sleep = sleep
        self.owner = credentials_id(settings)
        self.user_auth = settings.oauth1
        self._client: _Client | None = None
        self._me: str | None = settings.user_id

    def client(self) -> AsyncClient:
        """Return the tweepy client (built on first use, inside the running event loop)."""
        if self._client is None:
            s = self.settings
            signer = None
            if s.oauth1:
                signer = OAuth1Signer(
                    _secret(s.consumer_key),
                    _secret(s.consumer_secret),
                    _secret(s.access_token),
                    _secret(s.access_token_secret),
                )
            client = _Client(
                s.api_base,
                signer,
                bearer_token=None if s.oauth1 else _secret(s.bearer_token),
                consumer_key=_secret(s.consumer_key),
                consumer_secret=_secret(s.consumer_secret),
                access_token=_secret(s.access_token),
                access_token_secret=_secret(s.access_token_secret),
            )
            client.session = aiohttp.ClientSession()
            self._client = client
        return self._client

    async def close(self) -> None:
        """Close the HTTP session."""
        if self._client is not None and self._client.session is not None:
            await self._client.session.close()
        self._client = None

    def plan(self, method: str, route: str) -> _Plan:
        """Return the windows and resets of a call (route: a name, or a Community Notes path)."""
        if not route.startswith(NOTES_ROUTES):
            return _Plan((), (route,), route)
        if (method.upper(), route) == CREATE_NOTE:
            return _Plan((self.keep.notes, self.keep.creates), (), self.keep.notes.name)
        return _Plan((self.keep.notes,), (), self.keep.notes.name)

    async def call(
        self,
        route: str,
        send: Callable[[], Awaitable[Any]],
        *,
        method: str = "GET",
    ) -> dict[str, Any]:
        """Send a request once the limits allow it; return its JSON body, or raise XApiError."""
        plan = self.plan(method, route)
        wait = 0.0
        for _ in range(MAX_429):
            await self._admit(route, plan)
            try:
                response: aiohttp.ClientResponse = await send()
                body = await _json_of(response)
            except aiohttp.ClientError as exc:  # the connection failed: nothing is known
                raise XApiError(f"X could not be reached for {route}: {exc}", status=503) from exc
            if response.status == 429:
                wait = wait_from(response.headers, self.wall())
                await self._block(route, plan, wait)
                continue
            self._raise_for(route, response, body)
            await self._note_limits(plan, response.headers)
            if not isinstance(body, dict):
                raise XApiError(
                    f"X answered {route} with {type(body).__name__}", status=response.status
                )
            return body
        raise XRateLimitedError(f"X rate limit on {route}; retry in {wait:.0f} s", retry_after=wait)

    async def _admit(self, route: str, plan: _Plan) -> None:
        """Return once a call may go out now (counted), sleeping through a short wait."""
        for _ in range(10):
            wait = await asyncio.to_thread(
                self.limits.admit, self.owner, plan.windows, self.wall(), resets=plan.resets
            )
            if wait <= 0:
                return
            if wait > self.keep.max_wait:
                raise XRateLimitedError(
                    f"X's limit for {route} is reached; retry in {wait:.0f} s", retry_after=wait
                )
            log.info("waiting for X's rate window", extra={"route": route, "wait": wait})
            await self.sleep(wait)
        raise XRateLimitedError(f"X's limit for {route} stays reached", retry_after=60.0)

    async def _block(self, route: str, plan: _Plan, wait: float) -> None:
        """Record a 429's reset for every caller: the Community Notes daily limit (a wait
        beyond the 15-minute window on POST /2/notes) on the create window alone."""
        bucket = plan.bucket
        if self.keep.creates in plan.windows and wait > self.keep.notes.seconds:
            bucket = self.keep.creates.name
        log.warning("X rate limit reached", extra={"route": route, "retry_after": wait})
        await asyncio.to_thread(self.limits.block, self.owner, bucket, self.wall() + wait)

    async def _note_limits(self, plan: _Plan, headers: Mapping[str, str]) -> None:
        """Record the reset of a window X says is spent, for every caller."""
        remaining, reset = headers.get("x-rate-limit-remaining"), headers.get("x-rate-limit-reset")
        if remaining == "0" and reset and reset.isdigit():
            await asyncio.to_thread(self.limits.block, self.owner, plan.bucket, float(reset) + 1)

    def _raise_for(self, route: str, response: aiohttp.ClientResponse, body: Any) -> None:
        status = response.status
        if 200 <= status < 300:
            return
        text, codes = error_text(body, response.reason or f"HTTP {status}")
        if status == 403:
            raise XForbiddenError(f"X refused {route} (403): {text}", status=403, codes=codes)
        raise XApiError(f"X refused {route} ({status}): {text}", status=status, codes=codes)

    def bill_reads(self, body: Mapping[str, Any], ref: str) -> int:
        """Record the posts a response returned (its data and the included posts) as reads."""
        data = body.get("data")
        count = len(data) if isinstance(data, list) else (1 if isinstance(data, dict) else 0)
        count += len((body.get("includes") or {}).get("tweets") or [])
        self.costs.record(PLATFORM, "read", count, count * self.settings.price_read, ref=ref)
        return count

    async def me(self) -> str:
        """Return the bot account's numeric id (asked once)."""
        if self._me is None:
            body = await self.call(
                "users/me", lambda: self.client().get_me(user_auth=self.user_auth)
            )
            self._me = str(body["data"]["id"])
        return self._me

    async def mentions(self, since_id: str | None, *, token: str | None = None) -> dict[str, Any]:
        """Return one page of the bot's mentions newer than since_id, with expansions."""
        me = await self.me()
        body = await self.call(
            "mentions",
            lambda: self.client().get_users_mentions(
                me,
                since_id=since_id,
                pagination_token=token,
                max_results=self.settings.mentions_per_poll,
                expansions=MENTION_EXPANSIONS,
                tweet_fields=TWEET_FIELDS,
                media_fields=MEDIA_FIELDS,
                user_fields=USER_FIELDS,
                user_auth=self.user_auth,
            ),
        )
        self.bill_reads(body, "mentions")
        return body

    async def tweets(self, ids: Sequence[str]) -> dict[str, Any]:
        """Return posts by id with their authors and media."""
        body = await self.call(
            "tweets",
            lambda: self.client().get_tweets(
                list(ids),
                expansions=["author_id", "attachments.media_keys"],
                tweet_fields=TWEET_FIELDS,
                media_fields=MEDIA_FIELDS,
                user_fields=USER_FIELDS,
                user_auth=self.user_auth,
            ),
        )
        self.bill_reads(body, "tweets")
        return body

    async def post(self, text: str, *, in_reply_to: str | None) -> str:
        """Create a post (a reply when in_reply_to is set); return its id. Billed."""
        body = await self.call(
            "create",
            lambda: self.client().create_tweet(
                text=text, in_reply_to_tweet_id=in_reply_to, user_auth=self.user_auth
            ),
            method="POST",
        )
        tweet_id = str(body["data"]["id"])
        with_url = bool(_URL_RE.search(text))
        price = self.settings.price_post_url if with_url else self.settings.price_post
        self.costs.record(PLATFORM, "post_url" if with_url else "post", 1, price, ref=tweet_id)
        return tweet_id

    async def own_posts(self, since_id: str) -> dict[str, Any]:
        """Return the bot's own posts newer than since_id (to find a reply a crash hid)."""
        me = await self.me()
        body = await self.call(
            "own",
            lambda: self.client().get_users_tweets(
                me,
                since_id=since_id,
                max_results=100,
                tweet_fields=["referenced_tweets", "created_at"],
                user_auth=self.user_auth,
            ),
        )
        self.bill_reads(body, "own")
        return body

    async def search(self, query: str, since_id: str | None, limit: int) -> dict[str, Any]:
        """Return recent posts matching query (the last 7 days), with authors and media."""
        body = await self.call(
            "search",
            lambda: self.client().search_recent_tweets(
                query,
                since_id=since_id,
                max_results=min(100, max(10, limit)),
                expansions=["author_id", "attachments.media_keys"],
                tweet_fields=[*TWEET_FIELDS, "public_metrics"],
                media_fields=MEDIA_FIELDS,
                user_fields=USER_FIELDS,
                user_auth=self.user_auth,
            ),
        )
        self.bill_reads(body, f"search:{query}")
        return body

    async def timeline(self, user_id: str, since_id: str | None, limit: int) -> dict[str, Any]:
        """Return an account's recent posts, with authors and media."""
        body = await self.call(
            "timeline",
            lambda: self.client().get_users_tweets(
                user_id,
                since_id=since_id,
                max_results=min(100, max(5, limit)),
                exclude=["retweets"],
                expansions=["author_id", "attachments.media_keys"],
                tweet_fields=[*TWEET_FIELDS, "public_metrics"],
                media_fields=MEDIA_FIELDS,
                user_fields=USER_FIELDS,
                user_auth=self.user_auth,
            ),
        )
        self.bill_reads(body, f"timeline:{user_id}")
        return body

    async def raw(
        self,
        method: str,
        route: str,
        *,
        params: Mapping[str, Any] | None = None,
        json: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Call an endpoint tweepy has no method for (Community Notes), signed like the rest."""

        def send() -> Awaitable[Any]:
            sent: Awaitable[Any] = self.client().request(
                method,
                route,
                params=dict(params or {}),
                json=dict(json) if json is not None else None,
                user_auth=self.user_auth,
            )
            return sent

        return await self.call(route, send, method=method)


async def _json_of(response: aiohttp.ClientResponse) -> Any:
    """Return a response's JSON body, or None when it has none."""
    try:
        return await response.json(content_type=None)
    except ValueError:
        return None
