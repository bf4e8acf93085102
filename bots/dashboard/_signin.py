"""Signing in and out, with rate limits per address and per name.

Each attempt takes a token from two buckets (`storage/platform.py` `take`, the token buckets
the platform guards use): one for the client address, one for the name tried, so neither one
address trying many names nor many addresses trying one name gets far. A refused attempt is
answered 429 without checking the password; every attempt is recorded.

An invited user follows their one-time link (`/invite/TOKEN`, from `factbot users invite`),
chooses a password and is signed in; a used, expired or wrong link says so (410) and nothing
else. The token is 256 random bits, so the link needs no rate limit of its own.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from bots.dashboard._access import Access
from bots.dashboard._deps import check_csrf
from bots.dashboard._views import Views
from pipeline.errors import InputError
from storage.platform import Bucket
from storage.users import MIN_PASSWORD


def _local_path(value: str) -> str:
    """Return value when it is a path on this site, else "/" (no open redirect)."""
    parts = urlsplit(value)
    if parts.scheme or parts.netloc or not value.startswith("/") or value.startswith("//"):
        return "/"
    return value


def router(access: Access, views: Views) -> APIRouter:
    """Return the sign-in and sign-out routes."""
    routes = APIRouter()
    store = access.app.store
    limits = access.app.settings.dashboard

    @routes.get("/signin", response_class=HTMLResponse)
    async def signin_page(request: Request, next: str = "/") -> HTMLResponse:
        """The dashboard's sign-in form."""
        await access.resolve(request)
        return views.render(request, "signin.html", next=_local_path(next), name="", error=None)

    @routes.post("/signin", response_class=HTMLResponse)
    async def signin(
        request: Request,
        name: str = Form(max_length=200),
        password: str = Form(max_length=1000),
        next: str = Form(default="/"),
    ) -> Response:
        """Sign in with a name and password: sets the signed session cookie."""
        await check_csrf(access, request)
        await access.resolve(request)
        address = request.client.host if request.client else "unknown"
        per_second = limits.signin_per_minute / 60
        taken = await store.call(
            store.platform.take,
            [
                Bucket(f"signin:address:{address}", limits.signin_burst, per_second),
                Bucket(f"signin:name:{name[:64]}", limits.signin_burst, per_second),
            ],
        )
        if not taken.allowed:
            await store.call(store.users.record_attempt, name, address, ok=False)
            return views.render(
                request,
                "signin.html",
                code=429,
                next=_local_path(next),
                name=name,
                error="Too many sign-in attempts: wait a minute and try again.",
            )
        user = await store.call(store.users.verify, name, password)
        await store.call(store.users.record_attempt, name, address, ok=user is not None)
        if user is None:
            return views.render(
                request,
                "signin.html",
                code=401,
                next=_local_path(next),
                name=name,
                error="That name and password do not match.",
            )
        request.state.session = access.new_session(user.name)
        request.state.cookie = True
        return RedirectResponse(_local_path(next), status_code=303)

    @routes.post("/signout")
    async def signout(request: Request) -> Response:
        """Sign out: the session is replaced by a new, signed-out one."""
        await check_csrf(access, request)
        request.state.session = access.new_session()
        request.state.cookie = True
        return RedirectResponse("/signin", status_code=303)

    routes.include_router(_invite_routes(access, views))
    return routes


def _invite_routes(access: Access, views: Views) -> APIRouter:
    """Return the routes that accept an invitation (a one-time link) and sign in."""
    routes = APIRouter()
    store = access.app.store

    def gone(request: Request) -> HTMLResponse:
        return views.render(
            request,
            "error.html",
            code=410,
            title="This invitation cannot be used",
            message="The link was used already, has expired or is wrong: ask an admin for a "
            "new one.",
        )

    @routes.get("/invite/{token}", response_class=HTMLResponse)
    async def invite_page(request: Request, token: str) -> HTMLResponse:
        """The form that accepts an invitation."""
        await access.resolve(request)
        invite = await store.call(store.users.invitation, token)
        if invite is None:
            return gone(request)
        return views.render(
            request, "invite.html", invite=invite, token=token, min_password=MIN_PASSWORD
        )

    @routes.post("/invite/{token}", response_class=HTMLResponse)
    async def accept_invite(
        request: Request,
        token: str,
        password: str = Form(max_length=1000),
        again: str = Form(max_length=1000),
    ) -> Response:
        """Accept an invitation: make the account with its password and sign in."""
        await check_csrf(access, request)
        await access.resolve(request)
        invite = await store.call(store.users.invitation, token)
        if invite is None:
            return gone(request)
        error = "The two passwords differ." if password != again else None
        if error is None:
            try:
                user = await store.call(store.users.accept, token, password)
            except InputError as exc:
                if (
                    await store.call(store.users.invitation, token) is None
                ):  # spent meanwhile, by another click
                    return gone(request)
                error = str(exc)
        if error is not None:
            return views.render(
                request,
                "invite.html",
                code=422,
                invite=invite,
                token=token,
                min_password=MIN_PASSWORD,
                error=error,
            )
        request.state.session = access.new_session(user.name)
        request.state.cookie = True
        return RedirectResponse("/", status_code=303)

    return routes
