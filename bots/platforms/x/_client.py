"""The X API v2 through tweepy's AsyncClient: one session, rate limits read by hand, costs kept.

tweepy hard-codes `https://api.twitter.com`; when `FACTBOT_X__API_BASE` names another host
(`https://api.x.com`, a proxy, a stand-in in tests), the injected aiohttp session rewrites every
request's scheme, host and port in a client middleware (aiohttp >= 3.12) and keeps the path and
query. An OAuth 1.0a signature covers the URL, so the middleware signs the rewritten request
again (oauthlib, as tweepy does) for the URL actually sent; a bearer token is left as it is.

Rate limits: tweepy 4.17's `wait_on_rate_limit` crashes when it retries a user-auth request,
so it stays off and a 429 becomes `XRateLimitedError` with the wait the headers ask for
(`x-rate-limit-reset`, epoch seconds; else Retry-After). Every billed call is recorded in
`api_costs` (X's pay-per-use prices are settings): posts read, posts created, posts with a URL.

Errors raised here (callers map them to the runtime's):

    XApiError                 any refusal (status, codes, messages)
    ├── XRateLimitedError     429: retry_after seconds
    └── XForbiddenError       403: e.g. a reply X does not allow under that post
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import aiohttp
import tweepy
from oauthlib.oauth1 import Client as OAuth1Signer
from tweepy.asynchronous import AsyncClient
from yarl import URL

from bots.settings import XSettings
from pipeline.util.clock import SYSTEM, Clock
from pipeline.util.retry_after import retry_after
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
_URL_RE = re.compile(r"https?://\S+", re.IGNORECASE)


class XApiError(Exception):
    """X refused a request."""

    def __init__(self, message: str, *, status: int, codes: Sequence[int] = ()) -> None:
        super().__init__(message)
        self.status = status
        self.codes = tuple(codes)


class XRateLimitedError(XApiError):
    """X said 429: wait `retry_after` seconds."""

    def __init__(self, message: str, *, retry_after: float) -> None:
        super().__init__(message, status=429)
        self.retry_after = retry_after


class XForbiddenError(XApiError):
    """X said 403 (a reply not allowed under that post, a client not enrolled in notes)."""


def rewriting_session(api_base: str, signer: OAuth1Signer | None = None) -> aiohttp.ClientSession:
    """Return a session that sends tweepy's api.twitter.com requests to api_base instead,
    OAuth 1.0a ones signed again by signer for the URL they go to."""
    target = URL(api_base)
    if str(target).rstrip("/") == DEFAULT_HOST:
        return aiohttp.ClientSession()

    async def rewrite(
        request: aiohttp.ClientRequest,
        handler: Callable[[aiohttp.ClientRequest], Awaitable[aiohttp.ClientResponse]],
    ) -> aiohttp.ClientResponse:
        request.url = request.url.with_scheme(target.scheme).with_host(target.host or "")
        request.url = request.url.with_port(target.port)
        request.update_host(request.url)
        # tweepy signed for api.twitter.com, and an OAuth 1.0a signature covers the URL
        if signer is not None and request.headers.get("Authorization", "").startswith("OAuth "):
            _, signed, _ = signer.sign(str(request.url), request.method)
            request.headers["Authorization"] = signed["Authorization"]
        return await handler(request)

    return aiohttp.ClientSession(middlewares=(rewrite,))


def wait_from(headers: Mapping[str, str], now: float) -> float:
    """Return the seconds a 429's headers ask to wait (x-rate-limit-reset, else Retry-After)."""
    lowered = {k.lower(): v for k, v in headers.items()}
    reset = lowered.get("x-rate-limit-reset", "")
    if reset.isdigit():
        return max(1.0, float(reset) - now + 1.0)
    asked = retry_after(headers)
    return max(1.0, asked) if asked is not None else 60.0


