"""Call limits an API client keeps for itself, shared by every process on one database.

A peer such as X's Community Notes API documents its limits (90 requests in 15 minutes across
its endpoints, 250 notes a day) and counts them per credentials, not per process: every job and
every worker process that signs with the same keys draws from one allowance. So the windows
live here, in the shared store (SQLite or PostgreSQL), under the credentials' identity (a hash,
never the keys), one `kv` row per window:

    limits:<owner>:<window>  ->  {"at": [epoch seconds of the calls in the window],
                                  "reset": epoch seconds before which nothing may be sent}

`admit` counts a call in every window that applies, or in none: it answers 0 and records the
call, or answers how long to wait (the oldest call leaving a full window, or a reset still
ahead). A window is a sliding log, so no span of its length ever holds more calls than its
limit, however the peer aligns its own windows. `block` records a reset the peer announced (a
429, or a response saying none is left), which every other caller then waits out.

Time is epoch seconds given by the caller (what the peer's `x-rate-limit-reset` counts in), so
tests move it by hand. Read-then-write transactions take the `call-limits` scope's lock on
PostgreSQL and SQLite's write lock (storage/tx.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlite_utils import Database

from pipeline.util.clock import SYSTEM, Clock
from storage.codec import dt_out
from storage.tx import immediate

SCOPE = "call-limits"


@dataclass(frozen=True)
class Window:
    """At most `limit` calls in any `seconds`, under one name (e.g. "notes")."""

    name: str
    limit: int
    seconds: float


@dataclass(frozen=True)
class Usage:
    """One window's calls now, and when the next call may go."""

    name: str
    used: int
    limit: int
    wait: float  # seconds until a call may go (0: now)


class CallLimits:
    """The windows and resets of an API client, by owner (a credentials hash)."""

    def __init__(self, db: Database, *, clock: Clock = SYSTEM) -> None:
        self.db = db
        self.clock = clock  # stamps updated_at only; the windows read the caller's time

    def admit(
        self, owner: str, windows: Sequence[Window], now: float, *, resets: Sequence[str] = ()
    ) -> float:
        """Record one call in every window and return 0, or return the seconds to wait (and
        record nothing) when a window is full or a reset of `windows` or `resets` is ahead."""
        names = list(dict.fromkeys([*(w.name for w in windows), *resets]))
        if not names:
            return 0.0
        with immediate(self.db, scope=SCOPE):
            states = {name: self._read(owner, name) for name in names}
            wait = max(max(0.0, float(s.get("reset") or 0.0) - now) for s in states.values())
            for window in windows:
                recent = sorted(t for t in states[window.name]["at"] if t > now - window.seconds)
                states[window.name]["at"] = recent
                if len(recent) >= window.limit:
                    wait = max(wait, recent[len(recent) - window.limit] + window.seconds - now)
            if wait > 0:
                return wait
            for window in windows:
                states[window.name]["at"].append(now)
                self._write(owner, window.name, states[window.name])
        return 0.0

    def block(self, owner: str, name: str, until: float) -> None:
        """Make every caller of window `name` wait until `until` (epoch seconds)."""
        with immediate(self.db, scope=SCOPE):
            state = self._read(owner, name)
            if float(state.get("reset") or 0.0) < until:
                state["reset"] = until
                self._write(owner, name, state)

    def usage(self, owner: str, window: Window, now: float) -> Usage:
        """Return how many calls `window` holds now and how long the next one must wait."""
        state = self._read(owner, window.name)
        recent = sorted(t for t in state["at"] if t > now - window.seconds)
        wait = max(0.0, float(state.get("reset") or 0.0) - now)
        if len(recent) >= window.limit:
            wait = max(wait, recent[len(recent) - window.limit] + window.seconds - now)
        return Usage(window.name, len(recent), window.limit, wait)

    def _read(self, owner: str, name: str) -> dict[str, Any]:
        row = self.db.execute("SELECT value FROM kv WHERE key = ?", [_key(owner, name)]).fetchone()
        state: dict[str, Any] = json.loads(row[0]) if row else {}
        state["at"] = [float(t) for t in state.get("at") or []]
        return state

    def _write(self, owner: str, name: str, state: dict[str, Any]) -> None:
        self.db.execute(
            "INSERT INTO kv (key, value, updated_at) VALUES (?,?,?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value, "
            "updated_at = excluded.updated_at",
            [_key(owner, name), json.dumps(state), dt_out(self.clock.now())],
        )


def _key(owner: str, name: str) -> str:
    return f"limits:{owner}:{name}"
