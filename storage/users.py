"""Dashboard operators: names, roles and argon2 password hashes, and the sign-in attempts.

A password is never stored, only its argon2id hash (argon2-cffi's defaults, RFC 9106's second
recommended profile); `verify` rehashes on sign-in when those parameters change. A name that
does not exist is verified against a dummy hash so that the answer takes as long either way.

An invitation is a random 256-bit token handed to the invitee as a link; only its sha256 is
stored (a fast hash is enough for a random token: there is nothing to guess), with the name,
the role and when it expires. Accepting it sets the password and spends the token in one
transaction, so a link works once, whoever clicks first.
"""

from __future__ import annotations

import functools
import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal, cast

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from sqlite_utils import Database

from pipeline.errors import InputError
from pipeline.util.clock import SYSTEM, Clock
from storage.codec import dt_in, dt_out
from storage.tx import immediate

Role = Literal["viewer", "reviewer", "admin"]
ROLES: tuple[Role, ...] = ("viewer", "reviewer", "admin")  # each may do what those before may
MIN_PASSWORD = 10

_hasher = PasswordHasher()


@functools.cache
def _dummy() -> str:
    """A hash to verify against when the user does not exist (made once, on first sign-in:
    argon2 takes ~0.1 s, which every process would pay at import)."""
    return _hasher.hash("a password no one has")


@dataclass(frozen=True)
class User:
    """A dashboard operator."""

    name: str
    role: Role
    created_at: datetime
    disabled: bool = False


@dataclass(frozen=True)
class Attempt:
    """One sign-in attempt."""

    name: str
    address: str
    ok: bool
    at: datetime


@dataclass(frozen=True)
class Invite:
    """An invitation that may still be accepted."""

    name: str
    role: Role
    expires_at: datetime


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def check_name(name: str) -> str:
    """Return a valid user name, or raise InputError saying what is wrong."""
    if not (1 <= len(name) <= 64) or not all(c.isalnum() or c in "._-@" for c in name):
        raise InputError("a user name is 1-64 letters, digits or . _ - @")
    return name


