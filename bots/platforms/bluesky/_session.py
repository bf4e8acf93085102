"""One logged-in atproto `AsyncClient` per process, its session kept in the database.

Bluesky allows 30 `createSession` calls per 5 minutes (300 a day) per account, so a password
log-in happens only when no stored session works. The session string (handle, DID, access and
refresh tokens, PDS) lives in `store.state` under `bluesky:session`; the client stores it again
on every change (a log-in, a refresh). Refresh tokens are single-use: a process that sees a
newer session in the database than the one it holds (another process refreshed) imports it
before its next call, so two processes never spend the same refresh token.

An access token the server calls expired (`ExpiredToken`, e.g. a skewed clock) is refreshed
once and the call repeated; a refresh the server refuses falls back to the password. The refresh
is single-flight: calls that meet the same expired token (the poller and a sender) wait on one
lock, and a caller that finds the session renewed since its request began only repeats the call,
so a server that rotates refresh tokens strictly never sees one spent twice.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from atproto import AsyncClient, Session, SessionEvent
from atproto.exceptions import BadRequestError, UnauthorizedError

from bots.settings import BlueskySettings
from storage.state import StateRepo

log = logging.getLogger(__name__)
SESSION_KEY = "bluesky:session"
T = TypeVar("T")


async def query(nsid: str, params: Any, client: AsyncClient) -> Any:
    """Return the response of an XRPC query as JSON (`Response.content`), untyped."""
    response = await client.invoke_query(nsid, params=params)
    return response


def _expired(exc: BaseException) -> bool:
    content = getattr(getattr(exc, "response", None), "content", None)
    return getattr(content, "error", None) in ("ExpiredToken", "InvalidToken")


class BlueskySession:
    """The process's client: resumed from the stored session, logged in only when it must."""

    def __init__(self, settings: BlueskySettings, state: StateRepo) -> None:
        self.settings = settings
        self.state = state
        self._client: AsyncClient | None = None
        self._held: str | None = None  # the session string this client holds
        self._lock = asyncio.Lock()
        self.did = ""
        self.handle = settings.handle or ""

    async def client(self) -> AsyncClient:
        """Return the logged-in client (resuming or creating the session as needed)."""
        async with self._lock:
            stored = self.state.get(SESSION_KEY)
            if self._client is not None and (stored is None or stored == self._held):
                return self._client
            client = self._client or self._new_client()
            if stored is not None:
                try:
                    await client.login(session_string=stored, fetch_bsky_profile=False)
                    self._adopt(Session.decode(stored))
                    self._client = client
                    return client
                except (UnauthorizedError, BadRequestError) as exc:
                    log.warning(
                        "stored Bluesky session refused; logging in", extra={"error": str(exc)}
                    )
                    self.state.delete(SESSION_KEY)
            await self._password_login(client)
            self._client = client
            return client

    async def call(self, request: Callable[[AsyncClient], Awaitable[T]]) -> T:
        """Return request(client); refresh an access token the server says expired, once."""
        client = await self.client()
        sent_with = self._held
        try:
            return await request(client)
        except (BadRequestError, UnauthorizedError) as exc:
            if not _expired(exc):
                raise
            await self._refresh(client, sent_with)
            return await request(client)

    async def aclose(self) -> None:
        """Close the client's connections."""
        if self._client is not None:
            await self._client.request.close()
            self._client = None

    def _new_client(self) -> AsyncClient:
        client = AsyncClient(base_url=self.settings.service_url)
        client.on_session_change(self._changed)
        return client

    async def _changed(self, event: SessionEvent, session: Session) -> None:
        if event in (SessionEvent.CREATE, SessionEvent.REFRESH):
            self.state.set(SESSION_KEY, session.export())
            log.info("Bluesky session stored", extra={"event": event.value})
        self._adopt(session)

    def _adopt(self, session: Session) -> None:
        self._held = session.export()
        self.did = session.did
        self.handle = session.handle

    async def _password_login(self, client: AsyncClient) -> None:
        settings = self.settings
        if settings.handle is None or settings.app_password is None:
            raise RuntimeError("Bluesky needs FACTBOT_BLUESKY__HANDLE and __APP_PASSWORD")
        log.info("Bluesky: creating a session (rate-limited: 30 per 5 minutes)")
        await client.login(
            settings.handle, settings.app_password.get_secret_value(), fetch_bsky_profile=False
        )

    async def _refresh(self, client: AsyncClient, expired: str | None) -> None:
        """Renew the session a request sent with `expired` failed on, unless already renewed."""
        async with self._lock:
            if self._held != expired:  # another caller refreshed (or logged in) meanwhile
                return
            log.info("Bluesky access token expired; refreshing the session")
            try:
                # atproto 0.0.73 has no public refresh; this is what its own auto-refresh calls.
                refresh: Callable[[], Awaitable[Any]] = client._refresh_and_set_session
                await refresh()
            except (UnauthorizedError, BadRequestError) as exc:
                log.warning("Bluesky refresh refused; logging in", extra={"error": str(exc)})
                await self._password_login(client)
