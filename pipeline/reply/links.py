"""Scrubbing links out of text that came from posts, pages or a model.

A reply may only link to retrieved documents, through its numbered references. Any other link —
a URL with a scheme, a `www.` address, a markdown link or a bare domain such as `evil.example` —
in a claim, a rationale, a quote or a title is replaced before the reply is written.
"""

from __future__ import annotations

import re

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
