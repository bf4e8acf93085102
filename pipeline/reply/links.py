"""Scrubbing links out of text that came from posts, pages or a model.

A reply may only link to retrieved documents, through its numbered references. Any other link —
a URL with a scheme, a `www.` address, a markdown link or a bare domain such as `evil.example` —
in a claim, a rationale, a quote or a title is replaced before the reply is written.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from pipeline.credibility.domains import is_public_host

REMOVED = "[link removed]"

_MARKDOWN_RE = re.compile(r"\[([^\]]{0,200})\]\([^)\s]{1,2000}\)")
_URL_RE = re.compile(r"(?:[a-z][a-z0-9+.\-]{1,15}://|www\.)\S+", re.IGNORECASE)
_DOMAIN_RE = re.compile(
    r"(?<![\w@.\-])(?:[a-z0-9](?:[a-z0-9\-]{0,61}[a-z0-9])?\.)+[a-z]{2,24}(?::\d{1,5})?(?:/\S*)?",
    re.IGNORECASE,
)


def _is_domain(token: str) -> bool:
    host = token.split("/", 1)[0].split(":", 1)[0].rstrip(".").lower()
    labels = host.split(".")
    if len(labels) < 2 or all(len(label) == 1 for label in labels[:-1]):
        return False  # "U.S", "e.g" and initials are not hosts
    return is_public_host(host) or labels[-1] in ("example", "test", "invalid", "localhost")


def scrub_links(text: str) -> str:
    """Return text with every link replaced by a marker."""
    text = _MARKDOWN_RE.sub(lambda m: f"{m.group(1)} {REMOVED}", text)
    text = _URL_RE.sub(REMOVED, text)
    return _DOMAIN_RE.sub(lambda m: REMOVED if _is_domain(m.group(0)) else m.group(0), text)


def has_link(text: str) -> bool:
    """Return whether text holds anything that scrub_links would remove."""
    return scrub_links(text) != text


def links_in(text: str) -> list[str]:
    """Return every link in text that scrub_links would remove, in order."""
    found = [m.group(0) for m in _MARKDOWN_RE.finditer(text)]
    text = _MARKDOWN_RE.sub(" ", text)
    found += [m.group(0) for m in _URL_RE.finditer(text)]
    text = _URL_RE.sub(" ", text)
    found += [m.group(0) for m in _DOMAIN_RE.finditer(text) if _is_domain(m.group(0))]
    return found


def unretrieved_links(texts: Iterable[str], allowed: Iterable[str]) -> list[str]:
    """Return the links in texts that are not one of the allowed URLs (nor their hosts).

    A renderer shows allowed URLs verbatim or with the markup of its platform around them
    (`<url|title>`, `[title](url)`, `&` written `&amp;`); what is left once they and their
    hosts are taken out must hold no link at all.
    """
    forms: set[str] = set()
    for url in allowed:
        forms |= {url, url.replace("&", "&amp;")}
        host = urlsplit(url).hostname
        if host:
            forms |= {host, host.removeprefix("www.")}
    # Each allowed form only counts as a whole token: "apnews.com.evil.example" is not apnews.
    ordered = sorted(forms, key=len, reverse=True)
    pattern = (
        re.compile(
            r"(?<![^\s<(\[|])(?:"
            + "|".join(re.escape(f) for f in ordered)
            + r")(?=$|[\s|>)\],;:!?]|\.(?:\s|$))"
        )
        if ordered
        else None
    )
    left: list[str] = []
    for text in texts:
        if pattern is not None:
            text = pattern.sub(" ", text)
        left += links_in(text)
    return left
