"""robots.txt (RFC 9309): the rules of each origin, fetched once and kept in memory a while.

Parsing and matching are protego's: the longest match wins, "allow" wins a tie, `*` matches any
run and a final `$` the end (the standard library takes the first match and knows no wildcards,
python/cpython#116740, #83368). The group is chosen here, by our product token ("factbot" of
"factbot/0.1 (...)") compared whole and case-insensitively with each group's ("FactBot" of
"FactBot/2.0"), else the `*` group: protego alone would take "User-agent: fact" for ours.

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
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import httpx
from protego import Protego

from pipeline.errors import FetchError, RobotsDisallowedError, UnsafeURLError
from pipeline.util.clock import SYSTEM, Clock

log = logging.getLogger(__name__)

ROBOTS_PATH = "/robots.txt"
# A group for another crawler is renamed to this, which no product token contains, so that
# protego's looser matching ("fact" would match "factbot") never takes it for ours.
_OTHERS = "~others"
# The user-agent lines protego reads: "User-agent: x", "User agent x", "useragent:x".
_USER_AGENT = re.compile(r"(?i)^(\s*user[-\s]?agent)(\s*:\s*|\s+)([^#]*?)\s*(#.*)?$")
# Rules match paths only; an origin that can never be fetched lets protego read a path that
# starts with "//" as a path, not as a host.
_NOWHERE = "http://robots.invalid"


@dataclass(frozen=True)
class RobotsRules:
    """What one origin's robots.txt lets us fetch."""

    parser: Protego | None = None  # the file's rules, with our group renamed to `product`
    product: str = ""  # our product token
    blanket: bool | None = None  # allow (True) or disallow (False) everything, whatever rules say
    source: str = "robots.txt"  # where the rules came from, for messages
    temporary: bool = False  # robots.txt was unreachable: ask again soon

    def refusal(self, path: str) -> str | None:
        """Return why path (with its query) may not be fetched, or None when it may."""
        if self.blanket is not None:
            return None if self.blanket else f"{self.source}: nothing may be fetched"
        target = _NOWHERE + (path or "/")
        if self.parser is None or path == ROBOTS_PATH:
            return None
        if self.parser.can_fetch(target, self.product):
            return None
        rule = _refusing_rule(self.parser, self.product, target)
        return f"{self.source} disallows {rule!r}" if rule else f"{self.source} disallows it"


def product_token(user_agent: str) -> str:
    """Return the product token of a User-Agent ("factbot" of "factbot/0.1 (+url)")."""
    words = user_agent.split("/", 1)[0].split()
    return words[0].lower() if words else ""


def parse_robots(text: str, product: str) -> RobotsRules:
    """Return the rules of the group of text that applies to product, else of the `*` group."""
    lines = [_rename_group(line, product) for line in text.splitlines()]
    return RobotsRules(parser=Protego.parse("\n".join(lines)), product=product)


def _rename_group(line: str, product: str) -> str:
    """Return line, a user-agent line naming us or another crawler renamed to our choice."""
    found = _USER_AGENT.match(line)
    if found is None or not found[3] or found[3] == "*":
        return line
    ours = bool(product) and product_token(found[3]) == product
    return f"{found[1]}{found[2]}{product if ours else _OTHERS}"


def _refusing_rule(parser: Protego, product: str, url: str) -> str | None:
    """Return the pattern of the rule that refuses url, for the message.

    Protego answers only yes or no; which rule said no is read from its rule set, which is
    not public (protego is pinned): without it the refusal names no rule.
    """
    try:
        from protego._utils import _quote_path  # private: imported where its absence is caught

        rule_set = parser._get_matching_rule_set(product)
        quoted = _quote_path(url)
        for rule in rule_set._rules if rule_set is not None else ():
            if rule.value.match(quoted):
                return rule.value._pattern if rule.field == "disallow" else None
    except (ImportError, AttributeError, TypeError):  # a protego whose insides moved
        pass
    return None


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
    fetcher) or raises the fetcher's `FetchError` or `UnsafeURLError`. Entries expire by
    `clock.monotonic()`, so tests move time instead of waiting out a TTL.
    """

    def __init__(
        self,
        fetch_file: Callable[[str], Awaitable[bytes]],
        *,
        user_agent: str,
        ttl: float,
        error_ttl: float,
        max_origins: int = 1024,
        clock: Clock = SYSTEM,
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
        if entry is not None and entry[0] > self._clock.monotonic():
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
            self._entries[origin] = (self._clock.monotonic() + ttl, rules)
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
