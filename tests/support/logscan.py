"""Capture the logs an operator gets at DEBUG, and find what must never be in them."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from urllib.parse import quote, quote_plus

from bots.logs import LIBRARY_FLOORS, handler, quiet_libraries

# The loggers factbot runs under, its own and the libraries', besides those `LIBRARY_FLOORS`
# holds (and their children, which would otherwise escape the floor): each is set to DEBUG, as
# an operator's FACTBOT_LOG_LEVEL=DEBUG leaves it.
LOGGERS = (
    "bots",
    "pipeline",
    "storage",
    "atproto",
    "atproto_client",
    "mastodon",
    "requests",
    "apscheduler",
    "uvicorn",
    "uvicorn.error",
    "uvicorn.access",
    "uvicorn.asgi",
    "aiohttp",
    "websockets",
    "asyncio",
)
# The stand-ins' own aiohttp servers log here; factbot runs no aiohttp server.
STAND_INS = ("aiohttp.access", "aiohttp.server", "aiohttp.web")


def _factbots(record: logging.LogRecord) -> bool:
    return not record.name.startswith(STAND_INS)


@contextmanager
def debug_logs() -> Iterator[io.StringIO]:
    """Yield what factbot's own handler writes at FACTBOT_LOG_LEVEL=DEBUG meanwhile: the root and
    every logger in `LOGGERS` at DEBUG, the libraries in `LIBRARY_FLOORS` at their floor."""
    root = logging.getLogger()
    out = io.StringIO()
    capture = handler(out)
    capture.addFilter(_factbots)
    names = ["", *LIBRARY_FLOORS, *LOGGERS]
    levels = {name: logging.getLogger(name).level for name in names}
    root.addHandler(capture)
    for name in ["", *LOGGERS]:
        logging.getLogger(name).setLevel(logging.DEBUG)
    quiet_libraries("DEBUG")
    try:
        yield out
    finally:
        root.removeHandler(capture)
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


def leaks(logs: str, secrets: Iterable[str]) -> list[str]:
    """Return the secrets found in logs (as they are or percent-encoded, as in a URL), each with
    the first line holding it."""
    found = []
    for secret in secrets:
        forms = {secret, quote(secret, safe=""), quote_plus(secret, safe="")}
        line = next((ln for ln in logs.splitlines() if any(f in ln for f in forms)), None)
        if line is not None:
            found.append(f"{secret!r} in: {line[:300]}")
    return found
