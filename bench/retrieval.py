"""`factbot bench retrieval`: where the time of one retrieval goes, over ~25,000 passages.

Fills an index from the shared corpus (ReCOVery + CoAID: 6,354 documents, 24,343 passages) or
reuses one (`--db`), then times `retrieve` for claims made from headlines, and each part alone:
the claim embedding, the FTS5 queries (as run now, and joined to documents first as before),
the dense scan of the in-memory matrix and the passage look-up.

`--vectors random` stores random unit vectors instead of embedding the corpus (minutes instead
of most of an hour on 2 cores): the timings of the machinery are the same, the rankings are not
meaningful. The index is kept at `--db` for the next run.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click
import numpy as np

from bench.embedding import DEFAULT_DATA, _documents, _peak_rss_mb
from pipeline.claims.heuristic import extract_claims
from pipeline.claims.queries import Query, build_queries
from pipeline.embedding.backends import BACKENDS, build_embedder
from pipeline.embedding.embedder import LocalEmbedder
from pipeline.errors import EmptyPostError
from pipeline.evidence.chunking import chunk_text
from pipeline.evidence.ingest import Ingester
from pipeline.evidence.retrieval import retrieve
from pipeline.inputs.posts import post_from_text
from pipeline.records.domain import content_hash
from pipeline.util.cpu import CpuPool
from storage import Store
from storage.codec import dt_out

_JOINED = (
    "SELECT passages_fts.rowid, bm25(passages_fts) AS score FROM passages_fts "
    "JOIN passages ON passages.id = passages_fts.rowid "
    "JOIN documents ON documents.id = passages.document_id WHERE passages_fts MATCH ?"
)


def fill(store: Store, embedder: LocalEmbedder, vectors: str) -> None:
    """Fill store from the shared corpus with real or random vectors."""
    store.state.set("bench:vectors", vectors)  # a reused index reports what it holds
    if vectors == "real":
        asyncio.run(Ingester(store.documents, embedder).ingest([str(p) for p in DEFAULT_DATA]))
        return
    rng = np.random.default_rng(0)
    store.documents.require_model(embedder.name, record=True)
    for document in _documents(DEFAULT_DATA, None):
        passages = chunk_text(document.text)
        if passages:
            vecs = rng.standard_normal((len(passages), 384)).astype(np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
            store.documents.upsert(
                document,
                list(zip(passages, vecs, strict=True)),
                content_hash=content_hash(document.text),
            )


async def _queries(store: Store, n: int) -> list[list[Query]]:
    titles = [r[0] for r in store.db.execute("SELECT title FROM documents WHERE title != ''")]
    random.Random(7).shuffle(titles)
    out: list[list[Query]] = []
    for title in titles:
        if len(out) >= n:
            break
        try:
            claims = await extract_claims(post_from_text(f"{title}.", max_chars=10_000))
        except EmptyPostError:
            continue
        out.append(await build_queries(claims))
    return out


def _ms(values: list[float]) -> dict[str, float]:
    return {
        "p50": round(1000 * float(np.percentile(values, 50)), 1),
        "p95": round(1000 * float(np.percentile(values, 95)), 1),
    }


async def measure(
    store: Store, embedder: LocalEmbedder, *, queries: int, limit: int, before: datetime | None
) -> dict[str, Any]:
    """Return p50/p95 milliseconds of retrieval and of its parts."""
    index = store.documents
    asked = await _queries(store, queries)
    index.vectors()  # loaded once, as a running service has it
    parts: dict[str, list[float]] = {
        k: [] for k in ("retrieve", "embed", "fts", "fts_joined", "dense", "passages")
    }
    cpu = CpuPool()
    try:
        for qs in asked:
            t0 = time.perf_counter()
            found = await retrieve(
                qs, index=index, embedder=embedder, limit=limit, before=before, cpu=cpu
            )
            parts["retrieve"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            vectors = embedder.embed_sync([q.text for q in qs])
            parts["embed"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            for q in qs:
                if q.fts:
                    index.search_text(q.fts, limit=limit, before=before)
            parts["fts"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            for q in qs:
                if q.fts:
                    sql, params = _JOINED, [q.fts, limit]
                    if before is not None:
                        sql += " AND documents.published_at < ?"
                        params.insert(1, str(dt_out(before)))
                    store.db.execute(f"{sql} ORDER BY score LIMIT ?", params).fetchall()
            parts["fts_joined"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            table = index.vectors()
            for v in vectors:
                scores = table.matrix @ v
                np.argpartition(-scores, min(limit, len(scores) - 1))[:limit]
            parts["dense"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            index.passages(int(c.passage.id) for c in found)
            parts["passages"].append(time.perf_counter() - t0)
    finally:
        cpu.close()
    stats = index.stats()
    return {
        "documents": stats.documents,
        "passages": stats.passages,
        "queries": len(asked),
        "claims_per_query": round(float(np.mean([len(q) for q in asked])), 2),
        "limit": limit,
        "before": before.isoformat() if before else None,
        **{f"{k}_ms": _ms(v) for k, v in parts.items()},
    }


@click.command("retrieval")
@click.option(
    "--db",
    type=click.Path(path_type=Path),
    default=Path("reports/retrieval-25k.db"),
    show_default=True,
    help="Index to reuse (filled from the corpus when missing).",
)
@click.option("--vectors", type=click.Choice(["real", "random"]), default="real", show_default=True)
@click.option("--backend", type=click.Choice(BACKENDS), default="onnx", show_default=True)
@click.option("--queries", type=int, default=100, show_default=True)
@click.option("--limit", type=int, default=40, show_default=True, help="Candidates per path.")
@click.option("--before", type=click.DateTime(), default=None, help="Time bound (UTC).")
def retrieval_bench(
    db: Path, vectors: str, backend: str, queries: int, limit: int, before: datetime | None
) -> None:
    """Time retrieval over the whole shared corpus and break it down.

    \b
    Examples:
      factbot bench retrieval --vectors random --db /tmp/r25k.db
      factbot bench retrieval --db reports/retrieval-25k.db --before 2020-06-01
    """
    embedder = build_embedder(backend, threads=1)
    embedder.warm_up()
    bound = before.replace(tzinfo=UTC) if before else None
    fresh = not db.exists()
    with Store.open(db) as store:
        if fresh:
            start = time.perf_counter()
            fill(store, embedder, vectors)
            click.echo(f"filled {db} in {time.perf_counter() - start:.0f}s", err=True)
        figures = asyncio.run(measure(store, embedder, queries=queries, limit=limit, before=bound))
        figures["vectors"] = store.state.get("bench:vectors")
    figures["peak_rss_mb"] = _peak_rss_mb()
    click.echo(json.dumps(figures, indent=2))
