"""The local evidence index: documents, their passages, FTS5 and stored embeddings.

Embeddings are L2-normalised float32 vectors stored as blobs; `vectors()` loads them into one
matrix that is cached until the passages change (this object's writes, or another connection's
commit seen through `PRAGMA data_version`). The name of the model that made the vectors is kept
in the kv table: vectors of two models never mix silently (`require_model`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlite_utils import Database

from pipeline.errors import EmbeddingMismatchError
from pipeline.evidence.chunking import embedding_input
from pipeline.ports import UpsertStatus, VectorTable
from pipeline.records.domain import Document, Passage, document_id_for, utcnow
from storage.codec import claim_review_out, document_from_row, dt_out
from storage.tx import immediate

__all__ = ["DocumentIndex", "IndexStats", "VectorTable", "document_id_for"]

MODEL_KEY = "index:embedding-model"  # in the kv table (storage/state.py)
LEGACY_MODEL = "all-MiniLM-L6-v2"
_PROBE = 4  # a bounded full-text query ranks this many times its limit before filtering


@dataclass(frozen=True)
class IndexStats:
    """Counts and sizes of the index."""

    documents: int
    passages: int
    fact_checks: int
    domains: int


class DocumentIndex:
    """Documents and passages with full-text and vector search."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._vectors: VectorTable | None = None
        self._vectors_key: tuple[int, int] | None = None
        self._generation = 0  # bumped by every write of this object to the passages

    def stored_hash(self, url: str) -> str | None:
        """Return the content hash stored for url, or None when it is not indexed."""
        row = self.db.execute("SELECT content_hash FROM documents WHERE url = ?", [url]).fetchone()
        return str(row[0]) if row else None

    def upsert(
        self,
        document: Document,
        passages: Sequence[tuple[str, npt.NDArray[np.float32]]],
        *,
        content_hash: str,
        extra: dict[str, Any] | None = None,
    ) -> UpsertStatus:
        """Store a document and its embedded passages in one transaction."""
        previous = self.stored_hash(document.url)
        if previous == content_hash:
            return "unchanged"
        row = {
            "id": document.id,
            "url": document.url,
            "domain": document.domain,
            "title": document.title,
            "text": document.text,
            "published_at": dt_out(document.published_at),
            "fetched_at": dt_out(document.fetched_at),
            "publisher": document.publisher,
            "content_hash": content_hash,
            "claim_review": claim_review_out(document.claim_review),
            "extra": json.dumps(extra or {}, default=str),
            "ingested_at": dt_out(utcnow()),
        }
        self._generation += 1
        try:
            self._write(document, passages, row, replace=previous is not None)
        finally:
            self._generation += 1  # a matrix loaded while the write was open is stale too
        return "updated" if previous is not None else "added"

    def _write(
        self,
        document: Document,
        passages: Sequence[tuple[str, npt.NDArray[np.float32]]],
        row: dict[str, Any],
        *,
        replace: bool,
    ) -> None:
        with immediate(self.db):
            if replace:
                old_id = self.db.execute(
                    "SELECT id FROM documents WHERE url = ?", [document.url]
                ).fetchone()[0]
                self.db.execute("DELETE FROM passages WHERE document_id = ?", [old_id])
                self.db.execute("DELETE FROM documents WHERE id = ?", [old_id])
            self.db.table("documents").insert(row)
            self.db.conn.executemany(
                "INSERT INTO passages (document_id, position, text, embedding) VALUES (?,?,?,?)",
                [
                    (document.id, position, text, np.asarray(vec, dtype=np.float32).tobytes())
                    for position, (text, vec) in enumerate(passages)
                ],
            )

    def embedding_model(self) -> str | None:
        """Return the name of the model that made the stored vectors (None: no vectors yet).

        An index filled before models were recorded was made by the torch all-MiniLM-L6-v2,
        the only embedder then.
        """
        row = self.db.execute("SELECT value FROM kv WHERE key = ?", [MODEL_KEY]).fetchone()
        if row is not None:
            return str(row[0])
        if self.db.execute("SELECT 1 FROM passages LIMIT 1").fetchone() is not None:
            return LEGACY_MODEL
        return None

    def require_model(self, model: str, *, record: bool = False) -> None:
        """Raise EmbeddingMismatchError unless the stored vectors are model's; with record,
        name model as the index's model when it has none yet."""
        stored = self.embedding_model()
        if stored is None:
            if record:
                self._set_model(model)
            return
        if stored != model:
            raise EmbeddingMismatchError(stored, model)

    def _set_model(self, model: str) -> None:
        self.db.execute(
            "INSERT INTO kv (key, value, updated_at) VALUES (?,?,?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value, "
            "updated_at = excluded.updated_at",
            [MODEL_KEY, model, dt_out(utcnow())],
        )

    def passage_texts(self, *, after: int, limit: int) -> list[tuple[int, str]]:
        """Return (passage id, embedding input) of up to limit passages with ids above after."""
        rows = self.db.execute(
            "SELECT passages.id, documents.title, passages.text FROM passages "
            "JOIN documents ON documents.id = passages.document_id "
            "WHERE passages.id > ? ORDER BY passages.id LIMIT ?",
            [after, limit],
        ).fetchall()
        return [(int(r[0]), embedding_input(r[1], r[2])) for r in rows]

    def replace_vectors(self, ids: Sequence[int], vectors: npt.NDArray[np.float32]) -> None:
        """Overwrite the stored vectors of the passages ids, in one transaction."""
        self._generation += 1
        with immediate(self.db):
            self.db.conn.executemany(
                "UPDATE passages SET embedding = ? WHERE id = ?",
                [
                    (np.asarray(v, dtype=np.float32).tobytes(), int(i))
                    for i, v in zip(ids, vectors, strict=True)
                ],
            )
        self._generation += 1

    def set_model(self, model: str) -> None:
        """Name model as the one that made every stored vector (after a full re-embed)."""
        self._set_model(model)

    def get(self, document_id: str) -> Document | None:
        """Return one document by id."""
        rows = list(self.db.query("SELECT * FROM documents WHERE id = ?", [document_id]))
        return document_from_row(rows[0]) if rows else None

    def by_url(self, url: str) -> Document | None:
        """Return one document by URL."""
        rows = list(self.db.query("SELECT * FROM documents WHERE url = ?", [url]))
        return document_from_row(rows[0]) if rows else None

    def documents_with_reviews(self) -> list[Document]:
        """Return every document that carries a ClaimReview."""
        rows = self.db.query("SELECT * FROM documents WHERE claim_review IS NOT NULL")
        return [document_from_row(r) for r in rows]

    def search_text(
        self,
        match: str,
        *,
        limit: int,
        before: datetime | None = None,
        undated_only: bool = False,
        trigram: bool = False,
    ) -> list[tuple[int, float]]:
        """Run an FTS5 MATCH query; return (passage id, bm25 score) best first.

        trigram: search the trigram table (m026) instead of the word table.
        """
        table = "passages_trigram" if trigram else "passages_fts"
        if before is None and not undated_only:
            # FTS5 alone: joining documents first made every query ~3.5x slower (each of the
            # thousands of matching rows was joined before ranking; `python -m bench.retrieval`).
            return self._rank_text(match, limit, table)
        found = self._search_text_bounded(
            match, limit=limit, before=before, undated=undated_only, fts=table
        )
        if found is not None:
            return found
        sql = (
            "SELECT hits.rowid, hits.score FROM ("
            f"SELECT rowid, bm25({table}) AS score FROM {table} "
            f"WHERE {table} MATCH ?) AS hits "
            "JOIN passages ON passages.id = hits.rowid "
            "JOIN documents ON documents.id = passages.document_id"
        )
        params: list[Any] = [match]
        if undated_only:
            sql += " WHERE documents.published_at IS NULL"
        else:
            sql += " WHERE documents.published_at IS NOT NULL AND documents.published_at < ?"
            params.append(dt_out(before))
        sql += " ORDER BY hits.score LIMIT ?"
        params.append(limit)
        return [(int(r[0]), float(r[1])) for r in self.db.execute(sql, params).fetchall()]

    def _rank_text(
        self, match: str, limit: int, table: str = "passages_fts"
    ) -> list[tuple[int, float]]:
        """Return the best FTS5 matches, (passage id, bm25 score) best first, ranked alone."""
        rows = self.db.execute(
            f"SELECT rowid, bm25({table}) AS score FROM {table} "
            f"WHERE {table} MATCH ? ORDER BY score LIMIT ?",
            [match, limit],
        ).fetchall()
        return [(int(r[0]), float(r[1])) for r in rows]

    def _search_text_bounded(
        self,
        match: str,
        *,
        limit: int,
        before: datetime | None,
        undated: bool,
        fts: str = "passages_fts",
    ) -> list[tuple[int, float]] | None:
        """Rank with FTS5 alone, then apply the time bound from the in-memory vector table.

        Joining every match to its document before ranking is what makes a bounded query slow
        (`factbot bench retrieval --before`), and every check's query is bounded (by the post's
        time). The best `PROBE x limit` matches are ranked alone and filtered by the publication
        times the dense search loads anyway: when `limit` of them pass, or FTS5 had no more
        matches, that is exactly the joined query's answer. Else (a bound that drops most
        matches) return None, and the joined query runs.
        """
        probe = limit * _PROBE
        rows = self._rank_text(match, probe, fts)
        if not rows:
            return []
        table = self.vectors()
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        at = np.minimum(np.searchsorted(table.ids, ids), max(0, len(table.ids) - 1))
        if not len(table.ids) or (table.ids[at] != ids).any():
            return None  # the table and the FTS index disagree (a write in between): ask SQL
        published = table.published[at]
        if undated:
            keep = np.isnan(published)
        else:
            assert before is not None
            bound = (before if before.tzinfo else before.replace(tzinfo=UTC)).timestamp()
            keep = published < bound  # NaN (undated) compares False, as IS NOT NULL does
        kept = [row for row, k in zip(rows, keep, strict=True) if k]
        if len(kept) >= limit or len(rows) < probe:
            return kept[:limit]
        return None

    def _change_key(self) -> tuple[int, int]:
        # data_version moves when another connection commits; this connection's own writes go
        # through upsert, which bumps the generation (a count(*) here cost ~10 ms a query).
        version = self.db.execute("PRAGMA data_version").fetchone()[0]
        return int(version), self._generation

    def vectors(self) -> VectorTable:
        """Return every passage embedding (cached until the passages change)."""
        key = self._change_key()
        if self._vectors is not None and self._vectors_key == key:
            return self._vectors
        rows = self.db.execute(
            "SELECT passages.id, passages.embedding, documents.published_at FROM passages "
            "JOIN documents ON documents.id = passages.document_id ORDER BY passages.id"
        ).fetchall()
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        if rows:
            matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32)
            matrix = matrix.reshape(len(rows), -1)
        else:
            matrix = np.zeros((0, 0), dtype=np.float32)
        published = np.array(
            [datetime.fromisoformat(r[2]).timestamp() if r[2] else np.nan for r in rows],
            dtype=np.float64,
        )
        self._vectors = VectorTable(ids=ids, matrix=matrix, published=published)
        self._vectors_key = key
        return self._vectors

    def passages(self, ids: Iterable[int]) -> dict[int, tuple[Passage, Document]]:
        """Return passages with their documents, keyed by passage id."""
        wanted = list(dict.fromkeys(int(i) for i in ids))
        if not wanted:
            return {}
        marks = ",".join("?" * len(wanted))
        rows = self.db.query(
            "SELECT passages.id AS passage_id, passages.position AS passage_position, "
            "passages.text AS passage_text, documents.* FROM passages "
            f"JOIN documents ON documents.id = passages.document_id WHERE passages.id IN ({marks})",
            wanted,
        )
        found: dict[int, tuple[Passage, Document]] = {}
        documents: dict[str, Document] = {}
        for row in rows:
            doc = documents.get(row["id"]) or document_from_row(row)
            documents[doc.id] = doc
            passage = Passage(
                id=str(row["passage_id"]),
                document_id=doc.id,
                position=row["passage_position"],
                text=row["passage_text"],
            )
            found[int(row["passage_id"])] = (passage, doc)
        return found

    def document_count(self) -> int:
        """Return how many documents the index holds (what every check records; one count)."""
        return int(self.db.execute("SELECT count(*) FROM documents").fetchone()[0])

    def stats(self) -> IndexStats:
        """Return counts for the index."""
        docs, reviews, domains = self.db.execute(
            "SELECT count(*), count(claim_review), count(DISTINCT domain) FROM documents"
        ).fetchone()
        passages = self.db.execute("SELECT count(*) FROM passages").fetchone()[0]
        return IndexStats(
            documents=int(docs),
            passages=int(passages),
            fact_checks=int(reviews),
            domains=int(domains),
        )