class UserRepo:
    """Add, find and verify dashboard users."""

    def __init__(self, db: Database, *, clock: Clock = SYSTEM) -> None:
        self.db = db
        self.clock = clock

    def add(self, name: str, role: Role, password: str, *, replace: bool = False) -> User:
        """Store a user with the hash of password; replace=True sets a new role and password."""
        check_name(name)
        if role not in ROLES:
            raise InputError(f"role must be one of {', '.join(ROLES)}")
        if len(password) < MIN_PASSWORD:
            raise InputError(f"a password has at least {MIN_PASSWORD} characters")
        now = self.clock.now()
        row = [name, role, _hasher.hash(password), dt_out(now)]
        with immediate(self.db, scope="users"):
            if self.get(name) is not None and not replace:
                raise InputError(f"user {name!r} exists (use --replace to reset it)")
            self.db.execute(
                "INSERT INTO users (name, role, password_hash, created_at) VALUES (?,?,?,?) "
                "ON CONFLICT(name) DO UPDATE SET role = excluded.role, "
                "password_hash = excluded.password_hash, disabled = 0",
                row,
            )
        found = self.get(name)
        assert found is not None
        return found

    def get(self, name: str) -> User | None:
        """Return the user of this name, or None."""
        row = self.db.execute(
            "SELECT name, role, created_at, disabled FROM users WHERE name = ?", [name]
        ).fetchone()
        return None if row is None else _user(row)

    def all(self) -> list[User]:
        """Return every user, by name."""
        rows = self.db.execute(
            "SELECT name, role, created_at, disabled FROM users ORDER BY name"
        ).fetchall()
        return [_user(r) for r in rows]

    def count(self) -> int:
        """Return how many users can sign in."""
        return int(self.db.execute("SELECT count(*) FROM users WHERE disabled = 0").fetchone()[0])

    def disable(self, name: str) -> bool:
        """Stop a user from signing in; return False when there is no such user."""
        with immediate(self.db, scope="users"):
            cursor = self.db.execute("UPDATE users SET disabled = 1 WHERE name = ?", [name])
        return cursor.rowcount == 1

    def verify(self, name: str, password: str) -> User | None:
        """Return the user when the password is theirs and they may sign in, else None."""
        dummy = _dummy()  # made before the lookup: a first sign-in takes as long either way
        row = self.db.execute(
            "SELECT password_hash, disabled FROM users WHERE name = ?", [name]
        ).fetchone()
        stored = str(row[0]) if row is not None else dummy
        try:
            _hasher.verify(stored, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return None
        if row is None or row[1]:
            return None
        if _hasher.check_needs_rehash(stored):
            with immediate(self.db, scope="users"):
                self.db.execute(
                    "UPDATE users SET password_hash = ? WHERE name = ?",
                    [_hasher.hash(password), name],
                )
        return self.get(name)

    def invite(self, name: str, role: Role, *, hours: float = 48.0) -> str:
        """Store an invitation for a new user and return its one-time token (never stored)."""
        check_name(name)
        if role not in ROLES:
            raise InputError(f"role must be one of {', '.join(ROLES)}")
        if not 0 < hours <= 24 * 30:
            raise InputError("an invitation lasts more than 0 and at most 720 hours")
        if self.get(name) is not None:
            raise InputError(f"user {name!r} exists (reset it with users add --replace)")
        token = secrets.token_urlsafe(32)
        now = self.clock.now()
        with immediate(self.db, scope="users"):
            self.db.execute(
                "INSERT INTO invites (token_hash, name, role, created_at, expires_at) "
                "VALUES (?,?,?,?,?)",
                [_token_hash(token), name, role, dt_out(now), dt_out(now + timedelta(hours=hours))],
            )
        return token

    def invitation(self, token: str) -> Invite | None:
        """Return the invitation of a token when it is unused and has not expired, else None."""
        row = self.db.execute(
            "SELECT name, role, expires_at FROM invites "
            "WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?",
            [_token_hash(token), dt_out(self.clock.now())],
        ).fetchone()
        if row is None:
            return None
        return Invite(name=row[0], role=cast(Role, row[1]), expires_at=_dt(row[2]))

    def accept(self, token: str, password: str) -> User:
        """Spend an invitation: create its user with this password; raise InputError if not."""
        if len(password) < MIN_PASSWORD:
            raise InputError(f"a password has at least {MIN_PASSWORD} characters")
        hashed = _hasher.hash(password)  # before the transaction: it takes a while
        now = dt_out(self.clock.now())
        with immediate(self.db, scope="users"):
            cursor = self.db.execute(
                "UPDATE invites SET used_at = ? "
                "WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?",
                [now, _token_hash(token), now],
            )
            if cursor.rowcount != 1:
                raise InputError("this invitation link was used already, has expired or is wrong")
            name, role = self.db.execute(
                "SELECT name, role FROM invites WHERE token_hash = ?", [_token_hash(token)]
            ).fetchone()
            if self.get(name) is not None:
                raise InputError(f"user {name!r} exists already")
            self.db.execute(
                "INSERT INTO users (name, role, password_hash, created_at) VALUES (?,?,?,?)",
                [name, role, hashed, now],
            )
        found = self.get(name)
        assert found is not None
        return found

    def record_attempt(self, name: str, address: str, *, ok: bool) -> None:
        """Note a sign-in attempt (names are cut to 64 characters)."""
        with immediate(self.db, scope="users"):
            self.db.execute(
                "INSERT INTO login_attempts (name, address, ok, at) VALUES (?,?,?,?)",
                [name[:64], address[:64], int(ok), dt_out(self.clock.now())],
            )

    def attempts(self, *, limit: int = 50) -> list[Attempt]:
        """Return the latest sign-in attempts, newest first."""
        rows = self.db.execute(
            "SELECT name, address, ok, at FROM login_attempts ORDER BY id DESC LIMIT ?", [limit]
        ).fetchall()
        return [Attempt(r[0], r[1], bool(r[2]), _dt(r[3])) for r in rows]


def _dt(value: str) -> datetime:
    parsed = dt_in(value)
    assert parsed is not None
    return parsed


def _user(row: tuple[str, str, str, int]) -> User:
    return User(name=row[0], role=cast(Role, row[1]), created_at=_dt(row[2]), disabled=bool(row[3]))
