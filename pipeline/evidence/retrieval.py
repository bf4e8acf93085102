"""Retrieval from the local evidence index: BM25 (FTS5) and embedding cosine, fused.

Both paths return their top candidates; reciprocal-rank fusion orders the union, and every
candidate carries its cosine similarity to the claim for the relevance filter that follows.
With a time bound, only documents published before it take part (undated documents per the
`undated` policy).

Failure policy: an FTS syntax problem falls back to the dense path alone; an empty index yields
no candidates.
"""

from __future__ import annotations

import logging
import sqlite3
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from pipeline.claims.queries import Query
from pipeline.embedder import Embedder
from pipeline.ports import EvidenceIndex
from pipeline.records import Document, Passage

log = logging.getLogger(__name__)

RRF_K = 60


@dataclass(frozen=True)
class Candidate:
    """A passage found for a claim, before filtering."""

    claim_id: str
    passage: Passage
    document: Document
    cosine: float
    fused: float
    lexical_rank: int | None
    dense_rank: int | None


async def retrieve(
    queries: list[Query],
    *,
    index: EvidenceIndex,
    embedder: Embedder,
    limit: int = 40,
    before: datetime | None = None,
    undated: str = "exclude",
) -> list[Candidate]:
    """Return fused candidates for every query, best first within each claim."""
    if not queries:
        return []
    table = index.vectors()
    query_vectors = await embedder.embed([q.text for q in queries])
    mask = np.ones(len(table.ids), dtype=bool)
    if before is not None and len(table.ids):
        bound = before.timestamp()
        dated = ~np.isnan(table.published)
        mask = dated & (np.nan_to_num(table.published, nan=np.inf) < bound)
        if undated == "include":
            mask |= ~dated
    position = {int(pid): i for i, pid in enumerate(table.ids)}
    results: list[Candidate] = []
    for query, qvec in zip(queries, query_vectors, strict=True):
        cosines = table.matrix @ qvec if len(table.ids) else np.zeros(0, dtype=np.float32)
        cosines = np.where(mask, cosines, -np.inf)
        top = np.argsort(-cosines)[:limit]
        dense = [int(table.ids[i]) for i in top if np.isfinite(cosines[i])]
        lexical = _lexical(index, query, limit=limit, before=before, undated=undated)
        fused: dict[int, float] = {}
        for rank, pid in enumerate(dense):
            fused[pid] = fused.get(pid, 0.0) + 1.0 / (RRF_K + rank + 1)
        for rank, pid in enumerate(lexical):
            fused[pid] = fused.get(pid, 0.0) + 1.0 / (RRF_K + rank + 1)
        found = index.passages(fused)
        dense_rank = {pid: r for r, pid in enumerate(dense)}
        lexical_rank = {pid: r for r, pid in enumerate(lexical)}
        for pid in sorted(fused, key=lambda p: -fused[p]):
            if pid not in found or pid not in position:
                continue
            passage, document = found[pid]
            results.append(
                Candidate(
                    claim_id=query.claim_id,
                    passage=passage,
                    document=document,
                    cosine=float(table.matrix[position[pid]] @ qvec),
                    fused=fused[pid],
                    lexical_rank=lexical_rank.get(pid),
                    dense_rank=dense_rank.get(pid),
                )
            )
    return results


def _lexical(
    index: EvidenceIndex, query: Query, *, limit: int, before: datetime | None, undated: str
) -> list[int]:
    if not query.fts:
        return []
    try:
        # The SQL bound drops undated documents; the dense mask decides for those.
        hits = index.search_text(query.fts, limit=limit, before=before)
        if before is not None and undated == "include":
            hits += index.search_text(query.fts, limit=limit, before=None, undated_only=True)
    except sqlite3.OperationalError as exc:
        log.warning("fts query failed", extra={"query": query.fts, "error": str(exc)})
        return []
    return [pid for pid, _ in sorted(hits, key=lambda h: h[1])]
