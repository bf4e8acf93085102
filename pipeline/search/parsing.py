"""Small helpers the providers share: dates, HTML snippets, `site:` operators and domains.

Dates come back as aware UTC datetimes, read by `pipeline.util.dates` (its rules: a full date or
a relative age in minutes, hours, days or weeks, resolved against `now`; "N months/years ago"
and dates without a year are dropped).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta

import lxml.html
from lxml import etree

from pipeline.credibility.domains import candidate_keys
from pipeline.errors import SearchError
from pipeline.util.dates import parse_date as parse_any_date
from pipeline.util.dates import to_utc


def parse_date(value: object, *, now: datetime | None = None) -> datetime | None:
    """Parse a provider's date (ISO, RFC 822, "Mar 3, 2024", "2 days ago") to UTC, or None."""
    return parse_any_date(value, now=now or datetime.now(UTC))


def plain_text(fragment: str | None) -> str:
    """Return the text of an HTML fragment (tags dropped, entities decoded, spaces collapsed)."""
    if not fragment or not fragment.strip():
        return ""
    if "<" not in fragment and "&" not in fragment:
        return " ".join(fragment.split())
    try:
        element = lxml.html.fragment_fromstring(fragment, create_parent="div")
    except (etree.ParserError, ValueError):
        return " ".join(fragment.split())
    return " ".join(element.text_content().split())


def with_sites(text: str, sites: Sequence[str]) -> str:
    """Return text with `site:` operators restricting it to sites (OR-ed when several)."""
    operators = [f"site:{site}" for site in sites]
    if not operators:
        return text
    if len(operators) == 1:
        return f"{text} {operators[0]}"
    return f"{text} ({' OR '.join(operators)})"


def site_domain(value: str | None) -> str | None:
    """Return the host key (lower-case, no `www.`) of a URL or bare domain, or None."""
    if not value or not value.strip():
        return None
    try:
        keys = candidate_keys(value.strip())
    except ValueError:
        return None
    return next((key for key in keys if "/" not in key), None)


def on_sites(domain: str | None, sites: Sequence[str]) -> bool:
    """Return whether domain is one of sites or a subdomain of one."""
    if domain is None:
        return False
    wanted = [site_domain(site) or site.lower() for site in sites]
    return any(domain == site or domain.endswith(f".{site}") for site in wanted)


def last_day(before: datetime) -> date:
    """Return the last UTC calendar day holding instants earlier than before (inclusive bound)."""
    return (to_utc(before) - timedelta(microseconds=1)).date()


def rss_items(provider: str, body: bytes) -> list[etree._Element]:
    """Return the items of an RSS answer, parsed without entities, DTDs or network.

    Raise SearchError naming provider when the answer is not XML or not an RSS feed.
    """
    parser = etree.XMLParser(
        resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False
    )
    try:
        root = etree.fromstring(body, parser)
    except etree.XMLSyntaxError as exc:
        raise SearchError(provider, f"the answer is not valid XML: {exc}") from None
    if root is None or root.tag != "rss" or root.find("channel") is None:
        raise SearchError(provider, "the answer is not an RSS feed")
    return list(root.iterfind("channel/item"))
