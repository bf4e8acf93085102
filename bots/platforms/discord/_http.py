"""discord.py pointed at a configured Discord, per client, without changing the library's globals.

discord.py builds every REST URL from the class attribute `discord.http.Route.BASE` and opens
the gateway at `DiscordWebSocket.DEFAULT_GATEWAY`; setting those would redirect every client in
the process (and leak from one test into the next). Instead each factbot client gets a
`RoutedHTTPClient`, which rebases the URLs of its own requests on `DiscordSettings.api_base` and
its gateway connection on `DiscordSettings.gateway_url`, and interaction responses (sent by
discord.py's webhook adapter, not the HTTP client) go through a `RoutedWebhookAdapter`, set in
the listener task's context (`async_context` is the library's own seam for this).

Every request says who sends it, as Discord requires ("clients without it may be blocked"):
`User-Agent: DiscordBot (https://github.com/factbot/factbot, <version>)`, then the library's
name. discord.py's own header lacks the comma, and its webhook adapter (interaction callbacks,
`@original` edits) sends aiohttp's default; both are replaced here.
"""

from __future__ import annotations

import asyncio
from importlib import metadata
from typing import Any, cast

import aiohttp
import discord
import yarl
from discord.gateway import DiscordWebSocket
from discord.http import HTTPClient, Route
from discord.webhook.async_ import AsyncWebhookAdapter, async_context

DISCORD_BASE = Route.BASE  # what discord.py builds URLs on
PROJECT_URL = "https://github.com/factbot/factbot"


def user_agent() -> str:
    """Return the User-Agent of every request to Discord: `DiscordBot ($url, $version)` first."""
    try:
        version = metadata.version("factbot")
    except metadata.PackageNotFoundError:  # a source tree run without installing
        version = "0"
    return f"DiscordBot ({PROJECT_URL}, {version}) discord.py/{discord.__version__}"


class Rebase:
    """Rewrites URLs built on Discord's REST base onto a configured one."""

    def __init__(self, api_base: str) -> None:
        self.api_base = api_base.rstrip("/")

    def __call__(self, url: str) -> str:
        """Return url on the configured base."""
        if self.api_base != DISCORD_BASE and url.startswith(DISCORD_BASE):
            return self.api_base + url[len(DISCORD_BASE) :]
        return url


class RoutedHTTPClient(HTTPClient):
    """discord.py's HTTP client, talking to the configured REST base and gateway."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        *,
        api_base: str,
        gateway_url: str | None,
        max_ratelimit_timeout: float | None = None,
    ) -> None:
        super().__init__(loop, max_ratelimit_timeout=max_ratelimit_timeout)
        self.user_agent = user_agent()  # on REST requests and the gateway's handshake
        self.rebase = Rebase(api_base)
        self.gateway_url = gateway_url

    async def request(self, route: Route, **kwargs: Any) -> Any:
        """Send route to the configured base (discord.py's request, rate limits included)."""
        route.url = self.rebase(route.url)
        return await super().request(route, **kwargs)

    async def ws_connect(self, url: str, *, compress: int = 0) -> Any:
        """Open the gateway: the configured URL instead of Discord's default one."""
        default = str(DiscordWebSocket.DEFAULT_GATEWAY)
        if self.gateway_url is not None and url.startswith(default):
            url = str(yarl.URL(self.gateway_url).with_query(yarl.URL(url).query))
        return await super().ws_connect(url, compress=compress)


class RoutedWebhookAdapter(AsyncWebhookAdapter):
    """discord.py's webhook adapter (interaction responses), on the configured base."""

    def __init__(self, rebase: Rebase) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.rebase = rebase
        self.user_agent = user_agent()

    async def request(self, route: Route, session: Any, **kwargs: Any) -> Any:
        """Send route to the configured base, saying who sends it."""
        route.url = self.rebase(route.url)
        # The adapter calls only `session.request`, which _Named wraps.
        named = cast(aiohttp.ClientSession, _Named(session, self.user_agent))
        return await super().request(route, named, **kwargs)


class _Named:
    """An aiohttp session whose requests carry a User-Agent (the webhook adapter sets none)."""

    def __init__(self, session: aiohttp.ClientSession, user_agent: str) -> None:
        self._session = session
        self._user_agent = user_agent

    def request(self, method: str, url: str, **kwargs: Any) -> Any:
        """Start session's request with the User-Agent added to its headers."""
        headers = {**(kwargs.pop("headers", None) or {}), "User-Agent": self._user_agent}
        return self._session.request(method, url, headers=headers, **kwargs)


def route_client(client: discord.Client, *, api_base: str, gateway_url: str | None) -> None:
    """Give client a routed HTTP client (before it logs in or builds its command tree)."""
    client.http = RoutedHTTPClient(client.loop, api_base=api_base, gateway_url=gateway_url)
    client._connection.http = client.http  # the state keeps its own reference


def route_interactions(api_base: str) -> None:
    """Send this task's (and its children's) interaction responses to api_base."""
    async_context.set(RoutedWebhookAdapter(Rebase(api_base)))
