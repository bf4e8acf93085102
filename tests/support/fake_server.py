"""The base of the platform stand-ins: an aiohttp server on 127.0.0.1, port 0, in the test's loop.

A stand-in adds its routes (`add_routes`) and is used as `async with FakeX() as x:`. On the way
out it closes the connections it holds open (`close_connections`: gateways, sockets), stops the
server and, when the test itself did not fail, fails on any call it did not know (`unknown`):
a call the stand-in does not speak is a bug in the adapter or in the stand-in.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any, Self

from aiohttp import web


class FakeServer:
    """An aiohttp application on a free loopback port; subclasses add the routes."""

    name = "platform"  # in the failure message: "the stand-in Slack got calls it does not know"
    access_log = True  # aiohttp's access log (logger aiohttp.access); a chatty stand-in sets False

    def __init__(self) -> None:
        self.port = 0
        self.unknown: list[Any] = []  # calls of routes the stand-in does not know
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        """Return the base URL, http://127.0.0.1:PORT."""
        return f"http://127.0.0.1:{self.port}"

    def add_routes(self, router: web.UrlDispatcher) -> None:
        """Add the stand-in's routes."""
        raise NotImplementedError

    async def close_connections(self) -> None:
        """Close what the stand-in holds open (websockets) before the server stops."""

    async def __aenter__(self) -> Self:
        app = web.Application()
        self.add_routes(app.router)
        options: dict[str, Any] = {} if self.access_log else {"access_log": None}
        # A stalled answer (a test killed its caller meanwhile) is cancelled a second after the
        # test ends: aiohttp's default waits 60 s for it, doing nothing.
        self._runner = web.AppRunner(app, shutdown_timeout=1.0, **options)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close_connections()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self.unknown and exc is None:
            calls = ", ".join(str(getattr(call, "path", call)) for call in self.unknown)
            raise AssertionError(f"the stand-in {self.name} got calls it does not know: {calls}")
