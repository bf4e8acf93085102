"""Retrieval from the local evidence index: BM25 (FTS5) and embedding cosine, fused.

Both paths return their top candidates; reciprocal-rank fusion orders the union, and every
candidate carries its cosine similarity to the claim for the relevance filter that follows.
With a time bound, only documents published before it take part (undated documents per the
`undated` policy).

Failure policy: an FTS syntax problem falls back to the dense path alone; an empty index yields
no candidates; an index whose vectors another embedding model made raises
EmbeddingMismatchError (the scores would be meaningless).

Everything runs off the event loop: the claim vectors are computed while the FTS5 queries run,
then scoring and the passage look-up run in the CPU pool. The dense path is an exact scan of the
cached in-memory matrix (`DocumentIndex.vectors`); `python -m bench.retrieval` shows where the
time goes.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import numpy.typing as npt

from pipeline.claims.queries import Query
from pipeline.embedding.embedder import Embedder
from pipeline.ports import EvidenceIndex, VectorTable
from pipeline.records.domain import Document, Passage
from pipeline.util.cpu import CpuPool, run_cpu

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
    cpu: CpuPool | None = None,
) -> list[Candidate]:
    """Return fused candidates for every query, best first within each claim.

    The query vectors are computed while the full-text searches run (both off the event loop);
    the scoring and the passage look-up then run in the CPU pool too.
    """
    if not queries:
        return []
    # Vectors of another model would rank nonsense: EmbeddingMismatchError says how to fix it.
    await run_cpu(cpu, index.require_model, embedder.name)
    embedding = asyncio.ensure_future(embedder.embed([q.text for q in queries], role="query"))
    try:
        lexical = await run_cpu(
            cpu, _lexical_all, index, queries, limit=limit, before=before, undated=undated
        )
    except BaseException:
        embedding.cancel()
        raise
    query_vectors = await embedding
    return await run_cpu(
        cpu,
        _fuse,
        index,
        queries,
        query_vectors,
        lexical,
        limit=limit,
        before=before,
        undated=undated,
    )


def _fuse(
    index: EvidenceIndex,
    queries: list[Query],
    query_vectors: npt.NDArray[np.float32],
    lexical_hits: list[list[int]],
    *,
    limit: int,
    before: datetime | None,
    undated: str,
) -> list[Candidate]:
    table = index.vectors()
    mask: npt.NDArray[np.bool_] | None = None
    if before is not None and len(table.ids):
        bound = before.timestamp()
        dated = ~np.isnan(table.published)
        mask = dated & (np.nan_to_num(table.published, nan=np.inf) < bound)
        if undated == "include":
            mask |= ~dated
    results: list[Candidate] = []
    for query, qvec, lexical in zip(queries, query_vectors, lexical_hits, strict=True):
        dense = _dense(table, qvec, mask, limit)
        fused: dict[int, float] = {}
        for rank, pid in enumerate(dense):
            fused[pid] = fused.get(pid, 0.0) + 1.0 / (RRF_K + rank + 1)
        for rank, pid in enumerate(lexical):
            fused[pid] = fused.get(pid, 0.0) + 1.0 / (RRF_K + rank + 1)
        found = index.passages(fused)
        dense_rank = {pid: r for r, pid in enumerate(dense)}
        lexical_rank = {pid: r for r, pid in enumerate(lexical)}
        for pid in sorted(fused, key=lambda p: -fused[p]):
            row = _row(table, pid)
            if pid not in found or row is None:
                continue
            passage, document = found[pid]
            results.append(
                Candidate(
                    claim_id=query.claim_id,
                    passage=passage,
                    document=document,
                    cosine=float(table.matrix[row] @ qvec),
                    fused=fused[pid],
                    lexical_rank=lexical_rank.get(pid),
                    dense_rank=dense_rank.get(pid),
                )
            )
    return results


def _dense(
    table: VectorTable,
    qvec: npt.NDArray[np.float32],
    mask: npt.NDArray[np.bool_] | None,
    limit: int,
) -> list[int]:
    """Return the ids of the `limit` passages closest to qvec (within mask), best first."""
    if not len(table.ids):
        return []
    cosines = table.matrix @ qvec
    if mask is not None:
        cosines = np.where(mask, cosines, -np.inf)
    if limit < len(cosines):
        # Only the top `limit` are ordered; ties broken by position as a stable sort would.
        part = np.argpartition(-cosines, limit - 1)[:limit]
        top = part[np.lexsort((part, -cosines[part]))]
    else:
        top = np.argsort(-cosines, kind="stable")
    return [int(table.ids[i]) for i in top if np.isfinite(cosines[i])]


def _row(table: VectorTable, pid: int) -> int | None:
    """Return the row of passage pid in the matrix (ids are ascending), or None."""
    row = int(np.searchsorted(table.ids, pid))
    return row if row < len(table.ids) and int(table.ids[row]) == pid else None


def _lexical_all(
    index: EvidenceIndex,
    queries: list[Query],
    *,
    limit: int,
    before: datetime | None,
    undated: str,
) -> list[list[int]]:
    return [_lexical(index, q, limit=limit, before=before, undated=undated) for q in queries]


def _lexical(
    index: EvidenceIndex, query: Query, *, limit: int, before: datetime | None, undated: str
) -> list[int]:
    """Return the full-text ranking: the trigram table's first (CJK, Hangul, Thai), then words'."""
    ranked: list[int] = []
    for match, trigram in ((query.trigram_fts, True), (query.fts, False)):
        if not match:
            continue
        try:
            # The SQL bound drops undated documents; the dense mask decides for those.
            hits = index.search_text(match, limit=limit, before=before, trigram=trigram)
            if before is not None and undated == "include":
                hits += index.search_text(
                    match, limit=limit, before=None, undated_only=True, trigram=trigram
                )
        except sqlite3.OperationalError as exc:
            log.warning("fts query failed", extra={"query": match, "error": str(exc)})
            continue
        seen = set(ranked)
        ranked += [pid for pid, _ in sorted(hits, key=lambda h: h[1]) if pid not in seen]
    return ranked
