"""What the pipeline needs from storage, as Protocols it owns: it never imports `storage`.

`storage` implements them (`DocumentIndex`, `SourceTable`, `WebCache`); tests may pass any object
with these methods. Records that cross the boundary live in `pipeline.records.domain`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

from pipeline.records.domain import Document, Passage, Reachability, SourceRating
from pipeline.records.factchecks import FactCheck

UpsertStatus = Literal["added", "updated", "unchanged"]


@dataclass(frozen=True)
class VectorTable:
    """All passage embeddings in one matrix, with their ids and publication times."""

    ids: npt.NDArray[np.int64]
    matrix: npt.NDArray[np.float32]
    published: npt.NDArray[np.float64]  # POSIX seconds, NaN when unknown


class EvidenceIndex(Protocol):
    """The local evidence index: documents, passages, full-text and vector search."""

    def stored_hash(self, url: str) -> str | None:
        """Return the content hash stored for url, or None when it is not indexed."""
        ...

    def upsert(
        self,
        document: Document,
        passages: Sequence[tuple[str, npt.NDArray[np.float32]]],
        *,
        content_hash: str,
        extra: dict[str, Any] | None = None,
    ) -> UpsertStatus:
        """Store a document and its embedded passages in one transaction."""
        ...

    def get(self, document_id: str) -> Document | None:
        """Return one document by id."""
        ...

    def search_text(
        self,
        match: str,
        *,
        limit: int,
        before: datetime | None = None,
        undated_only: bool = False,
        trigram: bool = False,
    ) -> list[tuple[int, float]]:
        """Run a full-text query (on the trigram table with trigram); (passage id, score)."""
        ...

    def vectors(self) -> VectorTable:
        """Return every passage embedding."""
        ...

    def passages(self, ids: Iterable[int]) -> dict[int, tuple[Passage, Document]]:
        """Return passages with their documents, keyed by passage id."""
        ...

    def require_model(self, model: str, *, record: bool = False) -> None:
        """Raise EmbeddingMismatchError unless the stored vectors are model's (record: claim
        an index without vectors for model)."""
        ...

    def passage_texts(self, *, after: int, limit: int) -> list[tuple[int, str]]:
        """Return (passage id, embedding input) of up to limit passages with ids above after."""
        ...

    def replace_vectors(self, ids: Sequence[int], vectors: npt.NDArray[np.float32]) -> None:
        """Overwrite the stored vectors of the passages ids."""
        ...

    def set_model(self, model: str) -> None:
        """Name model as the one that made every stored vector."""
        ...


class RatingTable(Protocol):
    """Stored credibility ratings, one per normalised domain (or domain/path)."""

    def upsert_many(self, ratings: Iterable[SourceRating]) -> int:
        """Insert or replace ratings; return how many were written."""
        ...

    def get_many(self, domains: Iterable[str]) -> dict[str, SourceRating]:
        """Return the ratings stored for exactly these keys."""
        ...


class SearchCache(Protocol):
    """Search responses kept for a while, by provider + normalised query key."""

    def get_search(self, key: str) -> list[dict[str, Any]] | None:
        """Return the cached results for key unless they expired."""
        ...

    def put_search(
        self,
        key: str,
        *,
        provider: str,
        query: str,
        before: datetime | None,
        results: list[dict[str, Any]],
        ttl: timedelta,
    ) -> None:
        """Store results for key for ttl."""
        ...


class ReachabilityCache(Protocol):
    """Recent answers to "does this URL answer?"."""

    def get_reachability(self, url: str) -> Reachability | None:
        """Return the last check of url unless it expired."""
        ...

    def put_reachability(self, check: Reachability, *, ttl: timedelta) -> None:
        """Store a check for ttl."""
        ...


@dataclass(frozen=True)
class FactCheckVectors:
    """The fact-check index's embeddings by one model, in one matrix, with their row ids."""

    ids: npt.NDArray[np.int64]
    matrix: npt.NDArray[np.float32]


class FactCheckIndex(Protocol):
    """The operator's index of published fact-checks (`pipeline.factchecks`), one row a review.

    Rows have integer ids; a review's key is its URL. Vectors are stored per embedding model
    name (`Embedder.name`), one L2-normalised vector of `FactCheck.matching_text()` each.
    """

    def stored_fact_check_hashes(self, urls: Sequence[str]) -> dict[str, str]:
        """Return the content hash stored for each of urls that is in the index."""
        ...

    def upsert_fact_checks(
        self, rows: Sequence[tuple[FactCheck, str, Mapping[str, npt.NDArray[np.float32]]]]
    ) -> list[UpsertStatus]:
        """Store (review, content hash, vectors by model) rows in one transaction."""
        ...

    def fact_check_key(self) -> tuple[int, ...]:
        """Return a key that changes whenever a review is added, changed or removed, or
        vectors stored for existing reviews are published."""
        ...

    def fact_checks_missing_vector(
        self, model: str, *, after: int = 0, limit: int = 256
    ) -> list[tuple[int, str]]:
        """Return (id, content hash) of the first `limit` reviews after id `after` that have
        no vector of model, in id order."""
        ...

    def count_missing_vectors(self, model: str) -> int:
        """Return how many reviews have no vector of model."""
        ...

    def store_fact_check_vectors(
        self, model: str, rows: Sequence[tuple[int, str, npt.NDArray[np.float32]]]
    ) -> int:
        """Store model's vector of each (id, content hash) review still stored with that hash
        and still without one, in one transaction; return how many were stored."""
        ...

    def publish_fact_check_vectors(self) -> None:
        """Move the change key, so the matcher's next snapshot reads the vectors stored."""
        ...

    def fact_check_texts(self) -> tuple[npt.NDArray[np.int64], list[str]]:
        """Return every row id with its matching text, in id order."""
        ...

    def fact_check_languages(self) -> list[str | None]:
        """Return every review's language, in id order (as `fact_check_texts`)."""
        ...

    def fact_check_matrix(self, model: str) -> FactCheckVectors:
        """Return every stored vector of model, in id order."""
        ...

    def fact_check_vectors(
        self, ids: Sequence[int], model: str
    ) -> dict[int, npt.NDArray[np.float32]]:
        """Return the stored vectors of model for ids (those that have one)."""
        ...

    def get_fact_checks(self, ids: Iterable[int]) -> dict[int, FactCheck]:
        """Return reviews by row id."""
        ...

    def fact_check_by_url(self, url: str) -> tuple[int, FactCheck] | None:
        """Return the row id and review stored for url, or None."""
        ...
