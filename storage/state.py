"""Small durable state of adapters and the runtime, by key (the `kv` table).

What a restart must not forget and no other table holds: the hash of the slash-command
definitions last synced to Discord, a platform's mention cursor (`since_id`), the pseudonym key.
Keys are namespaced by their owner, e.g. ``discord:commands-hash``.
"""

from __future__ import annotations

from sqlite_utils import Database

from pipeline.util.clock import SYSTEM, Clock
from storage.codec import dt_out


class StateRepo:
    """Get and set small values by key."""

    def __init__(self, db: Database, *, clock: Clock = SYSTEM) -> None:
        self.db = db
        self.clock = clock

    def get(self, key: str) -> str | None:
        """Return the value stored under key, or None."""
        row = self.db.execute("SELECT value FROM kv WHERE key = ?", [key]).fetchone()
        return None if row is None else str(row[0])

    def set(self, key: str, value: str) -> None:
        """Store value under key (replacing what was there)."""
        self.db.execute(
            "INSERT INTO kv (key, value, updated_at) VALUES (?,?,?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value, "
            "updated_at = excluded.updated_at",
            [key, value, dt_out(self.clock.now())],
        )

    def set_if_absent(self, key: str, value: str) -> str:
        """Store value under key unless one exists; return the value that is stored."""
        self.db.execute(
            "INSERT OR IGNORE INTO kv (key, value, updated_at) VALUES (?,?,?)",
            [key, value, dt_out(self.clock.now())],
        )
        stored = self.get(key)
        assert stored is not None
        return stored

    def delete(self, key: str) -> None:
        """Forget key."""
        self.db.execute("DELETE FROM kv WHERE key = ?", [key])
