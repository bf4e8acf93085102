"""The one SSRF-safe HTTP fetcher.

Every hop of a fetch is vetted before a byte is sent: the URL must be http(s) without
credentials, and every address its host resolves to must be public. The request then goes to
the vetted address itself (with the original `Host` header and TLS server name), so a second DNS
answer cannot redirect it elsewhere. Redirects are followed by hand and vetted the same way.
Bodies are streamed and decompressed here, under a byte cap, so a gzip bomb stops at the cap.

Failure policy: `Fetcher.fetch` raises `UnsafeURLError` when the policy refuses a URL or an
address and `FetchError` for every other failure (status, size, time, content type, network);
nothing else escapes it.
"""

from __future__ import annotations

import asyncio
import codecs
import ipaddress
import logging
import re
import socket
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from http.cookiejar import CookieJar, DefaultCookiePolicy
from types import TracebackType
from typing import Self

import charset_normalizer
import httpx

from pipeline.errors import FetchError, UnsafeURLError

log = logging.getLogger(__name__)

HTML = "text/html"
XHTML = "application/xhtml+xml"
XML_TYPES = ("application/xml", "text/xml")
RSS = "application/rss+xml"
ATOM = "application/atom+xml"
RDF = "application/rdf+xml"
TEXT = "text/plain"
JSON_TYPES = ("application/json", "application/ld+json", "application/feed+json")

MAX_URL_LENGTH = 2048

_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.5"

Resolver = Callable[[str, int], Awaitable[list[str]]]

_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
# NAT64 (RFC 6052) embeds an IPv4 address in its last 32 bits; what matters is that address.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_BOMS = ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (b"\xfe\xff", "utf-16-be"))
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
# What is left of a host name after IDNA encoding ("_" is invalid but common in the wild).
_HOSTNAME = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?", re.IGNORECASE)
_HTML_STARTS = (b"<!doctype html", b"<html", b"<head", b"<body", b"<title", b"<meta", b"<!--")


@dataclass(frozen=True)
class FetchPolicy:
    """What the fetcher may fetch and how long, far and much it may go."""

    max_bytes: int = 5_000_000
    connect_timeout: float = 5.0
    total_timeout: float = 20.0
    max_redirects: int = 5
    allow_private: bool = False  # only tests set this: lets loopback/private addresses through
    user_agent: str = "factbot/0.1"
    content_types: tuple[str, ...] = (HTML, XHTML, *XML_TYPES, RSS, ATOM, RDF, TEXT, *JSON_TYPES)
    # Narrower than allow_private: networks let through although not public, e.g. a test server
    # on 127.0.0.2 while the rest of loopback and every private network stays refused.
    allowed_networks: tuple[str, ...] = ()


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

    def text(self) -> str:
        """Decode the body: BOM, declared charset, meta charset, UTF-8, then detection."""
        for bom, codec in _BOMS:
            if self.body.startswith(bom):
                return self.body[len(bom) :].decode(codec, errors="replace")
        meta = _META_CHARSET.search(self.body[:2048])
        declared = (self.charset, meta.group(1).decode("ascii") if meta else None, "utf-8")
        for candidate in declared:
            if not candidate:
                continue
            try:
                return self.body.decode(candidate)
            except (LookupError, UnicodeDecodeError):
                continue  # unknown or wrong declarations are common; try the next guess
        matches = charset_normalizer.from_bytes(self.body)
        best = matches.best()
        if best is None:
            return self.body.decode("utf-8", errors="replace")
        # On short texts detection cannot tell the Western single-byte codecs apart; among
        # equally plausible guesses take windows-1252, the web's legacy default (WHATWG).
        for match in matches:
            if match.encoding == "cp1252" and match.chaos <= best.chaos + 0.01:
                return str(match)
        return str(best)


def check_url(url: str) -> httpx.URL:
    """Parse url and refuse anything but an http(s) URL with a host and no credentials."""
    if len(url) > MAX_URL_LENGTH:
        raise UnsafeURLError(url[:100] + "…", f"longer than {MAX_URL_LENGTH} characters")
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise UnsafeURLError(url, f"malformed URL: {exc}") from exc
    if parsed.scheme not in ("http", "https"):
        raise UnsafeURLError(url, f"scheme {parsed.scheme!r} is not http or https")
    if not parsed.host:
        raise UnsafeURLError(url, "no host")
    host = parsed.raw_host.decode("ascii")
    if _ip_or_none(host) is None and not _HOSTNAME.fullmatch(host):
        raise UnsafeURLError(url, f"invalid host name {parsed.host!r}")
    if parsed.userinfo:
        raise UnsafeURLError(url, "credentials in the URL")
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise UnsafeURLError(url, f"port {parsed.port} is out of range")
    return parsed


def is_public_address(ip: str) -> bool:
    """Return whether ip is a globally routable unicast address."""
    address = _ip_or_none(ip)
    if address is None:
        return False
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return is_public_address(str(address.ipv4_mapped))
        if address in _NAT64:
            return is_public_address(str(ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)))
        if address.sixtofour is not None and not is_public_address(str(address.sixtofour)):
            return False
        if address.teredo is not None and not is_public_address(str(address.teredo[1])):
            return False
    return address.is_global and not (
        address.is_multicast
        or address.is_private
        or address.is_reserved
        or address.is_loopback
        or address.is_link_local
        or address.is_unspecified
    )


