"""The fact-check index (`pipeline.ports.FactCheckIndex`): published reviews, their vectors, search.

One `fact_checks` row a review, keyed by its URL, with an integer id the matcher's matrices are
indexed by; `fact_check_vectors` holds one float32 blob per (review, embedding model); the
search table is FTS5 in SQLite and a 'simple' tsvector in PostgreSQL (m029, p006), both kept
in step by triggers. Times are ISO 8601 in UTC (`dt_out`).

Every write of a batch takes the next `revision` (under the write lock, so two writers never
share one), every removal counts itself in the kv table (`REMOVALS_KEY`), and the pass that
fills in a model's missing vectors counts its publications there too (`VECTORS_KEY`, moved by
`publish_fact_check_vectors`, not by each batch: every move costs a running matcher a new
snapshot); `fact_check_key` is (highest revision, removals, publications), which any add,
change, removal or published vectors move, from this process or another, on either engine. It
is read for every match, so it is two look-ups on indexes and no count of the rows (a COUNT(*)
over 200,000 reviews took 7 ms in SQLite).

The reviews without a model's vector are found by an anti-join on `fact_check_vectors`' primary
key (fact_check_id, model), in id order after a given id: one index probe a review, so a pass
over 200,000 reviews lists them in batches without a scan per batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlite_utils import Database

from pipeline.ports import FactCheckVectors, UpsertStatus
from pipeline.records.domain import Label, utcnow
from pipeline.records.factchecks import FactCheck
from storage.browse import match_expression, tsquery_expression
from storage.codec import dt_in, dt_out
from storage.tx import immediate

_CHUNK = 500  # ids or URLs in one IN (...) list
_FIELDS = (
    "url", "claim_reviewed", "publisher", "publisher_site", "headline", "claimant",
    "claim_date", "review_date", "language", "rating", "label", "license",
)  # fmt: skip
_UPSERT = (
    f"INSERT INTO fact_checks ({', '.join(_FIELDS)}, content_hash, revision, updated_at) "
    f"VALUES ({', '.join('?' * (len(_FIELDS) + 3))}) ON CONFLICT(url) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in (*_FIELDS[1:], "content_hash", "revision"))
    + ", updated_at = excluded.updated_at"
)
_SELECT = f"SELECT id, {', '.join(_FIELDS)} FROM fact_checks"


REMOVALS_KEY = "fact-checks:removals"  # in the kv table (storage/state.py)
VECTORS_KEY = "fact-checks:vectors"  # publications of vectors stored for existing reviews
_MISSING = (
    "NOT EXISTS (SELECT 1 FROM fact_check_vectors AS v "
    "WHERE v.fact_check_id = f.id AND v.model = ?)"
)


@dataclass(frozen=True)
class FactCheckStats:
    """How many reviews the index holds, by publisher and by language (None: unknown)."""

    total: int
    by_publisher: dict[str, int]
    by_language: dict[str | None, int]


class FactCheckRepo:
    """The fact-check index on either engine."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.pg = getattr(db, "dialect", "sqlite") == "postgresql"

    def stored_fact_check_hashes(self, urls: Sequence[str]) -> dict[str, str]:
        """Return the content hash stored for each of urls that is in the index."""
        found: dict[str, str] = {}
        for chunk in _chunks(list(dict.fromkeys(urls))):
            rows = self.db.execute(
                f"SELECT url, content_hash FROM fact_checks WHERE url IN ({_marks(chunk)})", chunk
            ).fetchall()
            found.update((str(url), str(digest)) for url, digest in rows)
        return found

    def upsert_fact_checks(
        self, rows: Sequence[tuple[FactCheck, str, Mapping[str, npt.NDArray[np.float32]]]]
    ) -> list[UpsertStatus]:
        """Store (review, content hash, vectors by model) rows in one transaction.

        A row whose hash is the stored one is left as it is ("unchanged"); a changed one has
        its vectors replaced by those given. A URL given twice: the last row is stored.
        """
        if not rows:
            return []
        statuses: list[UpsertStatus] = []
        now = dt_out(utcnow())
        with immediate(self.db):
            stored = self.stored_fact_check_hashes([fc.url for fc, _, _ in rows])
            revision = 1 + int(
                self.db.execute("SELECT COALESCE(MAX(revision), 0) FROM fact_checks").fetchone()[0]
            )
            written: list[list[Any]] = []
            vectors: dict[str, Mapping[str, npt.NDArray[np.float32]]] = {}
            for fact_check, digest, by_model in rows:
                previous = stored.get(fact_check.url)
                if previous == digest:
                    statuses.append("unchanged")
                    continue
                written.append([*_row(fact_check), digest, revision, now])
                vectors[fact_check.url] = by_model  # a URL given twice: the last row's
                stored[fact_check.url] = digest
                statuses.append("added" if previous is None else "updated")
            if written:
                self._write(written, vectors)
        return statuses

    def _write(
        self, rows: list[list[Any]], vectors: Mapping[str, Mapping[str, npt.NDArray[np.float32]]]
    ) -> None:
        self.db.conn.executemany(_UPSERT, rows)
        ids: dict[str, int] = {}
        for chunk in _chunks(list(vectors)):
            found = self.db.execute(
                f"SELECT url, id FROM fact_checks WHERE url IN ({_marks(chunk)})", chunk
            ).fetchall()
            ids.update((str(url), int(row_id)) for url, row_id in found)
        for chunk in _chunks(list(ids.values())):
            self.db.execute(
                f"DELETE FROM fact_check_vectors WHERE fact_check_id IN ({_marks(chunk)})", chunk
            )
        self.db.conn.executemany(
            "INSERT INTO fact_check_vectors (fact_check_id, model, vector) VALUES (?, ?, ?)",
            [
                (ids[url], model, np.asarray(vector, dtype=np.float32).tobytes())
                for url, by_model in vectors.items()
                for model, vector in by_model.items()
            ],
        )

    def remove_fact_checks(self, urls: Sequence[str]) -> int:
        """Remove the reviews of urls (their vectors and search rows with them); return how many."""
        removed = 0
        with immediate(self.db):
            for chunk in _chunks(list(dict.fromkeys(urls))):
                removed += self.db.execute(
                    f"DELETE FROM fact_checks WHERE url IN ({_marks(chunk)})", chunk
                ).rowcount
            if removed:
                self._count(REMOVALS_KEY)
        return removed

    def _count(self, key: str) -> None:
        self.db.execute(
            "INSERT INTO kv (key, value, updated_at) VALUES (?, ?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = "
            "CAST(CAST(kv.value AS INTEGER) + 1 AS TEXT), updated_at = excluded.updated_at",
            [key, "1", dt_out(utcnow())],
        )

    def fact_checks_missing_vector(
        self, model: str, *, after: int = 0, limit: int = 256
    ) -> list[tuple[int, str]]:
        """Return (id, content hash) of the first `limit` reviews after id `after` that have
        no vector of model, in id order."""
        rows = self.db.execute(
            f"SELECT f.id, f.content_hash FROM fact_checks AS f WHERE f.id > ? AND {_MISSING} "
            "ORDER BY f.id LIMIT ?",
            [after, model, limit],
        ).fetchall()
        return [(int(row_id), str(digest)) for row_id, digest in rows]

    def count_missing_vectors(self, model: str) -> int:
        """Return how many reviews have no vector of model."""
        row = self.db.execute(
            f"SELECT COUNT(*) FROM fact_checks AS f WHERE {_MISSING}", [model]
        ).fetchone()
        return int(row[0])

    def store_fact_check_vectors(
        self, model: str, rows: Sequence[tuple[int, str, npt.NDArray[np.float32]]]
    ) -> int:
        """Store model's vector of each (id, content hash) review still stored with that hash
        and still without one, in one transaction; return how many were stored.

        The change key does not move (`publish_fact_check_vectors` moves it): a matcher whose
        snapshot lacks these vectors reads them for its candidates, or ranks without them.
        """
        if not rows:
            return 0
        with immediate(self.db):
            current: dict[int, str] = {}
            have: set[int] = set()
            for chunk in _chunks(list(dict.fromkeys(int(row_id) for row_id, _, _ in rows))):
                found = self.db.execute(
                    f"SELECT id, content_hash FROM fact_checks WHERE id IN ({_marks(chunk)})",
                    chunk,
                ).fetchall()
                current.update((int(row_id), str(digest)) for row_id, digest in found)
                done = self.db.execute(
                    "SELECT fact_check_id FROM fact_check_vectors "
                    f"WHERE model = ? AND fact_check_id IN ({_marks(chunk)})",
                    [model, *chunk],
                ).fetchall()
                have.update(int(r[0]) for r in done)
            written: dict[int, bytes] = {}
            for row_id, digest, vector in rows:
                if current.get(int(row_id)) == digest and int(row_id) not in have:
                    written[int(row_id)] = np.asarray(vector, dtype=np.float32).tobytes()
            if written:
                self.db.conn.executemany(
                    "INSERT INTO fact_check_vectors (fact_check_id, model, vector) "
                    "VALUES (?, ?, ?)",
                    [(row_id, model, blob) for row_id, blob in written.items()],
                )
        return len(written)

    def publish_fact_check_vectors(self) -> None:
        """Move the change key, so the matcher's next snapshot reads the vectors stored."""
        with immediate(self.db):
            self._count(VECTORS_KEY)

    def fact_check_key(self) -> tuple[int, ...]:
        """Return a key that changes whenever a review is added, changed or removed, or
        vectors stored for existing reviews are published."""
        revision = self.db.execute("SELECT COALESCE(MAX(revision), 0) FROM fact_checks").fetchone()
        counted = dict(
            self.db.execute(
                "SELECT key, value FROM kv WHERE key IN (?, ?)", [REMOVALS_KEY, VECTORS_KEY]
            ).fetchall()
        )
        return (
            int(revision[0]),
            int(counted.get(REMOVALS_KEY, 0)),
            int(counted.get(VECTORS_KEY, 0)),
        )

    def fact_check_count(self) -> int:
        """Return how many reviews the index holds."""
        return int(self.db.execute("SELECT COUNT(*) FROM fact_checks").fetchone()[0])

    def fact_check_texts(self) -> tuple[npt.NDArray[np.int64], list[str]]:
        """Return every row id with its matching text, in id order."""
        rows = self.db.execute(
            "SELECT id, claim_reviewed, headline FROM fact_checks ORDER BY id"
        ).fetchall()
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        texts = [
            FactCheck(url="", claim_reviewed=r[1], publisher="", headline=r[2]).matching_text()
            for r in rows
        ]
        return ids, texts

    def fact_check_languages(self) -> list[str | None]:
        """Return every review's language, in id order (as `fact_check_texts`)."""
        rows = self.db.execute("SELECT language FROM fact_checks ORDER BY id").fetchall()
        return [r[0] for r in rows]

    def fact_check_matrix(self, model: str) -> FactCheckVectors:
        """Return every stored vector of model, filled row by row into one matrix.

        Not cached here: the matcher keeps the matrix of its snapshot, and a second copy would
        double the index's largest allocation (200,000 reviews: 307 MB a model).
        """
        count, dim = self.db.execute(
            "SELECT COUNT(*), MAX(LENGTH(vector)) FROM fact_check_vectors WHERE model = ?",
            [model],
        ).fetchone()
        if not count:
            return FactCheckVectors(
                ids=np.zeros(0, dtype=np.int64), matrix=np.zeros((0, 0), dtype=np.float32)
            )
        ids = np.empty(int(count), dtype=np.int64)
        matrix = np.empty((int(count), int(dim) // 4), dtype=np.float32)
        rows = self.db.execute(
            "SELECT fact_check_id, vector FROM fact_check_vectors WHERE model = ? "
            "ORDER BY fact_check_id",
            [model],
        )
        n = 0
        for fact_check_id, blob in rows:
            if n == count:  # written since the count: the next snapshot takes it
                break
            ids[n] = fact_check_id
            matrix[n] = np.frombuffer(blob, dtype=np.float32)
            n += 1
        return FactCheckVectors(ids=ids[:n], matrix=matrix[:n])

    def fact_check_vectors(
        self, ids: Sequence[int], model: str
    ) -> dict[int, npt.NDArray[np.float32]]:
        """Return the stored vectors of model for ids (those that have one)."""
        found: dict[int, npt.NDArray[np.float32]] = {}
        for chunk in _chunks([int(i) for i in dict.fromkeys(ids)]):
            rows = self.db.execute(
                "SELECT fact_check_id, vector FROM fact_check_vectors "
                f"WHERE model = ? AND fact_check_id IN ({_marks(chunk)})",
                [model, *chunk],
            ).fetchall()
            found.update((int(i), np.frombuffer(blob, dtype=np.float32)) for i, blob in rows)
        return found

    def get_fact_checks(self, ids: Iterable[int]) -> dict[int, FactCheck]:
        """Return reviews by row id."""
        found: dict[int, FactCheck] = {}
        for chunk in _chunks([int(i) for i in dict.fromkeys(ids)]):
            rows = self.db.query(f"{_SELECT} WHERE id IN ({_marks(chunk)})", chunk)
            found.update((int(r["id"]), _fact_check(r)) for r in rows)
        return found

    def fact_check_by_url(self, url: str) -> tuple[int, FactCheck] | None:
        """Return the row id and review stored for url, or None."""
        rows = list(self.db.query(f"{_SELECT} WHERE url = ?", [url]))
        return (int(rows[0]["id"]), _fact_check(rows[0])) if rows else None

    def search_fact_checks(self, text: str, limit: int = 20) -> list[tuple[int, FactCheck]]:
        """Return the reviews whose claim, headline, claimant or publisher hold every word of
        text (the last one as a prefix), best first, with their row ids."""
        columns = ", ".join(f"f.{c}" for c in ("id", *_FIELDS))
        if self.pg:
            query = tsquery_expression(text)
            sql = (
                f"SELECT {columns} FROM fact_check_text AS t JOIN fact_checks AS f ON f.id = t.id "
                "WHERE t.tsv @@ to_tsquery('simple', ?) "
                "ORDER BY ts_rank(t.tsv, to_tsquery('simple', ?)) DESC, f.id LIMIT ?"
            )
            params: list[Any] = [query, query, limit]
        else:
            query = match_expression(text)
            sql = (
                f"SELECT {columns} FROM fact_check_text JOIN fact_checks AS f "
                "ON f.id = fact_check_text.rowid WHERE fact_check_text MATCH ? "
                "ORDER BY fact_check_text.rank, f.id LIMIT ?"
            )
            params = [query, limit]
        if query is None:
            return []
        return [(int(r["id"]), _fact_check(r)) for r in self.db.query(sql, params)]

    def fact_check_stats(self) -> FactCheckStats:
        """Return how many reviews are indexed, by publisher and by language."""
        total = int(self.db.execute("SELECT COUNT(*) FROM fact_checks").fetchone()[0])
        publishers = self.db.execute(
            "SELECT publisher, COUNT(*) FROM fact_checks GROUP BY publisher ORDER BY 2 DESC, 1"
        ).fetchall()
        languages = self.db.execute(
            "SELECT language, COUNT(*) FROM fact_checks GROUP BY language ORDER BY 2 DESC"
        ).fetchall()
        return FactCheckStats(
            total=total,
            by_publisher={str(p): int(n) for p, n in publishers},
            by_language={
                (str(lang) if lang is not None else None): int(n) for lang, n in languages
            },
        )


def rehash_fact_checks(db: Any) -> int:
    """Rewrite each stored hash of the old format (fields and models) in the new (fields only).

    A migration's step (m032, p009). The old hash was of the review as the feed gave it and the
    models that embedded it, which are those of its stored vectors; its language may be one the
    identifier filled in, so both the stored language and none are tried. A hash that matches
    neither is left: that review is embedded again by the next import, as a changed one.
    Returns how many hashes were rewritten.
    """
    from dataclasses import replace

    from pipeline.factchecks.loading import fact_check_hash, legacy_fact_check_hash

    after, rewritten, page = 0, 0, 2000
    select = f"SELECT id, content_hash, {', '.join(_FIELDS)} FROM fact_checks"
    while rows := list(db.query(f"{select} WHERE id > ? ORDER BY id LIMIT ?", [after, page])):
        after = int(rows[-1]["id"])
        models: dict[int, list[str]] = {}
        for chunk in _chunks([int(r["id"]) for r in rows]):
            found = db.execute(
                "SELECT fact_check_id, model FROM fact_check_vectors "
                f"WHERE fact_check_id IN ({_marks(chunk)})",
                chunk,
            ).fetchall()
            for row_id, model in found:
                models.setdefault(int(row_id), []).append(str(model))
        updates: list[tuple[str, int]] = []
        for row in rows:
            stored = _fact_check(row)
            fed = (stored, replace(stored, language=None)) if stored.language else (stored,)
            for fc in fed:
                if (
                    legacy_fact_check_hash(fc, models.get(int(row["id"]), []))
                    == row["content_hash"]
                ):
                    updates.append((fact_check_hash(fc), int(row["id"])))
                    break
        if updates:
            db.conn.executemany("UPDATE fact_checks SET content_hash = ? WHERE id = ?", updates)
        rewritten += len(updates)
    return rewritten


def _row(fc: FactCheck) -> list[Any]:
    return [
        fc.url, fc.claim_reviewed, fc.publisher, fc.publisher_site, fc.headline, fc.claimant,
        dt_out(fc.claim_date), dt_out(fc.review_date), fc.language, fc.rating,
        fc.label.value if fc.label is not None else None, fc.license,
    ]  # fmt: skip


def _fact_check(row: Mapping[str, Any]) -> FactCheck:
    return FactCheck(
        url=row["url"],
        claim_reviewed=row["claim_reviewed"],
        publisher=row["publisher"],
        publisher_site=row["publisher_site"],
        headline=row["headline"],
        claimant=row["claimant"],
        claim_date=dt_in(row["claim_date"]),
        review_date=dt_in(row["review_date"]),
        language=row["language"],
        rating=row["rating"],
        label=Label(row["label"]) if row["label"] else None,
        license=row["license"],
    )


def _chunks(values: list[Any]) -> Iterable[list[Any]]:
    return (values[i : i + _CHUNK] for i in range(0, len(values), _CHUNK))


def _marks(values: Sequence[Any]) -> str:
    return ", ".join("?" * len(values))
