"""Route dependencies: the role a page needs and the CSRF token of every write.

A page asked for without the role answers with the sign-in page (303) when nobody is signed
in and with 403 when the user's role is too low. A POST without the session's CSRF token (the
`csrf` form field or the `X-CSRF-Token` header) answers 403 and changes nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from urllib.parse import quote

from fastapi import Request

from bots.dashboard._access import CSRF_FIELD, CSRF_HEADER, Access, Principal
from storage.users import Role


class SignInRequiredError(Exception):
    """Nobody is signed in; the page sends them to /signin."""

    def __init__(self, next_path: str) -> None:
        super().__init__(next_path)
        self.next_path = next_path


class ForbiddenError(Exception):
    """The request may not do this (role too low, or CSRF token missing)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def signin_url(next_path: str) -> str:
    """Return the sign-in page that comes back to next_path."""
    return f"/signin?next={quote(next_path)}"


def needs(access: Access, role: Role) -> Callable[[Request], Awaitable[Principal]]:
    """Return a dependency that yields the principal with at least role, CSRF-checked writes."""

    async def dependency(request: Request) -> Principal:
        principal = await access.resolve(request)
        if principal is None:
            raise SignInRequiredError(request.url.path)
        if not principal.may(role):
            raise ForbiddenError(f"this needs the {role} role; you are a {principal.role}")
        if request.method != "GET":
            await check_csrf(access, request)
        return principal

    return dependency


async def check_csrf(access: Access, request: Request) -> None:
    """Raise ForbiddenError unless the request carries the session's CSRF token."""
    token = request.headers.get(CSRF_HEADER)
    if not token:
        form = await request.form()
        value = form.get(CSRF_FIELD)
        token = value if isinstance(value, str) else None
    if not access.csrf_ok(request.state.session, token):
        raise ForbiddenError("the form's CSRF token is missing or out of date: reload the page")
