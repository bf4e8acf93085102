"""Per-page extraction cost, and thread versus process pools for extraction on this machine.

    python -m bench.pages [--rounds 50] [--pages 64] [--workers 2]

`legacy` is what the callers did before pages were parsed once: decode the body twice, then
`extract_document` (one parse, plus one more for the wall check of a short page) and
`extract_metadata` (another parse, visibility pass and htmldate run) for the author.
`one pass` is `pipeline.evidence.pages.read_page`: one decode, one parse, one visibility pass.
The pool comparison extracts generated articles serially, in threads and in processes.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pipeline.errors import ExtractionError
from pipeline.evidence.pages import read_page
from pipeline.fetch.extract import extract_document, extract_metadata
from pipeline.fetch.fetcher import FetchedPage

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "pages"


def _page(url: str, body: bytes) -> FetchedPage:
    return FetchedPage(
        url=url,
        requested_url=url,
        status=200,
        content_type="text/html",
        charset=None,
        body=body,
        redirects=(),
    )


def _legacy(page: FetchedPage) -> str | None:
    try:
        extract_document(page.text(), url=page.url, domain="bench.test")
    except ExtractionError:
        return None
    return extract_metadata(page.text(), page.url).author


def _one_pass(page: FetchedPage) -> str | None:
    try:
        return read_page(page).metadata.author
    except ExtractionError:
        return None


def _per_page_ms(
    work: Callable[[FetchedPage], object], pages: list[FetchedPage], rounds: int
) -> float:
    for page in pages:
        work(page)  # warm: imports, caches
    started = time.perf_counter()
    for _ in range(rounds):
        for page in pages:
            work(page)
    return (time.perf_counter() - started) / (rounds * len(pages)) * 1000


def _articles(count: int) -> list[FetchedPage]:
    from bench.cli import _article

    return [
        _page(f"http://news.bench.test/articles/{n}.html", _article(n, "news.bench.test"))
        for n in range(count)
    ]


def _throughput(executor: Executor | None, pages: list[FetchedPage]) -> float:
    started = time.perf_counter()
    if executor is None:
        for page in pages:
            _one_pass(page)
    else:
        list(executor.map(_one_pass, pages))
    return len(pages) / (time.perf_counter() - started)


def main() -> None:
    """Print per-page milliseconds and pages per second as JSON."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--pages", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    fixtures = [
        _page(f"https://{p.stem.replace('_', '-')}.test/", p.read_bytes())
        for p in sorted(FIXTURES.glob("*.html"))
    ]
    articles = _articles(args.pages)
    report: dict[str, Any] = {}
    for name, pages in (("fixtures", fixtures), ("articles", articles[:8])):
        report[f"{name}_legacy_ms"] = round(_per_page_ms(_legacy, pages, args.rounds), 3)
        report[f"{name}_one_pass_ms"] = round(_per_page_ms(_one_pass, pages, args.rounds), 3)
    with ThreadPoolExecutor(args.workers) as threads, ProcessPoolExecutor(args.workers) as procs:
        _throughput(threads, articles[:4])
        _throughput(procs, articles[: args.workers * 2])  # start the workers and import there
        report["serial_pages_per_s"] = round(_throughput(None, articles), 1)
        report["threads_pages_per_s"] = round(_throughput(threads, articles), 1)
        report["processes_pages_per_s"] = round(_throughput(procs, articles), 1)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
