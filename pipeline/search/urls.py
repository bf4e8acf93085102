"""Canonical URLs: one key for the many spellings of the same page across search providers.

The key lower-cases the scheme and host, drops `www.`, default ports, credentials and the
fragment, removes tracking parameters (`utm_*`, `fbclid`, `gclid`, `ref`, ...), sorts the other
parameters (keeping repeated ones in their order) and drops a trailing slash except the root's.
The key is only for de-duplication and caching; results keep the URL the provider gave.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}
_TRACKING = frozenset(
    {
        "fbclid",
        "gclid",
        "dclid",
        "gbraid",
        "wbraid",
        "msclkid",
        "yclid",
        "twclid",
        "igshid",
        "mc_cid",
        "mc_eid",
        "_ga",
        "_gl",
        "ref",
        "ref_src",
        "ref_url",
        "referrer",
        "cmpid",
        "ocid",
        "smid",
        "sr_share",
        "spm",
    }
)
_TRACKING_PREFIXES = ("utm_", "at_", "hsa_", "pk_", "mtm_")
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
    netloc = host if port is None or port == _DEFAULT_PORTS.get(scheme) else f"{host}:{port}"
    path = quote(unquote(parts.path), safe=_PATH_SAFE) or "/"
    if len(path) > 1:
        path = path.rstrip("/") or "/"
    params = [
        (key, value)
        for key, value in parse_qsl(parts.query, keep_blank_values=True)
        if not _is_tracking(key)
    ]
    query = urlencode(sorted(params, key=lambda item: item[0]), quote_via=quote)
    return urlunsplit((scheme, netloc, path, query, ""))


def _is_tracking(key: str) -> bool:
    lowered = key.lower()
    return lowered in _TRACKING or lowered.startswith(_TRACKING_PREFIXES)
