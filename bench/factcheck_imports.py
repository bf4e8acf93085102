"""Importing the fact-check index in two passes: the feed with MiniLM, then e5's vectors.

    python -m bench.factchecks --reviews 0 --queries 0 --import 200000 --real 20000 --e5 2000

Writes a synthetic ClaimReview feed of `--import` reviews (English claims from a small
vocabulary, no `inLanguage`, so the language identifier reads every new review, as for the
Snopes feed) and imports it through the real reader and `import_fact_checks`, e5 deferred: the
first `--real` reviews embedded by the real MiniLM and identified by the real lingua (the
timed part: an import's cost a review), the rest with random vectors and no language
identifier (so the index reaches full size in minutes). Then: e5's pass (`embed_missing`, real
e5) timed over its first `--e5` reviews and stopped; the listing of the reviews still without
an e5 vector, walked in batches as the pass walks it; the whole feed imported again (every
review unchanged). Printed as figures in the benchmark's JSON, with the extrapolation to the
whole feed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import time
from collections.abc import Iterable, Sequence
from itertools import islice
from pathlib import Path

import numpy as np

from pipeline.embedding.embedder import Embedder, Role, Vectors
from pipeline.factchecks.loading import embed_missing, import_fact_checks
from pipeline.factchecks.reviewfeeds import read_feed_file
from pipeline.factchecks.reviewitems import Parsed
from pipeline.inputs.language import LanguageIdentifier
from storage import Store

_WHO = (
    "The governor", "A senator", "The president", "The mayor", "A viral post", "The minister",
    "A video", "The health agency", "A Facebook post", "The city council", "An email",
)  # fmt: skip
_DID = (
    "said", "claimed", "showed", "announced", "reported", "denied", "confirmed", "suggested",
)  # fmt: skip
_WHAT = (
    "the new bridge cost ten billion dollars", "vaccines contain microchips",
    "drinking hot water cures the flu", "the election was stolen", "crime doubled last year",
    "the school banned books about history", "gas prices fell by half", "the dam will collapse",
    "unemployment reached a record low", "the hospital refused to treat children",
    "the army is moving tanks into the city", "the river was poisoned by a factory",
)  # fmt: skip
_WHEN = ("in {year}", "last week", "during the debate", "on television", "before the vote")


def claim(n: int, rng: random.Random) -> str:
    """Return synthetic claim n: an English sentence, unique by its number."""
    when = rng.choice(_WHEN).format(year=rng.randint(1990, 2026))
    return f"{rng.choice(_WHO)} {rng.choice(_DID)} that {rng.choice(_WHAT)} {when} ({n})"


def write_feed(path: Path, reviews: int, seed: int = 0) -> None:
    """Write a DataFeed of reviews ClaimReviews that name no language."""
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as out:
        out.write('{"@type": "DataFeed", "dataFeedElement": [')
        for n in range(reviews):
            item = {
                "@type": "ClaimReview",
                "url": f"https://checker.example/{n}",
                "claimReviewed": claim(n, rng),
                "author": {"name": "Bench Checker", "url": "https://checker.example"},
                "datePublished": "2024-05-03",
                "reviewRating": {"alternateName": rng.choice(("False", "True", "Misleading"))},
            }
            out.write(("," if n else "") + json.dumps({"item": item}))
        out.write("]}")


class RandomEmbedder:
    """Unit vectors at random (the untimed part of the feed: it only fills the index)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.rng = np.random.default_rng(0)

    def embed_sync(self, texts: Sequence[str], *, role: Role = "passage") -> Vectors:
        v = self.rng.standard_normal((len(texts), 384)).astype(np.float32)
        unit: Vectors = v / np.linalg.norm(v, axis=1, keepdims=True)
        return unit

    async def embed(self, texts: Sequence[str], *, role: Role = "passage") -> Vectors:
        return self.embed_sync(texts, role=role)


class _StopError(Exception):
    """Stops e5's pass after the reviews the benchmark times."""


class Stopping:
    """An embedder that stops the pass after `reviews` reviews (a pass cut short)."""

    def __init__(self, real: Embedder, reviews: int) -> None:
        self.real, self.name, self.left = real, real.name, reviews

    def embed_sync(self, texts: Sequence[str], *, role: Role = "passage") -> Vectors:
        return self.real.embed_sync(texts, role=role)

    async def embed(self, texts: Sequence[str], *, role: Role = "passage") -> Vectors:
        if self.left <= 0:
            raise _StopError
        self.left -= len(texts)
        return self.real.embed_sync(texts, role=role)