async def resolve_host(host: str, port: int) -> list[str]:
    """Return the addresses host resolves to, through the event loop's getaddrinfo."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class Fetcher:
    """Fetches pages over one httpx client under one policy."""

    def __init__(
        self,
        policy: FetchPolicy = FetchPolicy(),  # frozen, so one shared default is safe
        *,
        resolver: Resolver | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.policy = policy
        self._resolver = resolver or resolve_host
        self._allowed = tuple(ipaddress.ip_network(n) for n in policy.allowed_networks)
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(policy.total_timeout, connect=policy.connect_timeout),
            follow_redirects=False,  # every hop must be vetted, so redirects are ours
            trust_env=False,  # a proxy from the environment would bypass address pinning
            # Requests go to bare IPs, so cookie domains would match across sites: keep none.
            cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])),
            # Pooled connections are keyed by IP, not host: reusing one could send a request
            # for one site over another's TLS session.
            limits=httpx.Limits(max_keepalive_connections=0),
            headers={"User-Agent": policy.user_agent},
            transport=transport,
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

    async def aclose(self) -> None:
        """Close the underlying HTTP client."""
        await self._client.aclose()

    async def fetch(self, url: str) -> FetchedPage:
        """Fetch url under the policy, following vetted redirects."""
        try:
            start = check_url(url)
            async with asyncio.timeout(self.policy.total_timeout):
                page = await self._fetch(url, start)
        except TimeoutError as exc:
            error = FetchError(url, f"took longer than {self.policy.total_timeout}s")
            log.info("fetch failed", extra={"url": url, "reason": error.reason})
            raise error from exc
        except UnsafeURLError as exc:
            log.warning("fetch refused", extra={"url": exc.url, "reason": exc.reason})
            raise
        except FetchError as exc:
            log.info("fetch failed", extra={"url": exc.url, "reason": exc.reason})
            raise
        log.info(
            "fetched",
            extra={"url": page.url, "status": page.status, "bytes": len(page.body)},
        )
        return page

    async def _fetch(self, requested: str, current: httpx.URL) -> FetchedPage:
        redirects: list[str] = []
        while True:
            addresses = await self._vet(current)
            try:
                response = await self._open(current, addresses)
                try:
                    target = _redirect_target(current, response)
                    if target is None:
                        return await self._read(requested, current, response, redirects)
                finally:
                    await response.aclose()
            except (httpx.HTTPError, httpx.StreamError, httpx.InvalidURL, OSError) as exc:
                raise FetchError(str(current), f"{type(exc).__name__}: {exc}") from exc
            except zlib.error as exc:
                raise FetchError(str(current), f"bad compressed body: {exc}") from exc
            if len(redirects) >= self.policy.max_redirects:
                raise FetchError(requested, f"more than {self.policy.max_redirects} redirects")
            redirects.append(str(current))
            current = check_url(target)

    async def _vet(self, url: httpx.URL) -> list[str]:
        """Return the addresses of url's host, refusing the URL if any of them is not allowed."""
        host = url.host
        if _ip_or_none(host) is not None:
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
        ip = _ip_or_none(address)
        return ip is not None and any(
            ip.version == net.version and ip in net for net in self._allowed
        )

    async def _open(self, url: httpx.URL, addresses: list[str]) -> httpx.Response:
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
                    "Accept": _ACCEPT,
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
        self, requested: str, url: httpx.URL, response: httpx.Response, redirects: list[str]
    ) -> FetchedPage:
        status = response.status_code
        if status >= 300:
            raise FetchError(str(url), f"HTTP status {status}", status=status)
        content_type, charset = _parse_content_type(response.headers.get("content-type", ""))
        if content_type and content_type not in self.policy.content_types:
            raise FetchError(
                str(url), f"content type {content_type} is not accepted", status=status
            )
        declared = response.headers.get("content-length", "").strip()
        if declared.isdigit() and int(declared) > self.policy.max_bytes:
            raise FetchError(str(url), f"declares {declared} bytes, over the limit", status=status)
        body = await self._read_body(url, response)
        if not content_type:
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
        )

    async def _read_body(self, url: httpx.URL, response: httpx.Response) -> bytes:
        """Read and decompress the body, stopping as soon as it passes max_bytes."""
        coding = response.headers.get("content-encoding", "").strip().lower()
        if coding not in ("", "identity", "gzip", "x-gzip", "deflate"):
            raise FetchError(str(url), f"unsupported content encoding {coding!r}")
        limit = self.policy.max_bytes
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
            if size > limit:
                raise FetchError(str(url), f"body is larger than {limit} bytes")
            chunks.append(piece)
        if inflater is not None:
            tail = inflater.flush()
            size += len(tail)
            if size > limit:
                raise FetchError(str(url), f"body is larger than {limit} bytes")
            chunks.append(tail)
        return b"".join(chunks)


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


def _ip_or_none(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


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
