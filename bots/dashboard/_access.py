"""Who is asking: sessions in signed cookies, CSRF tokens, roles, API keys and the open mode.

Every browser gets a session cookie (HttpOnly, SameSite=Lax, Secure when factbot's public URL
is https) holding a random session id and, once signed in, the user's name, signed with
itsdangerous (HMAC-SHA1 over the payload and a timestamp; `session_hours` bounds its age). The
CSRF token of a session is an HMAC of its id: forms carry it as the `csrf` field, htmx and
`fetch` as the `X-CSRF-Token` header; a request that changes something without it is refused
with 403. Signing in or out issues a new session id (no session fixation).

The open mode keeps `make run` working with no keys and no external servers: while no user
exists and no API key is configured, every request is treated as the local admin (the server
binds to 127.0.0.1 by default) and the pages say so. Adding the first user (`factbot users
add`) or an API key ends it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from fastapi import Request
from itsdangerous import BadSignature, URLSafeTimedSerializer

from bots.app.root import App
from storage.users import ROLES, Role

COOKIE = "factbot_session"
CSRF_FIELD = "csrf"
CSRF_HEADER = "x-csrf-token"
SECRET_KEY = "dashboard:secret"


@dataclass(frozen=True)
class Principal:
    """Who a request acts for: a signed-in user, or the local admin of the open mode."""

    name: str
    role: Role
    local: bool = False  # the open mode's implicit admin

    def may(self, role: Role) -> bool:
        """Return whether this principal has at least this role."""
        return ROLES.index(self.role) >= ROLES.index(role)


@dataclass(frozen=True)
class Session:
    """The content of a session cookie."""

    sid: str
    user: str | None = None


class Access:
    """Sessions, CSRF tokens and principals for one App."""

    def __init__(self, app: App) -> None:
        self.app = app
        settings = app.settings.dashboard
        given = settings.secret_key.get_secret_value() if settings.secret_key else None
        self.secret = given or app.store.state.set_if_absent(SECRET_KEY, secrets.token_urlsafe(32))
        self.serializer = URLSafeTimedSerializer(self.secret, salt="factbot-session")
        self.max_age = int(settings.session_hours * 3600)
        base = app.settings.replies.public_base_url or ""
        self.secure = base.startswith("https://")
        self.api_keys = tuple(k.get_secret_value() for k in settings.api_keys)

    # -- sessions ----------------------------------------------------------------------------

    def load(self, request: Request) -> Session | None:
        """Return the session of the request's cookie, or None when absent, forged or old."""
        raw = request.cookies.get(COOKIE)
        if not raw:
            return None
        try:
            data = self.serializer.loads(raw, max_age=self.max_age)
        except BadSignature:
            return None
        if not isinstance(data, dict) or not isinstance(data.get("sid"), str):
            return None
        user = data.get("user")
        return Session(sid=data["sid"], user=user if isinstance(user, str) else None)

    def new_session(self, user: str | None = None) -> Session:
        """Return a session with a fresh id."""
        return Session(sid=secrets.token_urlsafe(18), user=user)

    def cookie_value(self, session: Session) -> str:
        """Return the signed cookie value of a session."""
        return self.serializer.dumps({"sid": session.sid, "user": session.user})

    def csrf_token(self, session: Session) -> str:
        """Return the CSRF token of a session."""
        return hmac.new(
            self.secret.encode(), f"csrf:{session.sid}".encode(), hashlib.sha256
        ).hexdigest()

    def csrf_ok(self, session: Session | None, token: str | None) -> bool:
        """Return whether token is the session's CSRF token."""
        if session is None or not token:
            return False
        return hmac.compare_digest(self.csrf_token(session), token)

    # -- principals --------------------------------------------------------------------------

    def open_mode(self) -> bool:
        """Return whether no user and no API key is configured (everyone is the local admin)."""
        return not self.api_keys and self.app.store.users.count() == 0

    def principal(self, session: Session | None) -> Principal | None:
        """Return who the session acts for, or None when nobody is signed in."""
        if session is not None and session.user:
            user = self.app.store.users.get(session.user)
            if user is not None and not user.disabled:
                return Principal(user.name, user.role)
        if self.open_mode():
            return Principal("local", "admin", local=True)
        return None

    async def resolve(self, request: Request) -> Principal | None:
        """Return who the request acts for, found once per request in a storage thread."""
        if not getattr(request.state, "resolved", False):
            found = await self.app.store.call(self.principal, request.state.session)
            request.state.principal, request.state.resolved = found, True
        return self.current(request)

    def current(self, request: Request) -> Principal | None:
        """Return who the request acts for: as `resolve` found it (the routes call that first),
        else found now (in a storage thread, where a page is rendered off the loop)."""
        if not getattr(request.state, "resolved", False):
            request.state.principal = self.principal(request.state.session)
            request.state.resolved = True
        principal: Principal | None = request.state.principal
        return principal

    def api_key_ok(self, request: Request) -> bool:
        """Return whether the request carries a configured API key."""
        given = request.headers.get("x-api-key")
        auth = request.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            given = auth[7:].strip()
        if not given or not self.api_keys:
            return False
        return any(hmac.compare_digest(given.encode(), k.encode()) for k in self.api_keys)

    def metrics_ok(self, request: Request) -> bool:
        """Return whether the request may read /metrics.

        Anyone when FACTBOT_METRICS__PUBLIC; else the metrics token or a dashboard API key as a
        bearer, or a signed-in admin. The open mode lets everyone in only while no metrics
        token is set: setting one means the operator wants it required.
        """
        settings = self.app.settings.metrics
        if settings.public:
            return True
        auth = request.headers.get("authorization", "")
        given = auth[7:].strip() if auth.lower().startswith("bearer ") else ""
        token = settings.token.get_secret_value() if settings.token else ""
        if token and given and hmac.compare_digest(given.encode(), token.encode()):
            return True
        if self.api_key_ok(request):
            return True
        principal = self.principal(request.state.session)
        if principal is None or not principal.may("admin"):
            return False
        return not (principal.local and token)

    def checks_public(self) -> bool:
        """Return whether anyone may read checks without signing in."""
        return self.app.settings.dashboard.public_checks
