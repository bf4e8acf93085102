"""Normalise publisher domains and URLs into the keys of the credibility table.

A key is a lower-case ASCII host name (international names in punycode) without a ``www.``,
``m.`` or ``amp.`` prefix, optionally followed by a path scope: ``bbc.co.uk``,
``news.bbc.co.uk``, ``apple.com/apple-news``. Queries, fragments, ports and credentials never
reach a key.

The public-suffix list is tldextract's bundled snapshot and is never fetched: the bot must work
offline, and a rating must not change because a download happened. Private suffixes
(``blogspot.com``, ``github.io``, ``s3.amazonaws.com``) count as public suffixes, so
``foo.blogspot.com`` is its own registrable domain and one blog's rating never spreads to the
whole platform (nor a platform's rating to every blog on it).

Rating-table entries are parsed strictly: `normalize_entry` refuses IP addresses and unknown
suffixes, which in those tables are typos ("x.con"). URLs being rated are parsed leniently, so a
page on an IP address or under a TLD newer than the snapshot still gets a domain (and no rating).
"""

from __future__ import annotations

import functools
import ipaddress
import re
from urllib.parse import urlsplit

import idna
import tldextract

# Labels that name a rendering of the same site rather than a different publisher.
_ALIAS_LABEL = re.compile(r"www\d*|m|amp|mobile")
# "mailto:x@y.z" or "javascript:..." without "//"; "host:8080" is a port, not a scheme.
_OPAQUE_SCHEME = re.compile(r"[a-z][a-z0-9+.-]*:(?!\d)", re.IGNORECASE)
_HOST_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
# Reserved for testing and documentation (RFC 2606): local fixtures may rate them.
_TEST_TLDS = frozenset({"example", "test"})
# Path scopes in rating tables are at most three segments deep; longer URL prefixes only make
# the lookup bigger.
MAX_PATH_DEPTH = 6


@functools.cache
def _extractor() -> tldextract.TLDExtract:
    # Built once per process: parsing the snapshot takes tens of milliseconds. `cache_dir=None`
    # and no URLs mean tldextract neither writes a cache nor tries the network.
    return tldextract.TLDExtract(
        cache_dir=None,
        suffix_list_urls=(),
        fallback_to_snapshot=True,
        include_psl_private_domains=True,
    )


def normalize_entry(value: str) -> str:
    """Return the credibility key for a domain, domain/path or URL; raise ValueError on garbage."""
    host, path, _ = _parse(value, strict=True)
    return f"{host}/{path}" if path else host


_ARCHIVE_RE = re.compile(
    r"^https?://(?:web\.)?archive\.org/web/\d{1,14}[a-z_]*/(https?://.+)$", re.IGNORECASE
)


def unwrap_archive(url: str) -> str:
    """Return the original URL of a Wayback Machine capture, or url unchanged.

    A capture is rated as the publisher it preserves, not as archive.org.
    """
    match = _ARCHIVE_RE.match(url.strip())
    return match.group(1) if match else url


def is_public_host(host: str) -> bool:
    """Return whether host is a name under a known public suffix (e.g. evil.example.com)."""
    result = _extractor().extract_str(host.lower().rstrip("."))
    return bool(result.suffix and result.domain)


def registrable_domain(host_or_url: str) -> str:
    """Return the registrable domain (private suffixes included) of a host or URL."""
    return _parse(host_or_url, strict=False)[2]


def candidate_keys(url: str) -> list[str]:
    """Return the keys that may rate url, most specific first (path prefixes, hosts, domain)."""
    host, path, registrable = _parse(unwrap_archive(url), strict=False)
    segments = path.split("/")[:MAX_PATH_DEPTH] if path else []
    keys = [f"{host}/{'/'.join(segments[:n])}" for n in range(len(segments), 0, -1)]
    labels = host.split(".")
    floor = registrable.count(".") + 1
    keys.extend(".".join(labels[i:]) for i in range(len(labels) - floor + 1))
    return keys


def _parse(value: str, *, strict: bool) -> tuple[str, str, str]:
    """Split value into its key host, its cleaned path and its registrable domain.

    Strict parsing (rating-table entries) also refuses IP addresses and hosts without a known
    public suffix, which in those tables are typos ("x.con") or leftovers ("localhost").
    """
    text = value.strip()
    if not text:
        raise ValueError("empty domain")
    if any(ch.isspace() for ch in text):
        raise ValueError(f"{value!r} is not a domain: it contains spaces")
    if "://" not in text and _OPAQUE_SCHEME.match(text):
        raise ValueError(f"{value!r} is not a web address")
    parts = urlsplit(text if "://" in text else f"//{text}")
    if parts.scheme not in ("", "http", "https"):
        raise ValueError(f"{value!r} is not a web address (scheme {parts.scheme!r})")
    try:
        _ = parts.port  # reading it validates it
    except ValueError as exc:
        raise ValueError(f"{value!r} has an invalid port") from exc
    path = _clean_path(parts.path)
    host = (parts.hostname or "").rstrip(".").lower()
    if not host:
        raise ValueError(f"{value!r} has no host name")
    if _is_ip(host):
        if strict:
            raise ValueError(f"{value!r} is an IP address, not a publisher")
        return host, path, host
    host = _ascii_host(host, value)
    registrable = _registrable(host, strict=strict)
    labels = host.split(".")
    floor = registrable.count(".") + 1
    while len(labels) > floor and _ALIAS_LABEL.fullmatch(labels[0]):
        labels.pop(0)
    return ".".join(labels), path, registrable


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _ascii_host(host: str, value: str) -> str:
    if not host.isascii():
        try:
            host = idna.encode(host, uts46=True).decode("ascii")
        except idna.IDNAError as exc:
            raise ValueError(f"{value!r} is not a valid international domain: {exc}") from exc
    if len(host) > 253 or not all(_HOST_LABEL.fullmatch(label) for label in host.split(".")):
        raise ValueError(f"{value!r} is not a valid host name")
    return host


def _registrable(host: str, *, strict: bool) -> str:
    result = _extractor().extract_str(host)
    if result.top_domain_under_public_suffix:
        return result.top_domain_under_public_suffix
    if result.is_private and result.suffix == host:
        # The host is itself a private suffix (blogspot.com): that is the platform's own site,
        # so it is rated under the ICANN rules.
        icann = _extractor().extract_str(host, include_psl_private_domains=False)
        if icann.top_domain_under_public_suffix:
            return icann.top_domain_under_public_suffix
    if strict and host.rsplit(".", 1)[-1] not in _TEST_TLDS:
        if result.suffix == host:
            raise ValueError(f"{host!r} is a public suffix, not a publisher")
        raise ValueError(f"{host!r} is not under a known public suffix")
    if result.suffix:  # the host is itself a public suffix (gov.uk): nothing above it
        return host
    # No rule matches (reserved TLDs such as .example, TLDs newer than the snapshot): the PSL
    # algorithm's default rule "*" makes the last label the public suffix.
    return ".".join(host.split(".")[-2:])


def _clean_path(path: str) -> str:
    segments: list[str] = []
    for segment in path.lower().split("/"):
        if segment == "..":
            if segments:
                segments.pop()
        elif segment and segment != ".":
            segments.append(segment)
    return "/".join(segments)
