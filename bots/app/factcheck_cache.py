"""Google Fact Check Tools answers kept in the fact-check index (part of the composition root).

`FactCheckSearch(sink=cache.put)` hands every review of each answer to `put`, inline in the
check's search: `put` only appends them to a bounded in-memory queue (`capacity` reviews; the
reviews that do not fit are dropped and counted in `dropped`) and starts a background task on
the running event loop when none runs. The task imports the queue with `import_fact_checks`
(embedded by the matcher's models, stored unless unchanged) in a thread: the import's
coroutine runs in that thread's own loop, its embeddings in the CPU pool, and each of its index
calls goes back to the store's threads (`store.call` on the service's loop), so neither the
embeddings nor a storage statement ever run on the service's loop.

Failure policy: `put` never raises (a sink must not fail a search); an import that fails is
logged and its reviews are counted in `failed`, and the next answers are imported as usual.
`drain` imports what is queued and returns when the queue is empty (shutdown and tests).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, Literal, TypeVar

import numpy as np
import numpy.typing as npt

from pipeline.embedding.embedder import Embedder
from pipeline.factchecks.loading import DEFAULT_BATCH, ImportCounts, import_fact_checks
from pipeline.records.factchecks import FactCheck
from storage import Store

log = logging.getLogger(__name__)
T = TypeVar("T")
CAPACITY = 2000  # reviews waiting at most (a Google answer holds 10 to 100)
_HOP_TIMEOUT = 120.0  # seconds an index call may wait for a storage thread


class FactCheckCache:
    """A bounded queue of reviews from search answers, imported into the index off the loop."""

    def __init__(
        self,
        store: Store,
        embedders: Callable[[], Sequence[Embedder]],
        *,
        capacity: int = CAPACITY,
        batch_size: int = DEFAULT_BATCH,
    ) -> None:
        self.store = store
        self.embedders = embedders  # called at import time: the models load on first use
        self.capacity = capacity
        self.batch_size = batch_size
        self.pending: deque[FactCheck] = deque()
        self.dropped = 0  # reviews that found the queue full
        self.failed = 0  # reviews whose import failed
        self.imported = 0  # reviews added or updated
        self._task: asyncio.Task[None] | None = None

    def put(self, reviews: Sequence[FactCheck]) -> None:
        """Queue reviews for the index (the search provider's sink); never blocks or raises."""
        room = max(0, self.capacity - len(self.pending))
        self.pending.extend(reviews[:room])
        if len(reviews) > room:
            self.dropped += len(reviews) - room
            log.warning(
                "fact-check cache full; reviews dropped",
                extra={"dropped": len(reviews) - room, "dropped_total": self.dropped},
            )
        if self._task is not None and not self._task.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop: imported by the next put on one, or by drain
        self._task = loop.create_task(self._run(), name="factcheck-cache")

    async def drain(self) -> None:
        """Import what is queued; return when the queue is empty."""
        task = self._task
        if task is not None and not task.done() and task.get_loop() is asyncio.get_running_loop():
            await task
        await self._run()

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while self.pending:
            batch = list(self.pending)
            self.pending.clear()
            try:
                counts = await asyncio.to_thread(self._import, batch, loop)
            except Exception as exc:  # noqa: BLE001 - a cache: one failed batch never stops it
                self.failed += len(batch)
                log.warning(
                    "fact-check cache import failed",
                    extra={"reviews": len(batch), "error": repr(exc)},
                )
                continue
            self.imported += counts.added + counts.updated
            log.info("fact-check answers cached", extra={"counts": counts.summary()})

    def _import(self, batch: list[FactCheck], loop: asyncio.AbstractEventLoop) -> ImportCounts:
        """Run the import in this (worker) thread's own event loop (module doc)."""
        return asyncio.run(
            import_fact_checks(
                batch,
                index=_StoreHop(self.store, loop),
                embedders=self.embedders(),
                batch_size=self.batch_size,
            )
        )


class _StoreHop:
    """The fact-check index, its calls run by the store's threads for the service's loop."""

    def __init__(self, store: Store, loop: asyncio.AbstractEventLoop) -> None:
        self.store = store
        self.loop = loop

    def _call(self, call: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(call, self.loop).result(_HOP_TIMEOUT)

    def stored_fact_check_hashes(self, urls: Sequence[str]) -> dict[str, str]:
        """Return the content hash stored for each of urls that is in the index."""
        index = self.store.fact_checks
        return self._call(self.store.call(index.stored_fact_check_hashes, urls))

    def upsert_fact_checks(
        self, rows: Sequence[tuple[FactCheck, str, Mapping[str, npt.NDArray[np.float32]]]]
    ) -> Sequence[Literal["added", "updated", "unchanged"]]:
        """Store (review, content hash, vectors by model) rows in one transaction."""
        index = self.store.fact_checks
        return self._call(self.store.call(index.upsert_fact_checks, rows))
