"""robots.txt (RFC 9309): the rules of each origin, fetched once and kept in memory a while.

`urllib.robotparser` reads the file into groups. Matching is done here, because the standard
library takes the first rule that matches and knows no wildcards (python/cpython#116740,
#83368), while RFC 9309 takes the longest match, prefers "allow" on a tie, and has `*` and a
final `$`. The group is chosen by our product token ("factbot" of "factbot/0.1 (...)"),
compared whole and case-insensitively, else the `*` group.

How the answer to `GET /robots.txt` becomes rules, and for how long they are kept:

    2xx                         the file's rules                          ttl
    401, 403                    disallow everything                       ttl
    other 4xx (404, 410, ...)   allow everything                          ttl
    429, 5xx, network failure,  disallow everything (RFC 9309 2.3.1.4:    error_ttl (short),
    timeout, refused redirect   unreachable means complete disallow)      then asked again

Failure policy: `RobotsCache.check` raises `RobotsDisallowedError` when the rules forbid a URL,
and `UnsafeURLError` when the origin itself is refused while robots.txt is fetched (its name
now resolves elsewhere); every other failure to read robots.txt becomes rules, as above.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote
from urllib.robotparser import RobotFileParser

import httpx

from pipeline.errors import FetchError, RobotsDisallowedError, UnsafeURLError

log = logging.getLogger(__name__)

ROBOTS_PATH = "/robots.txt"


@dataclass(frozen=True)
class RobotsRules:
    """What one origin's robots.txt lets us fetch."""

    rules: tuple[tuple[str, bool], ...] = ()  # (path pattern, allowed) of the group for us
    blanket: bool | None = None  # allow (True) or disallow (False) everything, whatever rules say
    source: str = "robots.txt"  # where the rules came from, for messages
    temporary: bool = False  # robots.txt was unreachable: ask again soon

    def refusal(self, path: str) -> str | None:
        """Return why path (with its query) may not be fetched, or None when it may."""
        if self.blanket is not None:
            return None if self.blanket else f"{self.source}: nothing may be fetched"
        target = unquote(path) or "/"
        if target == ROBOTS_PATH:
            return None
        best, allowed, winner = -1, True, ""
        for pattern, allow in self.rules:
            longer = len(pattern) > best or (len(pattern) == best and allow)
            if longer and _matches(pattern, target):
                best, allowed, winner = len(pattern), allow, pattern
        return None if allowed else f"{self.source} disallows {winner!r}"


def product_token(user_agent: str) -> str:
    """Return the product token of a User-Agent ("factbot" of "factbot/0.1 (+url)")."""
    words = user_agent.split("/", 1)[0].split()
    return words[0].lower() if words else ""


def parse_robots(text: str, product: str) -> RobotsRules:
    """Return the rules of the group of text that applies to product, else of the `*` group."""
    parser = RobotFileParser()
    parser.parse(text.splitlines())
    # Attributes robotparser fills in parse() but does not declare (no stubs for them).
    entries: list[Any] = getattr(parser, "entries", [])
    default: Any = getattr(parser, "default_entry", None)
    ours = [e for e in entries if any(product_token(a) == product for a in e.useragents)]
    if not ours and default is not None:
        ours = [default]
    # robotparser stores paths percent-quoted ("*" as "%2A"); the patterns need them back.
    rules = tuple(
        (unquote(line.path), bool(line.allowance))
        for entry in ours
        for line in entry.rulelines
        if line.path
    )
    return RobotsRules(rules=rules)


def rules_for_status(status: int) -> RobotsRules:
    """Return the rules implied by a robots.txt answer that carried no file."""
    if status in (401, 403):
        return RobotsRules(blanket=False, source=f"robots.txt answered HTTP {status}")
    if 400 <= status < 500 and status != 429:
        return RobotsRules(blanket=True, source=f"robots.txt answered HTTP {status}")
    return unreachable(f"HTTP {status}")


