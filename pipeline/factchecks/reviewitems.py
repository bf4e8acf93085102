"""One ClaimReview, as a feed or an API gives it, read into a `FactCheck` or the reason it cannot.

Two shapes are read: a schema.org ClaimReview object (a DataFeed's item, JSON-LD) and a Google
Fact Check Tools `claims:search` claim, which holds one review per `claimReview` entry. The
fields are normalised on the way: names and texts have their white space collapsed; the
publisher is the review's `author` (else `publisher`, else the site), its site the domain of
the author's URL, else of the review's URL; dates (ISO 8601, RFC 822, "October 22, 2019", ...)
become aware UTC datetimes; the language is the item's own (`inLanguage`, `languageCode`)
reduced to ISO 639-1 (or zh-Hans/zh-Hant), else what `identify` finds in the claim; the rating
is kept in its own words and read into a Label by `pipeline.factchecks.ratings`.

Failure policy: never raises on an item. An item that is not an object, has no claim, no URL,
a URL that is not http(s), or a date field that is no text (an object, a list) is a `Skipped`
with its position and reason; a date written in a way no parser reads is None, the item kept.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from pipeline.factchecks.ratings import rating_to_label
from pipeline.records.factchecks import FactCheck
from pipeline.util.dates import parse_date
from pipeline.util.jsonld import first_object, number_of, text_of

# A language finder: the ISO 639-1 code of a text, or None when it cannot tell.
Identify = Callable[[str], str | None]

# Dates feeds write in words ("October 22, 2019"): read here first, as dateparser takes
# milliseconds a date and a feed has tens of thousands.
_WORDED_DATES = ("%B %d, %Y", "%b %d, %Y", "%d %B %Y", "%b. %d, %Y")
_HANT_REGIONS = ("tw", "hk", "mo", "hant")


@dataclass(frozen=True)
class Skipped:
    """An item of a feed that was not read, and why."""

    position: int  # the item's place in its feed, from 0
    reason: str


Parsed = FactCheck | Skipped


class _BrokenItemError(Exception):
    """An item's field has a shape no review has (a date that is an object)."""


def fact_check_from_node(
    node: object, *, position: int, identify: Identify | None = None
) -> Parsed:
    """Read one schema.org ClaimReview object into a FactCheck, or say why it is skipped."""
    if not isinstance(node, Mapping):
        return Skipped(position, f"not an object ({type(node).__name__})")
    try:
        return _from_node(node, position, identify)
    except _BrokenItemError as exc:
        return Skipped(position, str(exc))


def _from_node(node: Mapping[str, Any], position: int, identify: Identify | None) -> Parsed:
    item = first_object(node.get("itemReviewed"))
    claim = text_of(node.get("claimReviewed")) or text_of(item.get("name"))
    if not claim:
        return Skipped(position, "no claimReviewed")
    url = text_of(node.get("url"))
    if not url:
        return Skipped(position, "no URL")
    if not _is_http(url):
        return Skipped(position, "not an http(s) URL")
    author = first_object(node.get("author")) or first_object(node.get("publisher"))
    site = _domain(text_of(author.get("url"))) or _domain(url)
    words, value, best, worst = _rating(node.get("reviewRating"))
    claim_date = _date(item.get("datePublished"), "itemReviewed.datePublished")
    if claim_date is None:
        appearance = first_object(item.get("appearance"))
        claim_date = _date(appearance.get("datePublished"), "appearance.datePublished")
    return FactCheck(
        url=url,
        claim_reviewed=claim,
        publisher=_name(node.get("author")) or _name(node.get("publisher")) or site or "",
        publisher_site=site,
        headline=text_of(node.get("headline")) or text_of(node.get("name")) or "",
        claimant=_name(item.get("author")),
        claim_date=claim_date,
        review_date=_date(node.get("datePublished"), "datePublished"),
        language=_language(node.get("inLanguage"), claim, identify),
        rating=words,
        label=rating_to_label(words, value, best, worst),
        license=text_of(node.get("sdLicense"))
        or text_of(first_object(node.get("sdLicense")).get("url")),
    )


