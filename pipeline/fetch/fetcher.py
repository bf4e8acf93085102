"""The one SSRF-safe HTTP fetcher.

Every hop of a fetch is vetted before a byte is sent: the URL must be http(s) without
credentials, and every address its host resolves to must be public. The request then goes to
the vetted address itself (with the original `Host` header and TLS server name), so a second DNS
answer cannot redirect it elsewhere. Redirects are followed by hand and vetted the same way.
Bodies are streamed and decompressed here, under a byte cap, so a gzip bomb stops at the cap.

Politeness: each hop first obeys its origin's robots.txt (`pipeline.fetch.robots`, fetched through
this same vetted path, smaller and quicker, while the hop's own host is resolved and vetted),
then waits for a slot under the per-host and global limits (`pipeline.fetch.gates`). `total_timeout`
counts the time spent resolving, sending and reading, not the time spent waiting for a slot or
for robots.txt (which has its own timeout). One fetcher is meant to be shared by every check of
a process: its robots.txt cache and limits only work across the fetches that go through it.

A `PageCache` answers before any of that: a hit makes no request at all, robots.txt included.
Only 2xx text responses are put in it.

Failure policy: `Fetcher.fetch` raises `UnsafeURLError` when the policy refuses a URL or an
address, `RobotsDisallowedError` (a `FetchError`) when robots.txt forbids a hop, and
`FetchError` for every other failure (status, size, time, content type, network); a challenge
page answering 403/429/503 says "bot protection (...)" in the reason. Nothing else escapes it;
a `PageCache` must not raise either.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import ipaddress
import logging
import re
import ssl
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from http.cookiejar import CookieJar, DefaultCookiePolicy
from types import TracebackType
from typing import Protocol, Self

import charset_normalizer
import httpx

from pipeline.errors import FetchError, UnsafeURLError
from pipeline.fetch.addresses import (
    MAX_URL_LENGTH,
    Resolver,
    check_url,
    is_public_address,
    parse_ip,
    resolve_host,
)
from pipeline.fetch.gates import HostGates
from pipeline.fetch.robots import RobotsCache
from pipeline.fetch.walls import BOT_STATUSES, detect_wall
from pipeline.records.domain import utcnow
from pipeline.util.clock import SYSTEM, Clock

__all__ = [
    "MAX_URL_LENGTH",
    "FetchPolicy",
    "FetchedPage",
    "Fetcher",
    "Resolver",
    "check_url",
    "is_public_address",
    "resolve_host",
]

log = logging.getLogger(__name__)

HTML = "text/html"
XHTML = "application/xhtml+xml"
XML_TYPES = ("application/xml", "text/xml")
RSS = "application/rss+xml"
ATOM = "application/atom+xml"
RDF = "application/rdf+xml"
TEXT = "text/plain"
JSON_TYPES = ("application/json", "application/ld+json", "application/feed+json")
_TEXT_TYPES = frozenset({HTML, XHTML, *XML_TYPES, RSS, ATOM, RDF, TEXT, *JSON_TYPES})

_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (b"\xfe\xff", "utf-16-be"))
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_HTML_STARTS = (b"<!doctype html", b"<html", b"<head", b"<body", b"<title", b"<meta", b"<!--")
_WIDE_CODECS = ("utf-16", "utf-32")
_HIGH_BYTES = re.compile(rb"[\x80-\xff]+")
_WEB_CODECS = (
    *("utf_", "cp125", "iso8859_", "koi8_", "mac_cyrillic", "shift_jis", "cp932", "euc_jp"),
    *("iso2022_jp", "gb18030", "gb2312", "gbk", "big5", "euc_kr", "cp949", "cp874"),
)
# Enough of an error page to recognise a bot-protection challenge.
_ERROR_BODY_BYTES = 65_536


@dataclass(frozen=True)
class FetchPolicy:
    """What the fetcher may fetch and how long, far and much it may go."""

    max_bytes: int = 5_000_000
    connect_timeout: float = 5.0
    total_timeout: float = 20.0
    max_redirects: int = 5
    allow_private: bool = False  # only tests set this: lets loopback/private addresses through
    user_agent: str = "factbot/0.1 (+https://github.com/factbot/factbot)"
    content_types: tuple[str, ...] = (HTML, XHTML, *XML_TYPES, RSS, ATOM, RDF, TEXT, *JSON_TYPES)
    # Narrower than allow_private: networks let through although not public, e.g. a test server
    # on 127.0.0.2 while the rest of loopback and every private network stays refused.
    allowed_networks: tuple[str, ...] = ()
    max_concurrency: int = 16  # requests in flight at once, over all hosts
    per_host: int = 2  # requests in flight at once to one host
    respect_robots: bool = True
    robots_max_bytes: int = 500_000  # RFC 9309 asks parsers to read at least 500 KiB
    robots_timeout: float = 5.0
    robots_ttl: float = 3600.0  # seconds an origin's robots.txt is trusted (RFC 9309: <= 24 h)
    robots_error_ttl: float = 300.0  # seconds an unreachable robots.txt means "disallow all"


@dataclass(frozen=True)
class FetchedPage:
    """A fetched response body with where it came from."""

    url: str  # final URL after redirects
    requested_url: str
    status: int
    content_type: str  # media type, lower-case, no parameters
    charset: str | None  # from the Content-Type header, if any
    body: bytes
    redirects: tuple[str, ...]  # every URL that answered with a redirect, in order
    fetched_at: datetime | None = None
    from_cache: bool = False

    def text(self) -> str:
        """Decode the body: BOM, valid UTF-8, declared charsets, then detection."""
        for bom, codec in _BOMS:
            if self.body.startswith(bom):
                return self.body[len(bom) :].decode(codec, errors="replace")
        meta = _META_CHARSET.search(self.body[:2048])
        declared = [self.charset, meta.group(1).decode("ascii") if meta else None]
        # Markup is ASCII, so a body without NUL bytes is not UTF-16/32 whatever it declares;
        # and legacy text is almost never valid UTF-8 by accident, so valid UTF-8 is UTF-8
        # even where a page wrongly declares windows-1252 or latin-1.
        wide = b"\x00" in self.body[:1024]
        # ISO-2022 text is 7-bit, hence valid UTF-8 too; its escape sequences tell it apart.
        shifted = b"\x1b" in self.body and any(c and "2022" in c for c in declared)
        if not wide and not shifted:
            try:
                return self.body.decode("utf-8")
            except UnicodeDecodeError:
                pass
        for candidate in declared:
            if not candidate or _is_wide(candidate) != wide:
                continue
            try:
                return self.body.decode(candidate)
            except (LookupError, UnicodeDecodeError):
                continue  # unknown or wrong declarations are common; try the next guess
        runs = _HIGH_BYTES.findall(self.body, 0, 1_000_000)
        if not wide and 0 < len(runs) <= 16 and all(len(run) <= 2 for run in runs):
            # A few lone accented letters are too little for detection, which guesses CJK.
            return self.body.decode("cp1252", errors="replace")
        # Only encodings the web uses (WHATWG): DOS code pages fit short texts as well as any.
        matches = [m for m in charset_normalizer.from_bytes(self.body) if _is_web(m.encoding)]
        if not matches:
            return self.body.decode("utf-8", errors="replace")
        best = min(matches, key=lambda m: m.chaos)
        # On short texts detection cannot tell the Western single-byte codecs apart; among
        # equally plausible guesses take windows-1252, the web's legacy default (WHATWG).
        for match in matches:
            if "cp1252" in match.could_be_from_charset and match.chaos <= best.chaos + 0.01:
                return self.body.decode("cp1252", errors="replace")
        return str(best)


@dataclass(frozen=True)
class _Kind:
    """How one kind of fetch reads its response: pages, or robots.txt files."""

    max_bytes: int
    timeout: float
    content_types: tuple[str, ...] | None  # None: any type
    truncate: bool = False  # keep the first max_bytes instead of failing
    robots: bool = False  # obey robots.txt
    walls: bool = False  # name bot-protection challenges in error statuses
    accept: str = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.5"
    sniff_html: bool = True  # an untyped body is accepted when it looks like HTML


class PageCache(Protocol):
    """Pages fetched earlier, by requested URL. Implementations must not raise."""

    def get(self, url: str) -> FetchedPage | None:
        """Return the page fetched from url if a fresh copy is kept."""
        ...

    def put(self, page: FetchedPage) -> None:
        """Keep page (a 2xx text response) for later requests of page.requested_url."""
        ...


class Fetcher:
    """Fetches pages over one httpx client under one policy."""

    def __init__(
        self,
        policy: FetchPolicy = FetchPolicy(),  # frozen, so one shared default is safe
        *,
        resolver: Resolver | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        cache: PageCache | None = None,
        clock: Clock = SYSTEM,
        verify: ssl.SSLContext | bool = True,  # a shared context: loading CA files takes 0.1 s
    ) -> None:
        self.policy = policy
        self.cache = cache
        self._resolver = resolver or resolve_host
        self._allowed = tuple(ipaddress.ip_network(n) for n in policy.allowed_networks)
        self.gates = HostGates(per_host=policy.per_host, total=policy.max_concurrency)
        self.robots = RobotsCache(
            self._fetch_robots_file,
            user_agent=policy.user_agent,
            ttl=policy.robots_ttl,
            error_ttl=policy.robots_error_ttl,
            clock=clock,
        )
        self._page = _Kind(
            policy.max_bytes,
            policy.total_timeout,
            policy.content_types,
            robots=policy.respect_robots,
            walls=True,
        )
        self._robots_file = _Kind(
            policy.robots_max_bytes, policy.robots_timeout, None, truncate=True
        )
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(policy.total_timeout, connect=policy.connect_timeout),
            follow_redirects=False,  # every hop must be vetted, so redirects are ours
            trust_env=False,  # a proxy from the environment would bypass address pinning
            # Requests go to bare IPs, so cookie domains would match across sites: keep none.
            cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])),
            # Pooled connections are keyed by IP, not host: reusing one could send a request
            # for one site over another's TLS session. The gates bound connections in use.
            limits=httpx.Limits(
                max_connections=max(100, policy.max_concurrency), max_keepalive_connections=0
            ),
            headers={"User-Agent": policy.user_agent},
            transport=transport,
            verify=verify,
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    @property
    def closed(self) -> bool:
        """Return whether aclose() was called (a closed fetcher sends nothing more)."""
        return self._client.is_closed

    async def aclose(self) -> None:
        """Close the underlying HTTP client and stop robots.txt loads in flight."""
        self.robots.close()
        await self._client.aclose()

    async def fetch(self, url: str) -> FetchedPage:
        """Fetch url under the policy, from the cache when it holds a fresh copy."""
        with _failures_logged():
            start = check_url(url)
            cached = self.cache.get(url) if self.cache is not None else None
            if cached is not None:
                log.info("fetched from cache", extra={"url": url, "bytes": len(cached.body)})
                return cached
            page = await self._fetch(url, start, self._page)
        log.info(
            "fetched",
            extra={"url": page.url, "status": page.status, "bytes": len(page.body)},
        )
        if self.cache is not None and 200 <= page.status < 300 and _is_text(page.content_type):
            self.cache.put(page)
        return page

    async def fetch_media(
        self, url: str, *, content_types: tuple[str, ...], max_bytes: int
    ) -> FetchedPage:
        """Fetch a binary resource (an image) of one of content_types, at most max_bytes.

        The same vetting, robots.txt and limits as pages; never cached, and a response
        without a Content-Type is refused (the caller cannot tell what it is).
        """
        kind = _Kind(
            max_bytes,
            self.policy.total_timeout,
            content_types,
            robots=self.policy.respect_robots,
            accept=",".join(content_types),
            sniff_html=False,
        )
        with _failures_logged():
            page = await self._fetch(url, check_url(url), kind)
        log.info(
            "fetched media",
            extra={"url": page.url, "content_type": page.content_type, "bytes": len(page.body)},
        )
        return page

    async def _fetch(self, requested: str, current: httpx.URL, kind: _Kind) -> FetchedPage:
        redirects: list[str] = []
        budget = kind.timeout  # seconds left for resolving, sending and reading
        clock = asyncio.get_running_loop().time
        while True:
            # robots.txt is read while the host is resolved and vetted: neither needs the other,
            # and nothing is sent to the page before both have said yes. The vetting's verdict
            # comes first, so an unsafe URL is refused as unsafe whatever robots.txt says.
            robots = asyncio.ensure_future(self.robots.check(current)) if kind.robots else None
            try:
                started = clock()
                try:
                    async with asyncio.timeout(budget):
                        addresses = await self._vet(current)
                except TimeoutError as exc:
                    raise FetchError(requested, f"took longer than {kind.timeout}s") from exc
                budget -= clock() - started
                if robots is not None:
                    await robots
            finally:
                if robots is not None:
                    _forget(robots)
            async with self.gates.slot(current.host):
                started = clock()
                try:
                    async with asyncio.timeout(budget):
                        response = await self._open(current, addresses, kind.accept)
                        try:
                            target = _redirect_target(current, response)
                            if target is None:
                                return await self._read(
                                    requested, current, response, redirects, kind
                                )
                        finally:
                            await response.aclose()
                except TimeoutError as exc:
                    raise FetchError(requested, f"took longer than {kind.timeout}s") from exc
                except (httpx.HTTPError, httpx.StreamError, httpx.InvalidURL, OSError) as exc:
                    raise FetchError(str(current), f"{type(exc).__name__}: {exc}") from exc
                except zlib.error as exc:
                    raise FetchError(str(current), f"bad compressed body: {exc}") from exc
                finally:
                    budget -= clock() - started
            if len(redirects) >= self.policy.max_redirects:
                raise FetchError(requested, f"more than {self.policy.max_redirects} redirects")
            redirects.append(str(current))
            current = check_url(target)

    async def _fetch_robots_file(self, url: str) -> bytes:
        """Return the first robots_max_bytes of the robots.txt at url, any content type."""
        return (await self._fetch(url, check_url(url), self._robots_file)).body

    async def _vet(self, url: httpx.URL) -> list[str]:
        """Return the addresses of url's host, refusing the URL if any of them is not allowed."""
        host = url.host
        if parse_ip(host) is not None:
            addresses = [host]
        else:
            port = url.port or (443 if url.scheme == "https" else 80)
            try:
                addresses = await self._resolver(url.raw_host.decode("ascii"), port)
            except OSError as exc:
                raise FetchError(str(url), f"cannot resolve {host}: {exc}") from exc
            if not addresses:
                raise FetchError(str(url), f"{host} has no addresses")
        for address in addresses:
            if not self._address_allowed(address):
                raise UnsafeURLError(str(url), f"{host} is at non-public address {address}")
        return addresses

    def _address_allowed(self, address: str) -> bool:
        if self.policy.allow_private or is_public_address(address):
            return True
        ip = parse_ip(address)
        return ip is not None and any(
            ip.version == net.version and ip in net for net in self._allowed
        )

    async def _open(self, url: httpx.URL, addresses: list[str], accept: str) -> httpx.Response:
        """Send the request to the first vetted address that accepts a connection."""
        failure: httpx.TransportError | None = None
        for address in addresses:
            extensions: dict[str, str] = {}
            if url.scheme == "https" and address != url.host:
                # Certificate checks and SNI must use the name, not the address we dial.
                extensions["sni_hostname"] = url.raw_host.decode("ascii")
            request = self._client.build_request(
                "GET",
                url.copy_with(host=address),
                headers={
                    "Host": url.netloc.decode("ascii"),
                    "Accept": accept,
                    "Accept-Encoding": "gzip, deflate",  # what _read_body can inflate
                },
                extensions=extensions,
            )
            try:
                return await self._client.send(request, stream=True)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                log.debug("connect failed", extra={"url": str(url), "address": address})
                failure = exc
        raise FetchError(str(url), f"cannot connect: {failure}")

    async def _read(
        self,
        requested: str,
        url: httpx.URL,
        response: httpx.Response,
        redirects: list[str],
        kind: _Kind,
    ) -> FetchedPage:
        status = response.status_code
        if status >= 300:
            reason = f"HTTP status {status}"
            if kind.walls and status in BOT_STATUSES:
                head = await self._read_body(url, response, _ERROR_BODY_BYTES, truncate=True)
                wall = detect_wall(head.decode("utf-8", errors="replace"), status, response.headers)
                reason = f"{reason}: {wall}" if wall else reason
            raise FetchError(str(url), reason, status=status)
        content_type, charset = _parse_content_type(response.headers.get("content-type", ""))
        types = kind.content_types
        if content_type and types is not None and content_type not in types:
            raise FetchError(
                str(url), f"content type {content_type} is not accepted", status=status
            )
        declared = response.headers.get("content-length", "").strip()
        if not kind.truncate and declared.isdigit() and int(declared) > kind.max_bytes:
            raise FetchError(str(url), f"declares {declared} bytes, over the limit", status=status)
        body = await self._read_body(url, response, kind.max_bytes, truncate=kind.truncate)
        if not content_type and types is not None:
            if not kind.sniff_html:
                raise FetchError(str(url), "no content type", status=status)
            if not _looks_like_html(body):
                raise FetchError(
                    str(url), "no content type and the body is not HTML", status=status
                )
            content_type = HTML
        return FetchedPage(
            url=str(url),
            requested_url=requested,
            status=status,
            content_type=content_type,
            charset=charset,
            body=body,
            redirects=tuple(redirects),
            fetched_at=utcnow(),
        )

    async def _read_body(
        self, url: httpx.URL, response: httpx.Response, limit: int, *, truncate: bool
    ) -> bytes:
        """Read and decompress the body, stopping as soon as it passes limit.

        Past the limit the body is refused, or cut to limit bytes when truncate is set.
        """
        coding = response.headers.get("content-encoding", "").strip().lower()
        if coding not in ("", "identity", "gzip", "x-gzip", "deflate"):
            raise FetchError(str(url), f"unsupported content encoding {coding!r}")
        inflater: zlib._Decompress | None = None
        chunks: list[bytes] = []
        size = 0
        async for raw in response.aiter_raw():
            if coding in ("", "identity"):
                piece = raw
            else:
                if inflater is None:
                    inflater = _inflater(coding, raw)
                # Asking for one byte more than is left is enough to know the cap is passed,
                # without ever inflating a whole bomb chunk into memory.
                piece = inflater.decompress(raw, limit - size + 1)
            size += len(piece)
            chunks.append(piece)
            if size > limit:
                break
        else:
            if inflater is not None:
                chunks.append(inflater.flush())
        body = b"".join(chunks)
        if len(body) > limit and not truncate:
            raise FetchError(str(url), f"body is larger than {limit} bytes")
        return body[:limit]