def _identify() -> tuple[LanguageIdentifier, float]:
    started = time.perf_counter()
    languages = LanguageIdentifier()
    languages.warm()
    return languages, time.perf_counter() - started


def run_import(
    store: Store,
    workdir: Path,
    *,
    reviews: int,
    real: int,
    e5_reviews: int,
    minilm: Embedder,
    e5: Embedder,
    feed: Path | None = None,
) -> dict[str, object]:
    """Run the two-pass import benchmark; return its figures.

    `feed`: a real feed whose reviews are the timed part (all of them), instead of the first
    `real` synthetic ones; the synthetic feed fills the index up to `reviews`.
    """
    out: dict[str, object] = {"import_reviews": reviews}
    out["load_average_before"] = [round(x, 2) for x in os.getloadavg()]
    synthetic = workdir / "feed.json"
    write_feed(synthetic, reviews)
    languages, warm = _identify()
    out["lingua_load_s"] = round(warm, 1)

    def identify(text: str) -> str | None:
        found = languages.identify(text)
        return found.code if found.determined else None

    def timed_items() -> Iterable[Parsed]:
        return read_feed_file(feed) if feed else islice(read_feed_file(synthetic), real)

    cpu = time.process_time()
    first = asyncio.run(
        import_fact_checks(
            timed_items(), index=store.fact_checks, embedders=[minilm], identify=identify
        )
    )
    cpu = time.process_time() - cpu  # the CPU it took: what a quiet core's wall time would be
    out["timed_feed"] = str(feed) if feed else "synthetic"
    out["timed_reviews"] = first.embedded
    out["import_timed_s"] = round(first.seconds, 1)
    per = first.seconds / max(first.embedded, 1)
    out["import_ms_per_review"] = round(per * 1000, 2)
    out["import_extrapolated_min"] = round(per * reviews / 60, 1)
    out["import_cpu_ms_per_review"] = round(cpu / max(first.embedded, 1) * 1000, 2)
    out["import_cpu_extrapolated_min"] = round(cpu / max(first.embedded, 1) * reviews / 60, 1)
    fill = read_feed_file(synthetic)
    rest = islice(fill, reviews - first.embedded) if feed else islice(fill, real, None)
    filled = asyncio.run(
        import_fact_checks(rest, index=store.fact_checks, embedders=[RandomEmbedder(minilm.name)])
    )
    out["import_rest_untimed_s"] = round(filled.seconds, 1)
    index = store.fact_checks
    started = time.perf_counter()
    missing = out["missing_e5"] = index.count_missing_vectors(e5.name)
    out["count_missing_s"] = round(time.perf_counter() - started, 2)
    out["list_missing_s"] = round(_walk(store, e5.name), 2)

    started, cpu = time.perf_counter(), time.process_time()
    with contextlib.suppress(_StopError):  # a pass cut short: what it stored stays
        asyncio.run(embed_missing(index, Stopping(e5, e5_reviews), batch_size=256))
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    done = missing - index.count_missing_vectors(e5.name)
    out["e5_pass_timed_reviews"] = done
    out["e5_pass_ms_per_review"] = round(seconds / max(done, 1) * 1000, 2)
    out["e5_pass_extrapolated_min"] = round(seconds / max(done, 1) * reviews / 60, 1)
    out["e5_pass_cpu_ms_per_review"] = round(cpu / max(done, 1) * 1000, 2)
    out["e5_pass_cpu_extrapolated_min"] = round(cpu / max(done, 1) * reviews / 60, 1)

    again: list[Iterable[Parsed]] = [read_feed_file(synthetic)]
    if feed:
        again = [read_feed_file(feed), islice(read_feed_file(synthetic), reviews - first.embedded)]
    unchanged, embedded, seconds, cpu = 0, 0, 0.0, time.process_time()
    for items in again:
        counts = asyncio.run(
            import_fact_checks(items, index=index, embedders=[minilm], identify=identify)
        )
        unchanged, embedded = unchanged + counts.unchanged, embedded + counts.embedded
        seconds += counts.seconds
    out["reimport_unchanged"], out["reimport_embedded"] = unchanged, embedded
    out["reimport_s"] = round(seconds, 1)
    out["reimport_cpu_s"] = round(time.process_time() - cpu, 1)
    out["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    return out


def _walk(store: Store, model: str) -> float:
    """Walk the listing of reviews without model's vector in batches; return seconds."""
    started, after = time.perf_counter(), 0
    while rows := store.fact_checks.fact_checks_missing_vector(model, after=after, limit=256):
        after = rows[-1][0]
    return time.perf_counter() - started
