"""CPU-bound work off the event loop: a bounded pool of worker threads, injected where needed.

One event loop per process serves the HTTP API, the workers and the platform adapters, so no
stage may hold it with parsing, extraction or clustering. Stages take a `CpuPool` (or None) and
`await run_cpu(pool, fn, *args)`; the composition root builds one pool per process and closes it
at shutdown. Without a pool the work goes to the event loop's default executor
(`asyncio.to_thread`), so direct callers and tests need nothing.

Threads rather than processes: lxml, numpy and torch release the GIL for most of their work, a
page or a batch of vectors need not be pickled, and lazily loaded models stay in one process
(`python -m bench.pages` compares both on this machine).

Failure policy: whatever `fn` raises is raised to the awaiting caller; after `close()` new work
raises RuntimeError.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


def default_threads() -> int:
    """Return the number of CPUs this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class CpuPool:
    """A bounded pool of threads for CPU-bound work, shared by every stage of one process."""

    def __init__(self, threads: int | None = None, *, name: str = "factbot-cpu") -> None:
        self.threads = threads or default_threads()
        if self.threads < 1:
            raise ValueError(f"a CPU pool needs at least one thread, not {self.threads}")
        self.name = name
        self._executor: ThreadPoolExecutor | None = None

    async def run(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Run fn(*args, **kwargs) in a pool thread and return its result."""
        loop = asyncio.get_running_loop()
        # The caller's context (log fields, usage meters) goes with the work, as with to_thread.
        context = contextvars.copy_context()
        call = functools.partial(context.run, fn, *args, **kwargs)
        if self._executor is None:  # first use, or the first use after close()
            self._executor = ThreadPoolExecutor(self.threads, thread_name_prefix=self.name)
        return await loop.run_in_executor(self._executor, call)

    def close(self) -> None:
        """Stop the threads; queued work is cancelled, running work finishes in the background.

        A later `run` starts a fresh pool, so an App closed and used again still works.
        """
        executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)


async def run_cpu(
    pool: CpuPool | None, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs
) -> T:
    """Run fn off the event loop: in pool, or in the loop's default executor without one."""
    if pool is None:
        return await asyncio.to_thread(fn, *args, **kwargs)
    return await pool.run(fn, *args, **kwargs)
