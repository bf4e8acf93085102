"""`factbot bench`: speed and size figures of the local evidence index."""

from __future__ import annotations

import asyncio
import json
import random
import resource
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import click

from tests.support.httpserver import LocalServer, Request, Response, serve


@click.group("bench")
def bench_group() -> None:
    """Benchmarks that print their figures.

    \b
    Examples:
      factbot bench index --data ../shared/data/corpus/recovery/articles.jsonl --queries 200
      factbot bench fetch --pages 500 --hosts 8 --concurrency 16 --per-host 2
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

    from bots.cli.context import app_from as _app
    from pipeline.claims.heuristic import extract_claims
    from pipeline.claims.queries import build_queries
    from pipeline.credibility.policy import SourcePolicy
    from pipeline.errors import EmptyPostError
    from pipeline.evidence.ingest import Ingester
    from pipeline.evidence.retrieval import retrieve
    from pipeline.inputs.posts import post_from_text
    from pipeline.judge.claimreview import ReviewMatchJudge
    from pipeline.run import CheckDeps, run_check
    from storage import Store

    app = _app(ctx)
    embedder = app.embedder
    embedder.warm_up()
    config = app.checks.check_config()

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


_TOPICS = (
    ("council", "the new cycle lanes", "the city council"),
    ("hospital", "longer waiting times", "the regional health board"),
    ("harbour", "the ferry timetable", "the port authority"),
    ("school", "the free lunch scheme", "the education department"),
    ("river", "the flood defences", "the environment agency"),
    ("market", "rising food prices", "the traders' association"),
)
_SENTENCES = (
    "Officials from {body} said on {day} that {subject} would be reviewed before the summer.",
    "Residents told reporters that {subject} had changed their daily routines more than expected.",
    "A spokesperson for {body} declined to give a date but promised a public consultation.",
    "Figures published by {body} show that complaints about {subject} rose by {n} percent.",
    "Opposition members argued that {subject} had been planned without enough local input.",
    "Independent experts said the evidence on {subject} was mixed and called for more data.",
    "The plan for {subject} is expected to cost about {n} million over the next three years.",
    "Local businesses said they supported {subject} as long as deliveries were not disrupted.",
)
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")


def _article(number: int, site: str) -> bytes:
    """Return a generated news article with real paragraphs and dates in its meta tags."""
    rng = random.Random(number)
    keyword, subject, body = rng.choice(_TOPICS)
    published = f"2024-{1 + number % 12:02d}-{1 + number % 28:02d}T{8 + number % 10:02d}:15:00Z"
    paragraphs = []
    for _ in range(rng.randint(5, 8)):
        sentences = rng.sample(_SENTENCES, 3)
        text = " ".join(
            s.format(body=body, subject=subject, day=rng.choice(_DAYS), n=rng.randint(3, 40))
            for s in sentences
        )
        paragraphs.append(f"<p>{text}</p>")
    title = f"Update {number}: {body} and {subject}".capitalize()
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f'<meta property="og:site_name" content="{site.title()} Gazette">'
        f'<meta name="author" content="Reporter {number % 17}">'
        f'<meta property="article:published_time" content="{published}"></head><body>'
        f'<nav><a href="/">Home</a> <a href="/{keyword}">{keyword.title()}</a></nav>'
        f"<article><h1>{title}</h1>{''.join(paragraphs)}</article>"
        f"<footer>© 2024 {site.title()} Gazette</footer></body></html>"
    ).encode()


class _BenchSites:
    """Serves generated articles after a seeded time to first byte; counts what it sees."""

    def __init__(self, server: LocalServer, delays: tuple[float, float], seed: int) -> None:
        self.server = server
        self.delays, self.seed = delays, seed
        self.lock = threading.Lock()
        self.in_flight: Counter[str] = Counter()
        self.peak: Counter[str] = Counter()
        self.requests: Counter[str] = Counter()
        server.default = self.answer

    def answer(self, request: Request) -> Response:
        """Return robots.txt or article n of the site the Host header names."""
        site = request.headers.get("host", "").split(".")[0]
        if request.target == "/robots.txt":
            with self.lock:
                self.requests["robots"] += 1
            return Response(200, b"User-agent: *\nDisallow: /private/\n", "text/plain")
        number = int(request.target.rsplit("/", 1)[-1].split(".")[0])
        delay = random.Random(self.seed * 1_000_003 + number).uniform(*self.delays)
        with self.lock:
            self.requests["pages"] += 1
            for key in (site, "*"):
                self.in_flight[key] += 1
                self.peak[key] = max(self.peak[key], self.in_flight[key])
        time.sleep(delay)
        with self.lock:
            for key in (site, "*"):
                self.in_flight[key] -= 1
        return Response(200, _article(number, site), "text/html; charset=utf-8")


@bench_group.command("fetch")
@click.option("--pages", type=int, default=500, show_default=True)
@click.option(
    "--hosts", type=int, default=8, show_default=True, help="Sites the pages spread over."
)
@click.option("--concurrency", type=int, default=16, show_default=True, help="Global limit.")
@click.option("--per-host", type=int, default=2, show_default=True, help="Per-host limit.")
@click.option("--min-delay-ms", type=int, default=50, show_default=True)
@click.option("--max-delay-ms", type=int, default=300, show_default=True)
@click.option("--seed", type=int, default=7, show_default=True, help="Seeds the delays.")
@click.option("--report", "report_path", type=click.Path(path_type=Path), help="Write JSON here.")
def fetch(
    pages: int,
    hosts: int,
    concurrency: int,
    per_host: int,
    min_delay_ms: int,
    max_delay_ms: int,
    seed: int,
    report_path: Path | None,
) -> None:
    """Fetch and extract generated articles from a local server, then again from the cache.

    Every page goes through the real fetcher (robots.txt on, vetted addresses, limits) and
    real extraction. The sites are host names that resolve to 127.0.0.1, so the per-host
    limit applies to each of them while the global limit caps the total.
    """
    from pipeline.errors import ExtractionError, FetchError, UnsafeURLError
    from pipeline.fetch.extract import extract_document
    from pipeline.fetch.fetcher import FetchedPage, Fetcher, FetchPolicy
    from storage import Store
    from storage.pagecache import StorePageCache

    sites = [f"news{i}.bench.test" for i in range(1, hosts + 1)]

    async def resolve(host: str, port: int) -> list[str]:
        return ["127.0.0.1"]

    policy = FetchPolicy(
        allowed_networks=("127.0.0.1/32",),
        max_concurrency=concurrency,
        per_host=per_host,
        user_agent="factbot-bench/0.1",
    )

    def read(page: FetchedPage) -> int:
        document = extract_document(page.text(), url=page.url, domain="bench.test")
        return len(document.text.split())

    async def fetch_only(urls: list[str], cache: StorePageCache) -> dict[str, Any]:
        started = time.perf_counter()
        async with Fetcher(policy, resolver=resolve, cache=cache) as fetcher:
            fetched = await asyncio.gather(*(fetcher.fetch(u) for u in urls))
        seconds = time.perf_counter() - started
        hits = sum(page.from_cache for page in fetched)
        return {"hits": hits, "seconds": round(seconds, 3), "pages_per_s": round(hits / seconds)}

    async def one_pass(urls: list[str], cache: StorePageCache) -> dict[str, Any]:
        failures: Counter[str] = Counter()
        words: list[int] = []

        async def one(fetcher: Fetcher, url: str) -> None:
            try:
                page = await fetcher.fetch(url)
                words.append(await asyncio.to_thread(read, page))
            except (UnsafeURLError, FetchError) as exc:
                failures[f"fetch: {exc.reason}"] += 1
            except ExtractionError as exc:
                failures[f"extract: {exc.reason}"] += 1

        started = time.perf_counter()
        async with Fetcher(policy, resolver=resolve, cache=cache) as fetcher:
            await asyncio.gather(*(one(fetcher, u) for u in urls))
        seconds = time.perf_counter() - started
        return {
            "pages": len(words),
            "seconds": round(seconds, 2),
            "pages_per_s": round(len(words) / seconds, 1),
            "fetch_failures": sum(n for k, n in failures.items() if k.startswith("fetch")),
            "extract_failures": sum(n for k, n in failures.items() if k.startswith("extract")),
            "failure_reasons": dict(failures.most_common(5)),
            "mean_words": round(sum(words) / len(words)) if words else 0,
            "fetcher_peak_in_flight": fetcher.gates.peak,
            "fetcher_peak_per_host": fetcher.gates.peak_per_host,
        }

    with (
        serve() as local,
        tempfile.TemporaryDirectory() as tmp,
        Store.open(Path(tmp) / "bench.db") as store,
    ):
        server = _BenchSites(local, (min_delay_ms / 1000, max_delay_ms / 1000), seed)
        urls = [f"http://{sites[n % hosts]}:{local.port}/articles/{n}.html" for n in range(pages)]
        cache = StorePageCache(store.web, ttl=timedelta(hours=1))
        network = asyncio.run(one_pass(urls, cache))
        sent = dict(server.requests)
        cached = asyncio.run(one_pass(urls, cache))
        cached_fetch = asyncio.run(fetch_only(urls, cache))
    mean_delay = (min_delay_ms + max_delay_ms) / 2000
    figures = {
        "pages": pages,
        "hosts": hosts,
        "delay_ms": [min_delay_ms, max_delay_ms],
        "max_concurrency": concurrency,
        "per_host": per_host,
        # Slots that can be busy at once, over the mean delay: what the limits allow at best.
        "bound_pages_per_s": round(min(concurrency, per_host * hosts) / mean_delay, 1),
        "network": network,
        "server_peak_in_flight": server.peak["*"],
        "server_peak_per_host": max(server.peak[s.split(".")[0]] for s in sites),
        "server_requests": sent,
        "cache": {**cached, "requests_sent": dict(server.requests - Counter(sent))},
        "cache_fetch_only": cached_fetch,
    }
    click.echo(json.dumps(figures, indent=2))
    if report_path:
        report_path.write_text(json.dumps(figures, indent=2), encoding="utf-8")


def _register() -> None:
    from bench.cli_latency import latency
    from bench.cli_search import search_cache
    from bench.dashboard import dashboard_bench
    from bench.embedding import embedders_bench, ingest_bench
    from bench.jobs import jobs_bench
    from bench.latency_local import latency_local
    from bench.latency_tokens import latency_tokens
    from bench.monitor import monitor_bench
    from bench.platform_load import platforms_bench
    from bench.retrieval import retrieval_bench

    bench_group.add_command(search_cache)
    bench_group.add_command(embedders_bench)
    bench_group.add_command(ingest_bench)
    bench_group.add_command(retrieval_bench)
    bench_group.add_command(latency)
    bench_group.add_command(latency_local)
    bench_group.add_command(latency_tokens)
    bench_group.add_command(jobs_bench)
    bench_group.add_command(platforms_bench)
    bench_group.add_command(monitor_bench)
    bench_group.add_command(dashboard_bench)


_register()
