"""Storage off the event loop: a small thread pool per store, and a guard that proves it.

The repositories are synchronous (plain SQL through sqlite-utils or psycopg), and the service
runs its API, worker pool, platforms and dashboard in one asyncio event loop. A statement run
on the loop holds every other coroutine until the database answers: a claim waiting on SQLite's
write lock, or a round trip to PostgreSQL, is a stall for every open request. So code in
`async def` functions hands each storage call to `Store.call`, which runs it in this pool's
threads (with the caller's contextvars, as `asyncio.to_thread` does) and awaits the answer.

The pool is bounded (`THREADS` by default; the setting `FACTBOT_STORAGE_THREADS`) because each
of its threads holds a connection of its own (storage/tx.py, storage/pg.py): more threads would
mean more connections without more throughput, since SQLite takes one writer at a time and the
PostgreSQL transactions are short.
A call that has started runs to its end when its awaiting coroutine is cancelled (a thread
cannot be interrupted), so a transaction is never cut in half; one still waiting for a thread
is dropped whole. `close` waits for the calls in flight.

`LoopGuard` is for tests: once armed on a store (`Store.guard_loop`), every statement run on a
thread that is running an event loop is recorded with its stack and raises
`StorageOnLoopError` (or is only recorded, for a test that sorts what it found), so a storage
call that slipped past `Store.call` fails the test that drives it instead of stalling
production. Disarmed (the default), it costs one attribute test per statement.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import threading
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Generic, ParamSpec, Protocol, TypeVar

P = ParamSpec("P")
T = TypeVar("T")


class _Closable(Protocol):
    def close(self) -> None: ...


C = TypeVar("C", bound=_Closable)

THREADS = 4  # storage threads per store; see the module docstring


class StorageOnLoopError(RuntimeError):
    """A storage statement ran on a thread running an event loop (the guard is armed)."""


class StorageThreads:
    """A bounded pool of threads that run a store's synchronous calls for async code."""

    def __init__(self, size: int = THREADS, *, name: str = "factbot-storage") -> None:
        self.size = size
        self._executor = ThreadPoolExecutor(max_workers=size, thread_name_prefix=name)

    async def call(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        """Run fn(*args, **kwargs) in a storage thread and return what it returns."""
        loop = asyncio.get_running_loop()
        context = contextvars.copy_context()
        bound = functools.partial(context.run, fn, *args, **kwargs)
        return await loop.run_in_executor(self._executor, bound)

    def close(self) -> None:
        """Stop the threads once the calls in flight have ended."""
        self._executor.shutdown(wait=True)


def on_loop() -> bool:
    """Return whether this thread is running an event loop now."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


class LoopGuard:
    """Refuses storage statements on event-loop threads, once armed (tests arm it)."""

    def __init__(self) -> None:
        self.armed = False
        self.raises = True  # False: record only (a test that sorts what it found)
        self.violations: list[str] = []
        self._lock = threading.Lock()

    def check(self) -> None:
        """Raise StorageOnLoopError (and record where) when armed and on a loop's thread."""
        if not self.armed or not on_loop():
            return
        where = "".join(traceback.format_stack(limit=40)[:-2])
        with self._lock:
            self.violations.append(where)
        if self.raises:
            raise StorageOnLoopError(f"a storage statement ran on the event loop:\n{where}")


class PerThread(Generic[C]):
    """Each thread's own connection, and every one opened, for closing them from one thread.

    Both engines keep a connection per thread (storage/tx.py, storage/pg.py); this is their
    common registry.
    """

    def __init__(self) -> None:
        self._local = threading.local()
        self._opened: list[C] = []
        self._lock = threading.Lock()

    def get(self) -> C | None:
        """Return this thread's connection, or None before its first."""
        found: C | None = getattr(self._local, "conn", None)
        return found

    def set(self, conn: C) -> None:
        """Make conn this thread's connection; `close_all` closes it with the others."""
        self._local.conn = conn
        with self._lock:
            self._opened.append(conn)

    def close_all(self) -> None:
        """Close every thread's connection."""
        with self._lock:
            opened, self._opened = self._opened, []
        for conn in opened:
            conn.close()
