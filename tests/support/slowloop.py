"""Watching the event loop: asyncio debug mode's slow-callback warnings, collected.

In debug mode asyncio logs "Executing <handle> took N seconds" (logger `asyncio`) for every
callback or task step that runs longer than `loop.slow_callback_duration`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")
SLOW_SECONDS = 0.1


class _SlowCallbacks(logging.Handler):
    """Collects asyncio's slow-callback warnings."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("Executing "):
            self.messages.append(message)


def run_watched(
    work: Callable[[], Awaitable[T]], *, slow: float = SLOW_SECONDS
) -> tuple[T, list[str]]:
    """Run work in a debug-mode event loop; return its result and the slow-callback warnings."""
    handler = _SlowCallbacks()
    logger = logging.getLogger("asyncio")
    logger.addHandler(handler)

    async def main() -> T:
        asyncio.get_running_loop().slow_callback_duration = slow
        return await work()

    try:
        result = asyncio.run(main(), debug=True)
    finally:
        logger.removeHandler(handler)
    return result, handler.messages