def unreachable(reason: str) -> RobotsRules:
    """Return the complete disallow that holds while robots.txt cannot be read."""
    return RobotsRules(
        blanket=False, source=f"robots.txt is unreachable ({reason})", temporary=True
    )


class RobotsCache:
    """Rules per origin, loaded once even when asked for concurrently, kept for a while.

    `fetch_file(url)` returns the body of robots.txt at url (vetted, capped and timed by the
    fetcher) or raises the fetcher's `FetchError` or `UnsafeURLError`.
    """

    def __init__(
        self,
        fetch_file: Callable[[str], Awaitable[bytes]],
        *,
        user_agent: str,
        ttl: float,
        error_ttl: float,
        max_origins: int = 1024,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._fetch_file = fetch_file
        self._product = product_token(user_agent)
        self._ttl = ttl
        self._error_ttl = error_ttl
        self._max = max_origins
        self._clock = clock
        self._entries: OrderedDict[str, tuple[float, RobotsRules]] = OrderedDict()
        self._loading: dict[str, asyncio.Task[RobotsRules]] = {}
        self.loads = 0  # robots.txt requests made

    async def check(self, url: httpx.URL) -> None:
        """Raise RobotsDisallowedError unless url's robots.txt lets us fetch it."""
        rules = await self.rules_for(f"{url.scheme}://{url.netloc.decode('ascii')}")
        refusal = rules.refusal(url.raw_path.decode("ascii"))
        if refusal is not None:
            raise RobotsDisallowedError(str(url), refusal)

    async def rules_for(self, origin: str) -> RobotsRules:
        """Return the rules of origin ("https://host:port"), loading them when not fresh."""
        entry = self._entries.get(origin)
        if entry is not None and entry[0] > self._clock():
            self._entries.move_to_end(origin)
            return entry[1]
        task = self._loading.get(origin)
        if task is None:
            task = asyncio.create_task(self._refresh(origin))
            self._loading[origin] = task
        # One caller giving up must not cancel the load the others wait for.
        return await asyncio.shield(task)

    def close(self) -> None:
        """Cancel loads still in flight."""
        for task in self._loading.values():
            if not task.get_loop().is_closed():  # a closed loop has nothing left to run
                task.cancel()
        self._loading.clear()

    async def _refresh(self, origin: str) -> RobotsRules:
        try:
            self.loads += 1
            rules = await self._load(origin)
            log.info("robots.txt read", extra={"origin": origin, "source": rules.source})
            ttl = self._error_ttl if rules.temporary else self._ttl
            self._entries[origin] = (self._clock() + ttl, rules)
            self._entries.move_to_end(origin)
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)
            return rules
        finally:
            self._loading.pop(origin, None)

    async def _load(self, origin: str) -> RobotsRules:
        url = origin + ROBOTS_PATH
        try:
            body = await self._fetch_file(url)
        except UnsafeURLError as exc:
            if exc.url == url:
                raise  # the origin itself is refused (its DNS answer changed): not a robots matter
            return unreachable(f"redirect refused: {exc.reason}")
        except FetchError as exc:
            return rules_for_status(exc.status) if exc.status else unreachable(exc.reason)
        return parse_robots(body.decode("utf-8", errors="replace"), self._product)


def _matches(pattern: str, path: str) -> bool:
    """Match an RFC 9309 path pattern (`*` any run, final `$` the end) against path.

    Greedy leftmost matching of the literal pieces is exact for `*`-only patterns and takes
    linear passes, so a hostile robots.txt cannot make matching backtrack exponentially.
    """
    anchored = pattern.endswith("$")
    if anchored:
        pattern = pattern[:-1]
    pieces = pattern.split("*")
    if not path.startswith(pieces[0]):
        return False
    if len(pieces) == 1:
        return not anchored or len(path) == len(pattern)
    position = len(pieces[0])
    for piece in pieces[1:-1]:
        found = path.find(piece, position)
        if found < 0:
            return False
        position = found + len(piece)
    last = pieces[-1]
    if anchored:
        return path.endswith(last) and len(path) - len(last) >= position
    return path.find(last, position) >= 0
