"""Write transactions that take SQLite's write lock at once (BEGIN IMMEDIATE).

A deferred transaction that reads before it writes can fail with SQLITE_BUSY when another
process wrote in between, and busy_timeout does not retry that case; workers in several
processes share one database, so every read-then-write transaction of the queue is immediate.
Inside an open transaction it nests as a savepoint (sqlite-utils' `atomic`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlite_utils import Database


@contextmanager
def immediate(db: Database) -> Iterator[Database]:
    """Run the block in one transaction holding the write lock from its start."""
    if db.conn.in_transaction:
        with db.atomic():
            yield db
        return
    db.conn.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        if db.conn.in_transaction:
            db.conn.execute("ROLLBACK")
        raise
    else:
        db.conn.execute("COMMIT")
