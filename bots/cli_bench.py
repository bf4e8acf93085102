"""`factbot bench`: speed and size figures of the local evidence index."""

from __future__ import annotations

import asyncio
import json
import random
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import click


@click.group("bench")
def bench_group() -> None:
    """Benchmarks that print their figures.

    \b
    Example:
      factbot bench index --data ../shared/data/corpus/recovery/articles.jsonl --queries 200
    """


@bench_group.command("index")
@click.option(
    "--data",
    "sources",
    multiple=True,
    required=True,
    type=click.Path(exists=True, path_type=Path),
    help="JSONL/HTML/feed files to ingest (repeatable).",
)
@click.option("--queries", type=int, default=100, show_default=True, help="Checks to time.")
@click.option("--report", "report_path", type=click.Path(path_type=Path), help="Write JSON here.")
@click.pass_context
def index(
    ctx: click.Context, sources: tuple[Path, ...], queries: int, report_path: Path | None
) -> None:
    """Ingest into a fresh index, then time retrieval and whole checks."""
    import numpy as np
    from tqdm import tqdm

    from bots.cli import _app
    from pipeline.claims import extract_claims
    from pipeline.credibility import SourcePolicy
    from pipeline.errors import EmptyPostError
    from pipeline.ingest import Ingester
    from pipeline.judgement import ReviewMatchJudge
    from pipeline.posts import post_from_text
    from pipeline.queries import build_queries
    from pipeline.retrieval import retrieve
    from pipeline.run import CheckDeps, run_check
    from storage import Store

    app = _app(ctx)
    embedder = app.embedder
    embedder.warm_up()
    config = app.check_config()

    async def go(store: Store) -> dict[str, Any]:
        bar = tqdm(unit="doc", file=sys.stderr)
        start = time.perf_counter()
        report = await Ingester(store.documents, embedder, on_document=lambda: bar.update()).ingest(
            [str(s) for s in sources]
        )
        ingest_s = time.perf_counter() - start
        bar.close()
        titles = [
            r[0]
            for r in store.db.execute("SELECT title FROM documents WHERE title != ''").fetchall()
        ]
        random.Random(7).shuffle(titles)
        deps = CheckDeps(
            index=store.documents,
            embedder=embedder,
            rater=SourcePolicy(store.sources, unrated="allow"),
            judge=ReviewMatchJudge(embedder),
        )
        store.documents.vectors()  # load the matrix once, as a running service has it
        retrieval_s, check_s = [], []
        timed_titles = 0
        for title in titles:
            if timed_titles >= queries:
                break
            post = post_from_text(f"{title}.", max_chars=10_000)
            t0 = time.perf_counter()
            try:
                claims = await extract_claims(post)
            except EmptyPostError:
                continue  # a headline such as "Coronavirus" is not a claim
            timed_titles += 1
            qs = await build_queries(claims)
            await retrieve(qs, index=store.documents, embedder=embedder, limit=config.candidates)
            retrieval_s.append(time.perf_counter() - t0)
            t1 = time.perf_counter()
            await run_check(post, deps=deps, config=config)
            check_s.append(time.perf_counter() - t1)
        stats = store.documents.stats()
        return {
            "documents": stats.documents,
            "passages": stats.passages,
            "skipped": len(report.errors),
            "ingest_seconds": round(ingest_s, 1),
            "ingest_docs_per_s": round(report.documents / ingest_s, 1) if ingest_s else None,
            "ingest_passages_per_s": round(report.passages / ingest_s, 1) if ingest_s else None,
            "queries": timed_titles,
            "retrieval_p50_ms": round(1000 * float(np.percentile(retrieval_s, 50)), 1),
            "retrieval_p95_ms": round(1000 * float(np.percentile(retrieval_s, 95)), 1),
            "check_p50_ms": round(1000 * float(np.percentile(check_s, 50)), 1),
            "check_p95_ms": round(1000 * float(np.percentile(check_s, 95)), 1),
        }

    with tempfile.TemporaryDirectory() as tmp:
        db_path = Path(tmp) / "bench.db"
        with Store.open(db_path) as store:
            figures = asyncio.run(go(store))
            store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        figures["index_mb"] = round(db_path.stat().st_size / 1e6, 1)
    figures["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    click.echo(json.dumps(figures, indent=2))
    if report_path:
        report_path.write_text(json.dumps(figures, indent=2), encoding="utf-8")
