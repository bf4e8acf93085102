"""The local evidence index: documents, their passages, FTS5 and stored embeddings.

Embeddings are L2-normalised float32 vectors stored as blobs; `vectors()` loads them into one
matrix that is cached until the passages table changes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import numpy.typing as npt
from sqlite_utils import Database

from pipeline.ports import UpsertStatus, VectorTable
from pipeline.records import Document, Passage, document_id_for, utcnow
from storage.codec import claim_review_out, document_from_row, dt_out
from storage.tx import immediate

__all__ = ["DocumentIndex", "IndexStats", "VectorTable", "document_id_for"]


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
        self._vectors_key: tuple[int, int, int] | None = None

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
        with immediate(self.db):
            if previous is not None:
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
        return "updated" if previous is not None else "added"

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
    ) -> list[tuple[int, float]]:
        """Run an FTS5 MATCH query; return (passage id, bm25 score) best first."""
        sql = (
            "SELECT passages_fts.rowid, bm25(passages_fts) AS score FROM passages_fts "
            "JOIN passages ON passages.id = passages_fts.rowid "
            "JOIN documents ON documents.id = passages.document_id "
            "WHERE passages_fts MATCH ?"
        )
        params: list[Any] = [match]
        if undated_only:
            sql += " AND documents.published_at IS NULL"
        elif before is not None:
            sql += " AND documents.published_at IS NOT NULL AND documents.published_at < ?"
            params.append(dt_out(before))
        sql += " ORDER BY score LIMIT ?"
        params.append(limit)
        return [(int(r[0]), float(r[1])) for r in self.db.execute(sql, params).fetchall()]

    def _change_key(self) -> tuple[int, int, int]:
        count, max_id = self.db.execute(
            "SELECT count(*), coalesce(max(id), 0) FROM passages"
        ).fetchone()
        version = self.db.execute("PRAGMA data_version").fetchone()[0]
        return int(count), int(max_id), int(version)

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
