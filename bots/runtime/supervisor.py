"""One way to start and stop a process's parts: `factbot serve`, `worker`, `relay` and `monitor`.

A part is a coroutine function that runs until the process's stop event is set: a worker pool,
the saq relay, a platform listener, the monitor's scheduler, the retention sweep. The
supervisor starts the parts in the order they were added and stops them one way:

    stop set (a signal, the server's shutdown, or an essential part that ended)
      -> every part finishes on its own (a pool lets running jobs end within
         FACTBOT_JOBS__SHUTDOWN_TIMEOUT); parts marked `cancel` are cancelled instead
      -> the closers run, last added first (reply senders, the shared fetcher)
      -> the first error of an essential part is raised again

A part that ends before stop is logged with its error; an `essential` one (the pool of
`factbot worker`, the relay of `factbot relay`) also sets stop, so the process ends with it.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)

Run = Callable[[asyncio.Event], Awaitable[object]]
Close = Callable[[], Awaitable[object]]


@dataclass(frozen=True)
class Part:
    """One long-running piece of a process."""

    name: str
    run: Run
    essential: bool = False  # its end ends the process
    cancel: bool = False  # nothing to finish: cancelled at stop (a sweep, a watcher)


class Supervisor:
    """Start parts in order; stop them, then close what they used, in reverse order."""

    def __init__(self, stop: asyncio.Event | None = None) -> None:
        self.stop = stop or asyncio.Event()
        self.parts: list[Part] = []
        self._closers: list[Close] = []
        self._tasks: dict[asyncio.Task[object], Part] = {}

    def add(self, name: str, run: Run, *, essential: bool = False, cancel: bool = False) -> None:
        """Add a part, started after those added before it."""
        self.parts.append(Part(name, run, essential=essential, cancel=cancel))

    def close_with(self, close: Close) -> None:
        """Run close once every part has ended (closers run last added first)."""
        self._closers.append(close)

    def start(self) -> None:
        """Start every part as a task of the running event loop."""
        for part in self.parts:
            task = asyncio.create_task(_run(part, self.stop), name=part.name)
            task.add_done_callback(self._ended)
            self._tasks[task] = part

    def _ended(self, task: asyncio.Task[object]) -> None:
        part = self._tasks[task]
        if task.cancelled():
            return
        error = task.exception()
        if self.stop.is_set():
            if error is not None:
                log.warning(
                    "part failed while stopping", extra={"part": part.name, "error": repr(error)}
                )
            return
        log.warning(
            "part ended before stop",
            extra={"part": part.name, "error": repr(error) if error else None},
        )
        if part.essential:
            self.stop.set()

    async def shutdown(self) -> None:
        """Set stop, wait for the parts, run the closers; re-raise an essential part's error."""
        self.stop.set()
        for task, part in self._tasks.items():
            if part.cancel:
                task.cancel()
        results = await asyncio.gather(*self._tasks, return_exceptions=True)
        for close in reversed(self._closers):
            try:
                await close()
            except Exception as exc:  # noqa: BLE001 - one failed close must not skip the others
                log.warning("close failed", extra={"error": repr(exc)})
        for part, result in zip(self._tasks.values(), results, strict=True):
            if part.essential and isinstance(result, Exception):
                raise result

    async def run(self) -> None:
        """Start the parts, wait for stop, then shut down."""
        self.start()
        try:
            await self.stop.wait()
        finally:
            await self.shutdown()

    def stop_on_signals(self) -> None:
        """Set stop on SIGTERM or SIGINT (the second SIGINT falls back to KeyboardInterrupt)."""
        loop = asyncio.get_running_loop()

        def on_int() -> None:
            if self.stop.is_set():
                loop.remove_signal_handler(signal.SIGINT)
                raise KeyboardInterrupt
            self.stop.set()

        loop.add_signal_handler(signal.SIGTERM, self.stop.set)
        loop.add_signal_handler(signal.SIGINT, on_int)


async def _run(part: Part, stop: asyncio.Event) -> object:
    return await part.run(stop)
