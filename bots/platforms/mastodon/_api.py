"""The Mastodon.py client, kept off the event loop, and the instance's limits.

Mastodon.py is synchronous (requests): every call runs in a thread (`asyncio.to_thread`), never
on the loop. It is built with `ratelimit_method="throw"`: its "wait" mode sleeps inside the
thread for up to 5 minutes and is not thread-safe; instead a 429 becomes `RateLimitedError`
with the seconds until `X-RateLimit-Reset`, and the caller decides (a reply job retries later,
a monitor source is skipped until then).

The post length is the instance's (`configuration.statuses.max_characters` of
`/api/v2/instance`, else `/api/v1/instance`, else 500), with every URL counted as
`characters_reserved_per_url` (23). It is read once per process and kept in `store.state`
(`mastodon:limits`), so a worker renders within the limit its listener read.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from mastodon import Mastodon
from mastodon.errors import MastodonAPIError, MastodonNotFoundError, MastodonRatelimitError

from bots.settings import MastodonSettings
from storage.state import StateRepo

log = logging.getLogger(__name__)
LIMITS_KEY = "mastodon:limits"
DEFAULT_CHARS = 500
DEFAULT_URL_CHARS = 23
T = TypeVar("T")


class RateLimitedError(RuntimeError):
    """The instance answered 429; `retry_after` is the seconds until its limit resets."""

    def __init__(self, retry_after: float | None) -> None:
        super().__init__(f"Mastodon rate limit hit; retry in {retry_after or '?'} s")
        self.retry_after = retry_after


@dataclass(frozen=True)
class Limits:
    """How long a status may be on this instance, and what a URL counts."""

    max_characters: int = DEFAULT_CHARS
    url_characters: int = DEFAULT_URL_CHARS


def status_code(exc: BaseException) -> int | None:
    """Return the HTTP status of a Mastodon.py API error, when it carries one."""
    args: tuple[Any, ...] = tuple(getattr(exc, "args", ()))
    code = args[1] if len(args) > 1 else None
    return code if isinstance(code, int) else None


class MastodonApi:
    """One Mastodon.py client for the bot account; every call in a thread."""

    def __init__(self, settings: MastodonSettings, state: StateRepo) -> None:
        self.settings = settings
        self.state = state
        token = settings.access_token.get_secret_value() if settings.access_token else None
        self.client = Mastodon(
            access_token=token,
            api_base_url=settings.api_base_url,
            ratelimit_method="throw",
            version_check_mode="none",
            request_timeout=settings.request_timeout,
            user_agent="factbot",
        )
        self._me: dict[str, Any] | None = None

    async def call(self, method: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Return method(*args, **kwargs) run in a thread; a 429 is RateLimitedError."""
        try:
            return await asyncio.to_thread(method, *args, **kwargs)
        except MastodonRatelimitError as exc:
            reset = self.client.ratelimit_reset
            wait = max(float(reset) - time.time(), 0.0) if reset else None
            raise RateLimitedError(wait) from exc

    async def me(self) -> dict[str, Any]:
        """Return the bot's own account (cached)."""
        if self._me is None:
            self._me = dict(await self.call(self.client.account_verify_credentials))
        return self._me

    def limits(self) -> Limits:
        """Return the limits known to this process (a setting, the stored ones, or defaults)."""
        stored = self.state.get(LIMITS_KEY)
        limits = Limits(**json.loads(stored)) if stored else Limits()
        if self.settings.max_characters is not None:
            return Limits(self.settings.max_characters, limits.url_characters)
        return limits

    async def read_limits(self) -> Limits:
        """Read the instance's limits (v2, else v1, else defaults), store and return them."""
        config: Any = None
        for method in (self.client.instance_v2, self.client.instance_v1):
            try:
                config = (await self.call(method)).get("configuration")
                break
            except (MastodonNotFoundError, MastodonAPIError) as exc:
                log.info("Mastodon instance info unavailable", extra={"error": str(exc)})
        statuses = (config or {}).get("statuses") or {}
        limits = Limits(
            int(statuses.get("max_characters") or DEFAULT_CHARS),
            int(statuses.get("characters_reserved_per_url") or DEFAULT_URL_CHARS),
        )
        self.state.set(LIMITS_KEY, json.dumps(limits.__dict__))
        return limits