def fact_checks_from_google_claim(
    claim: object, *, position: int, identify: Identify | None = None
) -> list[Parsed]:
    """Read one `claims:search` claim into a FactCheck per review, or say why it is skipped."""
    if not isinstance(claim, Mapping):
        return [Skipped(position, f"not an object ({type(claim).__name__})")]
    text = text_of(claim.get("text"))
    reviews = claim.get("claimReview")
    if not text:
        return [Skipped(position, "no claim text")]
    if not isinstance(reviews, list) or not reviews:
        return [Skipped(position, "no claimReview")]
    found: list[Parsed] = []
    for review in reviews:
        if not isinstance(review, Mapping):
            found.append(Skipped(position, "claimReview is not an object"))
            continue
        publisher = first_object(review.get("publisher"))
        node = {
            "claimReviewed": text,
            "url": review.get("url"),
            "headline": review.get("title"),
            "author": {"name": publisher.get("name"), "url": _site_url(publisher.get("site"))},
            "datePublished": review.get("reviewDate"),
            "inLanguage": review.get("languageCode"),
            "reviewRating": {"alternateName": review.get("textualRating")},
            "itemReviewed": {
                "author": claim.get("claimant"),
                "datePublished": claim.get("claimDate"),
            },
        }
        found.append(fact_check_from_node(node, position=position, identify=identify))
    return found


def fact_checks_from_google(answer: object, *, identify: Identify | None = None) -> list[Parsed]:
    """Read a whole `claims:search` answer: one FactCheck per review of each claim."""
    claims = answer.get("claims") if isinstance(answer, Mapping) else None
    if not isinstance(claims, list):
        return []
    return [
        parsed
        for position, claim in enumerate(claims)
        for parsed in fact_checks_from_google_claim(claim, position=position, identify=identify)
    ]


def language_code(value: object) -> str | None:
    """Return a language tag ("en-US", "pt_BR", "zh-TW") as ISO 639-1 or zh-Hans/zh-Hant."""
    tag = (
        text_of(value.get("alternateName") or value.get("name"))
        if isinstance(value, Mapping)
        else None
    )
    tag = tag or text_of(value)
    if not tag:
        return None
    parts = tag.replace("_", "-").lower().split("-")
    if parts[0] == "zh":
        return "zh-Hant" if any(p in _HANT_REGIONS for p in parts[1:]) else "zh-Hans"
    return parts[0] if len(parts[0]) == 2 and parts[0].isalpha() else None


def _language(value: object, claim: str, identify: Identify | None) -> str | None:
    given = language_code(value)
    if given is not None or identify is None:
        return given
    return identify(claim)


def _rating(value: object) -> tuple[str | None, float | None, float | None, float | None]:
    rating = first_object(value)
    raw = rating.get("ratingValue")
    number = number_of(raw)
    words = text_of(rating.get("alternateName")) or text_of(rating.get("name"))
    if words is None and number is None:
        words = text_of(raw)  # a rating written where its number belongs ("False")
    best, worst = number_of(rating.get("bestRating")), number_of(rating.get("worstRating"))
    if words is None and number is not None:
        words = f"{number:g}/{best if best is not None else 5:g}"
    return words, number, best, worst


def _date(value: object, field: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise _BrokenItemError(f"{field} is not a date ({type(value).__name__})")
    text = " ".join(value.split())
    for layout in _WORDED_DATES:
        try:
            return datetime.strptime(text, layout).replace(tzinfo=UTC)
        except ValueError:
            continue
    return parse_date(text)


def _name(value: object) -> str | None:
    if isinstance(value, list):
        names = [name for name in (_name(v) for v in value) if name]
        return ", ".join(names) or None
    if isinstance(value, Mapping):
        return text_of(value.get("name")) or text_of(value.get("alternateName"))
    return text_of(value)


def _domain(url: str | None) -> str | None:
    if not url:
        return None
    try:
        host = urlsplit(url if "//" in url else f"//{url}").hostname or ""
    except ValueError:  # a port that is no number
        return None
    return host.removeprefix("www.") or None


def _site_url(site: object) -> str | None:
    text = text_of(site)
    return None if text is None else (text if "//" in text else f"https://{text}")


def _is_http(url: str) -> bool:
    try:
        parts = urlsplit(url)
        return parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
    except ValueError:  # a port that is no number, a broken IPv6 host
        return False