class XApi:
    """The calls factbot makes to X, each mapped to factbot's errors and billed."""

    def __init__(
        self,
        settings: XSettings,
        costs: ApiCosts,
        *,
        clock: Clock = SYSTEM,
        wall: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings
        self.costs = costs
        self.clock = clock
        self.wall = wall  # epoch seconds, what x-rate-limit-reset is measured in
        self.user_auth = settings.oauth1
        self._client: AsyncClient | None = None
        self._me: str | None = settings.user_id
        self.remaining: dict[str, tuple[int, float]] = {}  # route -> (remaining, reset epoch)

    def client(self) -> AsyncClient:
        """Return the tweepy client (built on first use, inside the running event loop)."""
        if self._client is None:
            s = self.settings

            def secret(value: Any) -> str | None:
                return value.get_secret_value() if value is not None else None

            client = AsyncClient(
                bearer_token=None if s.oauth1 else secret(s.bearer_token),
                consumer_key=secret(s.consumer_key),
                consumer_secret=secret(s.consumer_secret),
                access_token=secret(s.access_token),
                access_token_secret=secret(s.access_token_secret),
                return_type=aiohttp.ClientResponse,
                wait_on_rate_limit=False,  # broken for user-auth retries in 4.17: handled here
            )
            signer = None
            if s.oauth1:
                signer = OAuth1Signer(
                    secret(s.consumer_key),
                    secret(s.consumer_secret),
                    secret(s.access_token),
                    secret(s.access_token_secret),
                )
            client.session = rewriting_session(s.api_base, signer)
            self._client = client
        return self._client

    async def close(self) -> None:
        """Close the HTTP session."""
        if self._client is not None and self._client.session is not None:
            await self._client.session.close()
        self._client = None

    async def call(self, route: str, request: Awaitable[Any]) -> dict[str, Any]:
        """Await a tweepy call; return its JSON body, or raise XApiError."""
        try:
            response: aiohttp.ClientResponse = await request
        except tweepy.TooManyRequests as exc:
            wait = wait_from(exc.response.headers, self.wall())
            log.warning("X rate limit reached", extra={"route": route, "retry_after": wait})
            raise XRateLimitedError(
                f"X rate limit on {route}; retry in {wait:.0f} s", retry_after=wait
            ) from exc
        except tweepy.Forbidden as exc:
            text = "; ".join(exc.api_messages) or "forbidden"
            raise XForbiddenError(
                f"X refused {route} (403): {text}", status=403, codes=exc.api_codes
            ) from exc
        except aiohttp.ContentTypeError as exc:  # a refusal whose body is not JSON
            raise XApiError(
                f"X answered {route} with HTTP {exc.status}", status=exc.status
            ) from exc
        except aiohttp.ClientError as exc:  # the connection failed: nothing is known
            raise XApiError(f"X could not be reached for {route}: {exc}", status=503) from exc
        except tweepy.HTTPException as exc:
            text = "; ".join(exc.api_messages) or exc.response.reason or "error"
            raise XApiError(
                f"X refused {route} ({exc.response.status}): {text}",
                status=exc.response.status,
                codes=exc.api_codes,
            ) from exc
        self._note_limits(route, response.headers)
        try:
            body = await response.json(content_type=None)
        except ValueError as exc:
            raise XApiError(f"X answered {route} with no JSON", status=response.status) from exc
        if not isinstance(body, dict):
            raise XApiError(f"X answered {route} with {type(body).__name__}", status=200)
        return body

    def _note_limits(self, route: str, headers: Mapping[str, str]) -> None:
        remaining, reset = headers.get("x-rate-limit-remaining"), headers.get("x-rate-limit-reset")
        if remaining and remaining.isdigit() and reset and reset.isdigit():
            self.remaining[route] = (int(remaining), float(reset))

    def pause_for(self, route: str) -> float:
        """Return how long to wait before calling route again (0 unless its window is spent)."""
        remaining, reset = self.remaining.get(route, (1, 0.0))
        return max(0.0, reset - self.wall() + 1.0) if remaining == 0 else 0.0

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
            body = await self.call("users/me", self.client().get_me(user_auth=self.user_auth))
            self._me = str(body["data"]["id"])
        return self._me

    async def mentions(self, since_id: str | None, *, token: str | None = None) -> dict[str, Any]:
        """Return one page of the bot's mentions newer than since_id, with expansions."""
        me = await self.me()
        body = await self.call(
            "mentions",
            self.client().get_users_mentions(
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
            self.client().get_tweets(
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
            self.client().create_tweet(
                text=text, in_reply_to_tweet_id=in_reply_to, user_auth=self.user_auth
            ),
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
            self.client().get_users_tweets(
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
            self.client().search_recent_tweets(
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
            self.client().get_users_tweets(
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
        """Call an endpoint tweepy has no method for (Community Notes) through its signer."""
        request = self.client().request(
            method,
            route,
            params=dict(params or {}),
            json=dict(json) if json is not None else None,
            user_auth=self.user_auth,
        )
        return await self.call(route, request)
