"""Reading a fetched page into a document: decoded once, parsed once, off the event loop.

Decoding (charset detection on legacy pages), parsing, the visibility pass and trafilatura are
all CPU-bound, so `extract_fetched` runs the whole of `read_page` in the CPU pool.

Failure policy: `read_page` raises `ExtractionError` when the page has no usable text (see
`pipeline.fetch.extract`) and ValueError when its URL has no registrable domain.
"""

from __future__ import annotations

from datetime import datetime

from pipeline.credibility.domains import registrable_domain
from pipeline.errors import ExtractionError, FactbotError
from pipeline.fetch.extract import ExtractedPage, extract_page
from pipeline.fetch.fetcher import FetchedPage, Fetcher
from pipeline.records.domain import utcnow
from pipeline.util.cpu import CpuPool, run_cpu


def read_page(page: FetchedPage, *, fetched_at: datetime | None = None) -> ExtractedPage:
    """Decode and extract a fetched page in the calling thread."""
    return extract_page(
        page.text(), url=page.url, domain=registrable_domain(page.url), fetched_at=fetched_at
    )


async def extract_fetched(
    page: FetchedPage, *, cpu: CpuPool | None, fetched_at: datetime | None = None
) -> ExtractedPage:
    """Decode and extract a fetched page in the CPU pool."""
    return await run_cpu(cpu, read_page, page, fetched_at=fetched_at)


async def fetch_page(
    url: str, *, fetcher: Fetcher, cpu: CpuPool | None
) -> tuple[ExtractedPage, FetchedPage] | str:
    """Fetch a page and extract its text, or return why it gave nothing (a skip reason)."""
    try:
        page = await fetcher.fetch(url)
        extracted = await extract_fetched(page, cpu=cpu, fetched_at=utcnow())
    except ExtractionError as exc:
        return f"no usable text: {exc.reason.split(':')[0]}"
    except FactbotError as exc:
        return f"fetch failed: {type(exc).__name__}"
    except ValueError:
        return "fetch failed: bad URL"
    return extracted, page
