"""Dashboard operators: names, roles and argon2 password hashes, and the sign-in attempts.

A password is never stored, only its argon2id hash (argon2-cffi's defaults, RFC 9106's second
recommended profile); `verify` rehashes on sign-in when those parameters change. A name that
does not exist is verified against a dummy hash so that the answer takes as long either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal, cast

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError
from sqlite_utils import Database

from pipeline.clock import SYSTEM, Clock
from pipeline.errors import InputError
from storage.codec import dt_in, dt_out
from storage.tx import immediate

Role = Literal["viewer", "reviewer", "admin"]
ROLES: tuple[Role, ...] = ("viewer", "reviewer", "admin")  # each may do what those before may
MIN_PASSWORD = 10

_hasher = PasswordHasher()
_DUMMY = _hasher.hash("a password no one has")


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
        with immediate(self.db):
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
        with immediate(self.db):
            cursor = self.db.execute("UPDATE users SET disabled = 1 WHERE name = ?", [name])
        return cursor.rowcount == 1

    def verify(self, name: str, password: str) -> User | None:
        """Return the user when the password is theirs and they may sign in, else None."""
        row = self.db.execute(
            "SELECT password_hash, disabled FROM users WHERE name = ?", [name]
        ).fetchone()
        stored = str(row[0]) if row is not None else _DUMMY
        try:
            _hasher.verify(stored, password)
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return None
        if row is None or row[1]:
            return None
        if _hasher.check_needs_rehash(stored):
            with immediate(self.db):
                self.db.execute(
                    "UPDATE users SET password_hash = ? WHERE name = ?",
                    [_hasher.hash(password), name],
                )
        return self.get(name)

    def record_attempt(self, name: str, address: str, *, ok: bool) -> None:
        """Note a sign-in attempt (names are cut to 64 characters)."""
        with immediate(self.db):
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
