"""Canonical URLs: one key for the many spellings of the same page across search providers.

courlan's `normalize_url` lower-cases the scheme and host, drops default ports, removes its
tracking parameters (`utm_*`, `fbclid`, `gclid`, `igshid`, `ref`, `source`, `_ga`, ...) and
sorts the other parameters (keeping repeated ones in their order; blank ones are dropped).
Around it factbot keeps its own rules, which courlan lacks: `www.`, credentials, the fragment
and a trailing slash (except the root's) go, percent-escapes in the path are decoded where
RFC 3986 allows the character, and the tracking parameters courlan does not know (`cmpid`,
`spm`, `at_*`, `hsa_*`, ...) go too. The key is only for de-duplication and caching; results
keep the URL the provider gave.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

from courlan import normalize_url

# Tracking parameters courlan's list lacks (it has utm_*, fbclid, gclid, igshid, ref, _ga, ...).
_TRACKING = frozenset({"cmpid", "ocid", "smid", "sr_share", "spm"})
_TRACKING_PREFIXES = ("at_", "hsa_")
# Characters that stay unescaped in a normalised path (RFC 3986 pchar plus "/").
_PATH_SAFE = "/:@!$&'()*+,;=-._~"


def canonical_url(url: str) -> str:
    """Return the de-duplication key of url (unchanged when it is not an absolute URL)."""
    text = url.strip()
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return text
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".")
    if not scheme or not host:
        return text
    if host.startswith("www."):
        host = host[4:]
    if ":" in host:
        host = f"[{host}]"  # an IPv6 literal keeps its brackets
    netloc = host if port is None else f"{host}:{port}"  # courlan drops a default port
    path = quote(unquote(parts.path), safe=_PATH_SAFE) or "/"
    if len(path) > 1:  # courlan keeps the slash when there is a query
        path = path.rstrip("/") or "/"
    params = [
        (key, value)
        for key, value in parse_qsl(parts.query, keep_blank_values=True)
        if not _is_tracking(key)
    ]
    query = urlencode(params, quote_via=quote)
    return normalize_url(urlunsplit((scheme, netloc, path, query, "")), trailing_slash=False)


def _is_tracking(key: str) -> bool:
    lowered = key.lower()
    return lowered in _TRACKING or lowered.startswith(_TRACKING_PREFIXES)
