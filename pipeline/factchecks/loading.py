"""Loading the fact-check index: parsed feed items in, embedded and stored in batches.

Items are taken `batch_size` at a time, so memory holds one batch whatever the feed's size.
Each review's content hash (sha256 of its stored fields and the embedding models' names) is
compared with the stored one: an unchanged review is neither embedded nor written, so a second
import of the same feed only reads it, and an import cut short is resumed by running it again.
A new or changed review is embedded by every embedder (its `matching_text()`, as a query: the
matcher compares claims with claims) and each batch is written in one transaction.

A URL met twice in one run: the last copy is stored and the repeat is counted in
`duplicates`, not as a change. To know them, a run keeps a hash of each URL it has stored
(about 70 bytes a review: 14 MB for the 200,000 reviews of a full Data Commons feed).

Failure policy: a `Skipped` item is counted by its reason and the rest go on; a feed error
(`FeedError`) raised by the items propagates after the batches before it are stored; an
embedder's or the index's error propagates (the batch in hand is not stored).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np
import numpy.typing as npt

from pipeline.embedding.embedder import Embedder
from pipeline.factchecks.reviewitems import Identify, Parsed, Skipped
from pipeline.records.factchecks import FactCheck

DEFAULT_BATCH = 256


class FactCheckStore(Protocol):
    """The part of `pipeline.ports.FactCheckIndex` an import writes through.

    Restated here because pipeline.ports imports this package's records: importing the port
    back would make the two packages a cycle (the import contracts forbid it).
    """

    def stored_fact_check_hashes(self, urls: Sequence[str]) -> dict[str, str]:
        """Return the content hash stored for each of urls that is in the index."""
        ...

    def upsert_fact_checks(
        self, rows: Sequence[tuple[FactCheck, str, Mapping[str, npt.NDArray[np.float32]]]]
    ) -> Sequence[Literal["added", "updated", "unchanged"]]:
        """Store (review, content hash, vectors by model) rows in one transaction."""
        ...


@dataclass
class ImportCounts:
    """What an import did so far (filled in batch by batch)."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    duplicates: int = 0  # repeats of a URL met before in the same run (the last one is kept)
    skipped: Counter[str] = field(default_factory=Counter)  # reason -> items
    embedded: int = 0  # reviews embedded (by every embedder)
    seconds: float = 0.0

    @property
    def read(self) -> int:
        """Return how many items were read, skipped ones included."""
        return self.added + self.updated + self.unchanged + self.duplicates + self.skipped.total()

    def summary(self) -> str:
        """Return the counts in one line: `N added, N updated, N unchanged, N skipped (...)`."""
        reasons = ", ".join(f"{reason}: {n}" for reason, n in self.skipped.most_common())
        line = (
            f"{self.added} added, {self.updated} updated, {self.unchanged} unchanged, "
            f"{self.skipped.total()} skipped" + (f" ({reasons})" if reasons else "")
        )
        return line + (f", {self.duplicates} duplicate URLs" if self.duplicates else "")


Progress = Callable[[ImportCounts], None]


def fact_check_hash(fact_check: FactCheck, models: Sequence[str] = ()) -> str:
    """Return the sha256 of a review's stored fields and the models that embed it."""
    fields = {
        "url": fact_check.url,
        "claim_reviewed": fact_check.claim_reviewed,
        "publisher": fact_check.publisher,
        "publisher_site": fact_check.publisher_site,
        "headline": fact_check.headline,
        "claimant": fact_check.claimant,
        "claim_date": fact_check.claim_date.isoformat() if fact_check.claim_date else None,
        "review_date": fact_check.review_date.isoformat() if fact_check.review_date else None,
        "language": fact_check.language,
        "rating": fact_check.rating,
        "label": fact_check.label.value if fact_check.label is not None else None,
        "license": fact_check.license,
        # A model added later makes every review changed: it is embedded by that model too.
        "models": sorted(models),
    }
    encoded = json.dumps(fields, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return hashlib.sha256(encoded).hexdigest()


async def import_fact_checks(
    items: Iterable[Parsed],
    *,
    index: FactCheckStore,
    embedders: Sequence[Embedder],
    batch_size: int = DEFAULT_BATCH,
    progress: Progress | None = None,
    identify: Identify | None = None,
) -> ImportCounts:
    """Embed and store the new and changed reviews of items, batch by batch; count the rest.

    `identify` names the language of a new or changed review whose feed gives none. It runs
    after the hash comparison, so a review stored unchanged is neither embedded nor read by
    the language identifier (the hash is of the review as the feed gave it).
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, not {batch_size}")
    started = time.monotonic()
    counts = ImportCounts()
    seen: set[int] = set()  # the URLs stored by earlier batches of this run, hashed
    batch: dict[str, FactCheck] = {}
    for item in items:
        if isinstance(item, Skipped):
            counts.skipped[item.reason] += 1
            continue
        if item.url in batch:
            counts.duplicates += 1
        batch[item.url] = item  # a repeat in the batch: the last copy wins
        if len(batch) >= batch_size:
            await _store(
                batch, seen, index=index, embedders=embedders, counts=counts, identify=identify
            )
            batch = {}
            counts.seconds = time.monotonic() - started
            if progress is not None:
                progress(counts)
    if batch:
        await _store(
            batch, seen, index=index, embedders=embedders, counts=counts, identify=identify
        )
    counts.seconds = time.monotonic() - started
    if progress is not None:
        progress(counts)
    return counts


async def _store(
    batch: dict[str, FactCheck],
    seen: set[int],
    *,
    index: FactCheckStore,
    embedders: Sequence[Embedder],
    counts: ImportCounts,
    identify: Identify | None = None,
) -> None:
    models = [embedder.name for embedder in embedders]
    hashes = {url: fact_check_hash(fc, models) for url, fc in batch.items()}
    stored = index.stored_fact_check_hashes(list(batch))
    keys = {url: _url_key(url) for url in batch}
    repeats = {url for url, key in keys.items() if key in seen}
    counts.duplicates += len(repeats)
    todo = [fc for url, fc in batch.items() if stored.get(url) != hashes[url]]
    counts.unchanged += sum(
        1 for url in batch if stored.get(url) == hashes[url] and url not in repeats
    )
    seen.update(keys.values())
    if not todo:
        return
    if identify is not None:
        todo = [
            fc if fc.language else dataclasses.replace(fc, language=identify(fc.claim_reviewed))
            for fc in todo
        ]
    texts = [fc.matching_text() for fc in todo]
    matrices = {
        embedder.name: np.asarray(await embedder.embed(texts, role="query"), dtype=np.float32)
        for embedder in embedders
    }
    counts.embedded += len(todo)
    rows = [
        (fc, hashes[fc.url], {name: matrix[i] for name, matrix in matrices.items()})
        for i, fc in enumerate(todo)
    ]
    statuses = index.upsert_fact_checks(rows)
    for fc, status in zip(todo, statuses, strict=True):
        if fc.url in repeats:
            continue
        if status == "added":
            counts.added += 1
        elif status == "updated":
            counts.updated += 1
        else:
            counts.unchanged += 1


def _url_key(url: str) -> int:
    # 8 bytes a URL (about 70 with the set's own): what a run holds per review it has read
    return int.from_bytes(hashlib.blake2b(url.encode("utf-8"), digest_size=8).digest(), "big")
