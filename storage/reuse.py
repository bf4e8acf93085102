"""Fingerprints of finished checks, so a repeated or near-duplicate post reuses a stored answer.

One row a check (`check_id` is unique, so recording a check twice changes nothing): the post's
platform and platform id, the hash of its normalised text, the hash of its normalised claim set,
its evidence bound and an L2-normalised float32 embedding. Times are ISO 8601 in UTC (`dt_out`),
which sort as text, so `created_at` comparisons run on the index.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlite_utils import Database

from storage.codec import dt_in, dt_out
from storage.tx import immediate


@dataclass(frozen=True)
class Fingerprint:
    """What identifies one finished check's post, for reuse look-ups."""

    check_id: str
    platform: str
    platform_id: str
    text_hash: str | None  # None when nothing is left of the text after normalisation
    claims_hash: str | None  # None when the heuristic extractor finds no claim
    numbers: frozenset[str]  # the tokens with a digit in the normalised text
    before: datetime | None  # the check's own bound (Check.before)
    bound_at: datetime  # the bound its evidence effectively had (see bots.runtime.checking.reuse)
    created_at: datetime
    model: str  # the embedder's name: vectors of different models are never compared
    embedding: npt.NDArray[np.float32] | None = None


@dataclass(frozen=True)
class FingerprintVectors:
    """Embedded fingerprints newer than a sequence number, as arrays."""

    seq: npt.NDArray[np.int64]
    check_ids: tuple[str, ...]
    numbers: tuple[frozenset[str], ...]
    created: npt.NDArray[np.float64]  # POSIX seconds
    bound: npt.NDArray[np.float64]  # POSIX seconds
    matrix: npt.NDArray[np.float32]  # one row a fingerprint; shape (0, 0) when empty


_COLUMNS = (
    "check_id, platform, platform_id, text_hash, claims_hash, numbers, before, bound_at, created_at"
)
_INSERT = (
    f"INSERT OR IGNORE INTO reuse_fingerprints ({_COLUMNS}, model, embedding) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class ReuseRepo:
    """Store fingerprints and find them by exact key or load their vectors."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def add(self, fp: Fingerprint) -> bool:
        """Store a fingerprint; return False when the check already has one."""
        return bool(self.db.execute(_INSERT, _row(fp)).rowcount)

    def add_all(self, fps: Sequence[Fingerprint]) -> int:
        """Store many fingerprints in one transaction; return how many were new."""
        with immediate(self.db):
            before = self.count()
            self.db.conn.executemany(_INSERT, [_row(fp) for fp in fps])
            return self.count() - before

    def exact(
        self,
        *,
        post: tuple[str, str] | None,
        text_hash: str | None,
        claims_hash: str | None,
        since: datetime,
        limit: int = 50,
    ) -> list[Fingerprint]:
        """Return fingerprints created at or after since that share the post, text or claims.

        `post` is (platform, platform_id); None leaves the same-post condition out.
        """
        conditions: list[str] = []
        params: list[Any] = []
        if post is not None:
            conditions.append("(platform = ? AND platform_id = ?)")
            params.extend(post)
        if text_hash is not None:
            conditions.append("text_hash = ?")
            params.append(text_hash)
        if claims_hash is not None:
            conditions.append("claims_hash = ?")
            params.append(claims_hash)
        if not conditions:
            return []
        rows = self.db.execute(
            f"SELECT {_COLUMNS}, model FROM reuse_fingerprints "
            f"WHERE created_at >= ? AND ({' OR '.join(conditions)}) "
            "ORDER BY created_at DESC LIMIT ?",
            [dt_out(since), *params, limit],
        ).fetchall()
        return [_fingerprint(row) for row in rows]

    def get(self, check_id: str) -> Fingerprint | None:
        """Return the fingerprint of one check, with its embedding."""
        row = self.db.execute(
            f"SELECT {_COLUMNS}, model, embedding FROM reuse_fingerprints WHERE check_id = ?",
            [check_id],
        ).fetchone()
        if row is None:
            return None
        embedding = None if row[10] is None else np.frombuffer(row[10], dtype=np.float32).copy()
        return _fingerprint(row[:10], embedding)

    def vectors_after(self, seq: int, *, since: datetime, model: str) -> FingerprintVectors:
        """Return embedded fingerprints of model with a sequence number above seq, since since."""
        rows = self.db.execute(
            "SELECT seq, check_id, created_at, bound_at, embedding, numbers "
            "FROM reuse_fingerprints WHERE seq > ? AND created_at >= ? AND model = ? "
            "AND embedding IS NOT NULL "
            "ORDER BY seq",
            [seq, dt_out(since), model],
        ).fetchall()
        if not rows:
            empty = np.zeros(0, dtype=np.float64)
            return FingerprintVectors(
                seq=np.zeros(0, dtype=np.int64),
                check_ids=(),
                numbers=(),
                created=empty,
                bound=empty,
                matrix=np.zeros((0, 0), dtype=np.float32),
            )
        matrix = np.frombuffer(b"".join(r[4] for r in rows), dtype=np.float32)
        return FingerprintVectors(
            seq=np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)),
            check_ids=tuple(r[1] for r in rows),
            numbers=tuple(_numbers_in(r[5]) for r in rows),
            created=_timestamps(r[2] for r in rows),
            bound=_timestamps(r[3] for r in rows),
            matrix=matrix.reshape(len(rows), -1),
        )

    def prune(self, *, before: datetime) -> int:
        """Delete fingerprints created before a time; return how many went."""
        cursor = self.db.execute(
            "DELETE FROM reuse_fingerprints WHERE created_at < ?", [dt_out(before)]
        )
        return int(cursor.rowcount)

    def count(self) -> int:
        """Return how many fingerprints are stored."""
        return int(self.db.execute("SELECT count(*) FROM reuse_fingerprints").fetchone()[0])


def _row(fp: Fingerprint) -> list[Any]:
    blob = None if fp.embedding is None else np.asarray(fp.embedding, np.float32).tobytes()
    return [
        fp.check_id,
        fp.platform,
        fp.platform_id,
        fp.text_hash,
        fp.claims_hash,
        " ".join(sorted(fp.numbers)),
        dt_out(fp.before),
        dt_out(fp.bound_at),
        dt_out(fp.created_at),
        fp.model,
        blob,
    ]


def _numbers_in(value: str) -> frozenset[str]:
    return frozenset(value.split())


def _timestamps(values: Any) -> npt.NDArray[np.float64]:
    return np.array([datetime.fromisoformat(v).timestamp() for v in values], dtype=np.float64)


def _fingerprint(
    row: Sequence[Any], embedding: npt.NDArray[np.float32] | None = None
) -> Fingerprint:
    bound_at, created_at = dt_in(row[7]), dt_in(row[8])
    if bound_at is None or created_at is None:
        raise ValueError(f"fingerprint of check {row[0]} has no bound or creation time")
    return Fingerprint(
        check_id=row[0],
        platform=row[1],
        platform_id=row[2],
        text_hash=row[3],
        claims_hash=row[4],
        numbers=_numbers_in(row[5]),
        before=dt_in(row[6]),
        bound_at=bound_at,
        created_at=created_at,
        model=row[9],
        embedding=embedding,
    )
