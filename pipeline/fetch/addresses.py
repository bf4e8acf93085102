"""What the fetcher may fetch: well-formed http(s) URLs whose hosts are at public addresses.

Failure policy: `check_url` raises `UnsafeURLError` saying what is wrong with a URL; the other
functions return answers (or, for `resolve_host`, raise the resolver's `OSError`).
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable

import httpx

from pipeline.errors import UnsafeURLError

MAX_URL_LENGTH = 2048

Resolver = Callable[[str, int], Awaitable[list[str]]]

# NAT64 (RFC 6052) embeds an IPv4 address in its last 32 bits; what matters is that address.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
# What is left of a host name after IDNA encoding ("_" is invalid but common in the wild).
_HOSTNAME = re.compile(r"[a-z0-9_-]+(?:\.[a-z0-9_-]+)*\.?", re.IGNORECASE)


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
    if parse_ip(host) is None and not _HOSTNAME.fullmatch(host):
        raise UnsafeURLError(url, f"invalid host name {parsed.host!r}")
    if parsed.userinfo:
        raise UnsafeURLError(url, "credentials in the URL")
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise UnsafeURLError(url, f"port {parsed.port} is out of range")
    return parsed


def is_public_address(ip: str) -> bool:
    """Return whether ip is a globally routable unicast address."""
    address = parse_ip(ip)
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


def parse_ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """Return text as an IP address, or None when it is not one."""
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None
