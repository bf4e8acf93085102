"""Loading the fact-check index: parsed feed items in, embedded and stored in batches.

Items are taken `batch_size` at a time, so memory holds one batch whatever the feed's size.
Each review's content hash (sha256 of its stored fields) is compared with the stored one: an
unchanged review is neither embedded nor written, so a second import of the same feed only reads
it, and an import cut short is resumed by running it again. A new or changed review is embedded
by every embedder given (its `matching_text()`, as a query: the matcher compares claims with
claims) and each batch is written in one transaction; a changed review loses the vectors of the
models not given (they were of its old text).

The models are not in the hash, so an import may embed with some models only (`factbot
factchecks import --defer e5`) and `embed_missing` fill in another model's vectors afterwards,
batch by batch: it lists the reviews without a vector of that model, in id order, embeds a batch
and stores it in one transaction, so a pass cut short continues where it stopped when run again.
A model enabled later is filled in the same way, not by re-importing.

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


class VectorStore(Protocol):
    """The part of `pipeline.ports.FactCheckIndex` that `embed_missing` reads and writes."""

    def fact_checks_missing_vector(
        self, model: str, *, after: int = 0, limit: int = DEFAULT_BATCH
    ) -> list[tuple[int, str]]:
        """Return (id, content hash) of the first `limit` reviews after id `after` that have
        no vector of model, in id order."""
        ...

    def count_missing_vectors(self, model: str) -> int:
        """Return how many reviews have no vector of model."""
        ...

    def get_fact_checks(self, ids: Iterable[int]) -> dict[int, FactCheck]:
        """Return reviews by row id."""
        ...

    def store_fact_check_vectors(
        self, model: str, rows: Sequence[tuple[int, str, npt.NDArray[np.float32]]]
    ) -> int:
        """Store model's vector of each (id, content hash) review still stored with that hash,
        in one transaction; return how many were stored."""
        ...

    def publish_fact_check_vectors(self) -> None:
        """Move the change key, so the matcher's next snapshot reads the vectors stored."""
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


@dataclass
class EmbedCounts:
    """What a pass of `embed_missing` did so far (filled in batch by batch)."""

    model: str
    missing: int = 0  # reviews without a vector of model when the pass started
    embedded: int = 0  # reviews embedded and stored
    stale: int = 0  # embedded, but changed or removed meanwhile: not stored (a rerun takes them)
    seconds: float = 0.0

    def summary(self) -> str:
        """Return the counts in one line: `model: N of N missing embedded in N s`."""
        line = f"{self.model}: {self.embedded} of {self.missing} missing embedded"
        stale = f", {self.stale} changed meanwhile" if self.stale else ""
        return f"{line}{stale} in {self.seconds:.1f} s"


PUBLISH_SECONDS = 60.0  # the pass moves the index's key at most this often (and at its end)


def fact_check_hash(fact_check: FactCheck) -> str:
    """Return the sha256 of a review's stored fields (the embedding models are not in it)."""
    return _digest(hashed_fields(fact_check))


def legacy_fact_check_hash(fact_check: FactCheck, models: Sequence[str]) -> str:
    """Return the hash an import before 2026-12 stored: the fields and the embedding models.

    For the migration that rewrites such hashes (storage m032/p009), so an index imported then
    is not embedded again by the next import.
    """
    return _digest({**hashed_fields(fact_check), "models": sorted(models)})


def hashed_fields(fact_check: FactCheck) -> dict[str, object]:
    """Return the fields of a review its content hash is of."""
    return {
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
    }


def _digest(fields: Mapping[str, object]) -> str:
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
    hashes = {url: fact_check_hash(fc) for url, fc in batch.items()}
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


async def embed_missing(
    index: VectorStore,
    embedder: Embedder,
    *,
    batch_size: int = DEFAULT_BATCH,
    progress: Callable[[EmbedCounts], None] | None = None,
    publish_seconds: float = PUBLISH_SECONDS,
) -> EmbedCounts:
    """Embed, with embedder, every review that has no vector of its model; store batch by batch.

    Resumable by construction: each batch is stored in one transaction and the next is listed
    after it, so a pass cut short (an error, a stopped process) continues where it stopped when
    run again. A review changed by an import while its batch was embedded is not stored (the
    import gave it new vectors; a later pass embeds its new text for the models it lacks). The
    index's change key moves at most every `publish_seconds` and when the pass ends, even by an
    error: each move makes a running matcher rebuild its snapshot (8 s at 200,000 reviews).

    Failure policy: an embedder's or the index's error propagates after the batches before it
    are stored (and published).
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, not {batch_size}")
    started = time.monotonic()
    counts = EmbedCounts(model=embedder.name, missing=index.count_missing_vectors(embedder.name))
    after, unpublished, published_at = 0, False, started
    try:
        while todo := index.fact_checks_missing_vector(
            embedder.name, after=after, limit=batch_size
        ):
            after = todo[-1][0]
            reviews = index.get_fact_checks([row_id for row_id, _ in todo])
            todo = [(row_id, digest) for row_id, digest in todo if row_id in reviews]
            texts = [reviews[row_id].matching_text() for row_id, _ in todo]
            if texts:
                matrix = np.asarray(await embedder.embed(texts, role="query"), dtype=np.float32)
                rows = [(row_id, digest, matrix[i]) for i, (row_id, digest) in enumerate(todo)]
                stored = index.store_fact_check_vectors(embedder.name, rows)
                counts.embedded += stored
                counts.stale += len(rows) - stored
                unpublished = unpublished or stored > 0
            now = time.monotonic()
            if unpublished and now - published_at >= publish_seconds:
                index.publish_fact_check_vectors()
                unpublished, published_at = False, now
            counts.seconds = now - started
            if progress is not None:
                progress(counts)
    finally:
        if unpublished:
            index.publish_fact_check_vectors()
    counts.seconds = time.monotonic() - started
    return counts


def _url_key(url: str) -> int:
    # 8 bytes a URL (about 70 with the set's own): what a run holds per review it has read
    return int.from_bytes(hashlib.blake2b(url.encode("utf-8"), digest_size=8).digest(), "big")
