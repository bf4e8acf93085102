"""Capture the logs an operator gets at DEBUG, and find what must never be in them."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from bots.logs import LIBRARY_FLOORS, handler, quiet_libraries


@contextmanager
def debug_logs() -> Iterator[io.StringIO]:
    """Yield what factbot's own handler writes at FACTBOT_LOG_LEVEL=DEBUG meanwhile."""
    root = logging.getLogger()
    out = io.StringIO()
    capture = handler(out)
    names = ["", *LIBRARY_FLOORS, "uvicorn.access"]
    levels = {name: logging.getLogger(name).level for name in names}
    root.addHandler(capture)
    root.setLevel(logging.DEBUG)
    quiet_libraries("DEBUG")
    try:
        yield out
    finally:
        root.removeHandler(capture)
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


def leaks(logs: str, secrets: Iterable[str]) -> list[str]:
    """Return the secrets found in logs, each with the first line holding it."""
    found = []
    for secret in secrets:
        line = next((ln for ln in logs.splitlines() if secret in ln), None)
        if line is not None:
            found.append(f"{secret!r} in: {line[:300]}")
    return found
