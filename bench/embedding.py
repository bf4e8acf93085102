"""`factbot bench embedders` and `factbot bench ingest`: the embedding backends side by side.

`embedders` embeds passages of the shared corpus with both backends and prints how far their
vectors agree (cosine per passage: min, p1, mean) and whether dense retrieval ranks the same
passages (top-k overlap and top-1 agreement over claim queries made from headlines).

`ingest` fills a fresh index from JSONL files with one backend, through the real `Ingester`,
and prints documents per second and peak memory; `--profile` first times each ingest stage
alone (reading and parsing, chunking, embedding, SQLite writes) on the same documents. Run
each backend in its own process: peak RSS is per process.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import resource
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import numpy as np

from pipeline.embedding.backends import BACKENDS, build_embedder
from pipeline.embedding.embedder import LocalEmbedder, Vectors
from pipeline.evidence.chunking import chunk_text, embedding_input
from pipeline.evidence.ingest import Ingester, read_jsonl
from pipeline.records.domain import Document, content_hash

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "data" / "corpus"
DEFAULT_DATA = (CORPUS / "recovery" / "articles.jsonl", CORPUS / "coaid" / "news.jsonl")


def _documents(paths: tuple[Path, ...], per_file: int | None) -> Iterator[Document]:
    for path in paths:
        items = (i for i in read_jsonl(path) if not isinstance(i, BaseException))
        for document, _ in itertools.islice(items, per_file):
            yield document


def _peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _timed_embed(embedder: LocalEmbedder, texts: list[str]) -> tuple[Vectors, float]:
    embedder.embed_sync(texts[:4])  # first-call set-up out of the timing
    start = time.perf_counter()
    vectors = embedder.embed_sync(texts)
    return vectors, time.perf_counter() - start


def agreement(passages: int, queries: int, k: int, threads: int | None) -> dict[str, Any]:
    """Return the agreement figures of the two backends on a stride sample of the corpus."""
    every = [
        (n, embedding_input(d.title, p))
        for n, d in enumerate(_documents(DEFAULT_DATA, None))
        for p in chunk_text(d.text)
    ]
    step = max(1, len(every) // passages)
    sample = every[::step][:passages]
    texts = [text for _, text in sample]
    document_of = np.array([n for n, _ in sample])
    titles = [d.title for d in _documents(DEFAULT_DATA, None) if len(d.title.split()) >= 4]
    asked = titles[:: max(1, len(titles) // queries)][:queries]
    onnx = build_embedder("onnx", threads=threads)
    torch = build_embedder("torch", threads=threads)
    a, onnx_s = _timed_embed(onnx, texts)
    b, torch_s = _timed_embed(torch, texts)
    cosines = (a * b).sum(axis=1)
    qa, qb = onnx.embed_sync(asked), torch.embed_sync(asked)
    top_a = np.argsort(-(a @ qa.T), axis=0)[:k].T
    top_b = np.argsort(-(b @ qb.T), axis=0)[:k].T
    overlap = np.array([len(set(x) & set(y)) / k for x, y in zip(top_a, top_b, strict=True)])
    return {
        "passages": len(texts),
        "queries": len(asked),
        "cosine_min": round(float(cosines.min()), 4),
        "cosine_p1": round(float(np.percentile(cosines, 1)), 4),
        "cosine_mean": round(float(cosines.mean()), 4),
        f"top{k}_overlap_mean": round(float(overlap.mean()), 3),
        f"top{k}_overlap_min": round(float(overlap.min()), 3),
        "top1_same": round(float(np.mean(top_a[:, 0] == top_b[:, 0])), 3),
        # near-ties between passages of one document (all start with its title) flip easily
        "top1_same_document": round(
            float(np.mean(document_of[top_a[:, 0]] == document_of[top_b[:, 0]])), 3
        ),
        "onnx_ms_per_passage": round(1000 * onnx_s / len(texts), 1),
        "torch_ms_per_passage": round(1000 * torch_s / len(texts), 1),
        "threads": threads,
    }


def profile(documents: list[Document], embedder: LocalEmbedder, db: Path) -> dict[str, float]:
    """Return the seconds each ingest stage takes alone on documents."""
    from storage import Store

    start = time.perf_counter()
    chunks = [chunk_text(d.text) for d in documents]
    chunk_s = time.perf_counter() - start
    texts = [
        embedding_input(d.title, p) for d, ps in zip(documents, chunks, strict=True) for p in ps
    ]
    vectors, embed_s = _timed_embed(embedder, texts)
    with Store.open(db) as store:
        start, offset = time.perf_counter(), 0
        for d, ps in zip(documents, chunks, strict=True):
            vecs = vectors[offset : offset + len(ps)]
            offset += len(ps)
            if ps:
                store.documents.upsert(
                    d, list(zip(ps, vecs, strict=True)), content_hash=content_hash(d.text)
                )
        write_s = time.perf_counter() - start
    return {
        "chunk_s": round(chunk_s, 2),
        "embed_s": round(embed_s, 2),
        "sqlite_write_s": round(write_s, 2),
        "embed_ms_per_passage": round(1000 * embed_s / max(1, len(texts)), 1),
    }


@click.command("embedders")
@click.option("--passages", type=int, default=2000, show_default=True, help="Corpus passages.")
@click.option("--queries", type=int, default=200, show_default=True, help="Headline queries.")
@click.option("--k", type=int, default=10, show_default=True, help="Top-k compared.")
@click.option("--threads", type=int, default=None, help="Threads per backend (default: theirs).")
def embedders_bench(passages: int, queries: int, k: int, threads: int | None) -> None:
    """Print how closely the ONNX and torch embedders agree on the shared corpus.

    \b
    Example:
      factbot bench embedders --passages 2000 --queries 200
    """
    click.echo(json.dumps(agreement(passages, queries, k, threads), indent=2))


@click.command("ingest")
@click.option(
    "--data",
    "sources",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="JSONL files (repeatable; default: the shared ReCOVery and CoAID corpora).",
)
@click.option("--backend", type=click.Choice(BACKENDS), default="onnx", show_default=True)
@click.option("--per-file", type=int, default=None, help="First N documents of each file.")
@click.option("--batch-size", type=int, default=None, help="Embedding batch (default: backend's).")
@click.option("--threads", type=int, default=None, help="Embedding threads (default: backend's).")
@click.option(
    "--profile/--no-profile", "profile_stages", default=False, help="First time each stage alone."
)
def ingest_bench(
    sources: tuple[Path, ...],
    backend: str,
    per_file: int | None,
    batch_size: int | None,
    threads: int | None,
    profile_stages: bool,
) -> None:
    """Ingest the corpus into a fresh index; print documents per second and peak memory.

    \b
    Examples:
      factbot bench ingest --backend onnx --per-file 300 --profile
      factbot bench ingest --backend torch --per-file 300
    """
    paths = sources or DEFAULT_DATA
    start = time.perf_counter()
    documents = list(_documents(paths, per_file))
    read_s = time.perf_counter() - start
    embedder = build_embedder(backend, batch_size=batch_size, threads=threads)
    embedder.warm_up()
    figures: dict[str, Any] = {"backend": backend, "embedder": embedder.name}
    figures["rss_after_load_mb"] = _peak_rss_mb()
    with tempfile.TemporaryDirectory() as tmp:
        if profile_stages:
            stages = {"read_parse_s": round(read_s, 2)}
            stages.update(profile(documents, embedder, Path(tmp) / "profile.db"))
            figures["stages"] = stages
        from storage import Store

        with Store.open(Path(tmp) / "bench.db") as store:
            ingester = Ingester(store.documents, embedder)

            async def go() -> None:
                for document in documents:
                    await ingester.add_document(document)
                await ingester.finish()

            start = time.perf_counter()
            asyncio.run(go())
            seconds = time.perf_counter() - start
            stats = store.documents.stats()
    figures.update(
        {
            "documents": stats.documents,
            "passages": stats.passages,
            "seconds": round(seconds, 1),
            "docs_per_s": round(stats.documents / seconds, 2),
            "passages_per_s": round(stats.passages / seconds, 1),
            "peak_rss_mb": _peak_rss_mb(),
        }
    )
    click.echo(json.dumps(figures, indent=2))