def _forget(task: asyncio.Future[None]) -> None:
    """Cancel task if it is still running, and never leave its error unretrieved."""
    if not task.done():
        task.cancel()
    elif not task.cancelled():
        task.exception()


def _redirect_target(url: httpx.URL, response: httpx.Response) -> str | None:
    location = response.headers.get("location")
    if response.status_code not in _REDIRECT_STATUSES or not location:
        return None
    return str(url.join(location.strip()))


def _inflater(coding: str, first: bytes) -> zlib._Decompress:
    # wbits 32+ detects a gzip or zlib header; some servers send "deflate" as raw deflate.
    zlib_header = len(first) >= 2 and first[0] & 0x0F == 8 and (first[0] << 8 | first[1]) % 31 == 0
    if coding != "deflate" or zlib_header:
        return zlib.decompressobj(32 + zlib.MAX_WBITS)
    return zlib.decompressobj(-zlib.MAX_WBITS)


def _is_text(content_type: str) -> bool:
    return content_type in _TEXT_TYPES or content_type.startswith("text/")


def _is_web(encoding: str) -> bool:
    return encoding.startswith(_WEB_CODECS)


def _is_wide(charset: str) -> bool:
    try:
        return codecs.lookup(charset).name.startswith(_WIDE_CODECS)
    except LookupError:
        return False


def _parse_content_type(value: str) -> tuple[str, str | None]:
    media, _, params = value.partition(";")
    charset = None
    for param in params.split(";"):
        key, _, val = param.partition("=")
        if key.strip().lower() == "charset" and val.strip().strip("\"'"):
            charset = val.strip().strip("\"'").lower()
    return media.strip().lower(), charset


def _looks_like_html(body: bytes) -> bool:
    head = body[:512].lstrip(codecs.BOM_UTF8).lstrip().lower()
    return head.startswith(_HTML_STARTS)


@contextlib.contextmanager
def _failures_logged() -> Iterator[None]:
    """Log a refused or failed fetch (with its reason) and let the error through."""
    try:
        yield
    except UnsafeURLError as exc:
        log.warning("fetch refused", extra={"url": exc.url, "reason": exc.reason})
        raise
    except FetchError as exc:
        log.info("fetch failed", extra={"url": exc.url, "reason": exc.reason})
        raise
