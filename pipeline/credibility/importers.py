"""Rating-table importers: MUSE's tier rule and the formats operators import.

Formats that `import_sources` reads (`detect_format` picks one by extension and header):

- ``tiers``: one domain (or domain/path) per line, all of one tier that the operator names
  (MUSE's ``publisher_priority_{high,medium,low}.txt``); ``#`` starts a comment;
- ``blocklist``: the same layout, every entry BLOCKED (AVeriTeC's misinformation domains);
- ``mbfc``: a Media Bias/Fact Check CSV (``source`` or ``domain``, ``bias``,
  ``factual_reporting``) rated by `mbfc_tier`;
- ``scores``: a CSV of ``domain`` and an aggregate quality score (``pc1`` or ``score``) in [0, 1],
  such as Lin et al. 2023, cut into tiers by thresholds;
- ``perennial``: Wikipedia's perennial sources as JSON ``{domain: -2..1}``;
- ``ratings``: our own ``domain,tier,reason`` CSV (the built-in seed list uses it).

Precedence: a BLOCKED entry is never overwritten by a later non-block import; otherwise the last
import wins, per key. The seed list is the weakest origin: it only fills keys that no operator
import has rated. When one file rates a key twice, the less credible rating is kept. MBFC rows
that lack a bias or factuality rating are skipped (left unrated), not made UNUSABLE.

Failure policy: a line that cannot be used is skipped and reported with its number (for JSON, the
entry's position) in `ImportReport.skipped`; only an unreadable file, an unknown format or a
missing column raises `SourceImportError`.

Calibration (recomputed by tests/pipeline/credibility/test_credibility.py). Reference: MUSE's
tier lists plus the domains `mbfc_tier` makes UNUSABLE that MUSE omits; 4,066 have a Lin et al. pc1
(104 high, 1,851 medium, 172 low, 1,939 unusable). ``low`` = 0.64 maximises usable-vs-unusable
agreement (0.844; 0.837 at 0.60, 0.839 at 0.66). ``high`` = 0.90 maximises F1 for HIGH (P 0.35,
R 0.78, F1 0.48; 0.46 at 0.89, 0.42 at 0.91): pc1 is high for big outlets MUSE keeps MEDIUM.
pc1 cannot tell MUSE-low from MEDIUM (agreement peaks at 0.764 with no LOW band), so
``medium`` = 0.68 keeps a narrow LOW band just above the usable cut: 4-tier agreement 0.730, and
0.715 against `mbfc_tier` on the 3,900 domains both rate. `mbfc_tier` itself agrees with MUSE on
1,724 of 1,917 shared domains (HIGH 74/78, MEDIUM 1,650/1,663); MUSE's 176 LOW ones are "mixed"
in this older scrape (MUSE's data says "mostly factual"), so they come out UNUSABLE.
"""

from __future__ import annotations

import csv
import json
import logging
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from pipeline.credibility.domains import normalize_entry
from pipeline.errors import SourceImportError
from pipeline.ports import RatingTable
from pipeline.records.domain import SourceRating, Tier

log = logging.getLogger(__name__)

FORMATS = ("tiers", "blocklist", "mbfc", "scores", "perennial", "ratings")
SEED_ORIGIN = "seed"
SCORE_HIGH = 0.90
SCORE_MEDIUM = 0.68
SCORE_LOW = 0.64

_USABLE_BIAS = ("least biased", "left-center", "right-center", "pro-science")
_FACTUAL = ("very high", "high", "mostly factual", "mixed", "low", "very low")
_PERENNIAL = {
    1: (Tier.MEDIUM, "generally reliable (Wikipedia perennial sources)"),
    0: (Tier.LOW, "no consensus or additional considerations (Wikipedia perennial sources)"),
    -1: (Tier.UNUSABLE, "generally unreliable (Wikipedia perennial sources)"),
    -2: (Tier.UNUSABLE, "deprecated (Wikipedia perennial sources)"),
}
_CHUNK = 500  # keys per query, well under SQLite's limit on bound parameters


@dataclass(frozen=True)
class SkippedLine:
    """One input line that was not imported, and why."""

    line: int
    reason: str
    text: str = ""


@dataclass(frozen=True)
class ImportReport:
    """What one import read, wrote and skipped."""

    path: str
    fmt: str
    origin: str
    read: int  # data lines seen: written + skipped
    written: int
    skipped: tuple[SkippedLine, ...]
    by_tier: dict[str, int] = field(default_factory=dict)  # written ratings per tier
    notes: tuple[str, ...] = ()

    @property
    def problems(self) -> list[str]:
        """Return the notes and skipped lines as one message each."""
        lines = [f"line {s.line}: {s.reason}: {s.text!r}" for s in self.skipped]
        return [*self.notes, *lines]


def mbfc_tier(factual: str, bias: str) -> tuple[Tier, str]:
    """Return MUSE's tier and the reason for an MBFC factual-reporting and bias rating."""
    fact, lean = _norm_factual(factual), _norm_bias(bias)
    if fact in ("mixed", "low", "very low"):
        return Tier.UNUSABLE, f"factual reporting {fact}"
    if lean not in (*_USABLE_BIAS, "unknown"):
        return Tier.UNUSABLE, f"bias {lean}"
    if fact == "unknown" or lean == "unknown":
        # A missing rating is not a bad rating: leave the source unrated rather than unusable.
        return Tier.UNRATED, f"not rated: factual reporting {factual!r}, bias {bias!r}"
    if fact == "very high" and lean in ("least biased", "pro-science"):
        return Tier.HIGH, f"factual reporting {fact}, {lean}"
    if fact in ("very high", "high"):
        return Tier.MEDIUM, f"factual reporting {fact}, {lean}"
    return Tier.LOW, f"factual reporting {fact}, {lean}"


def parse_tier_list(
    lines: Iterable[str], *, tier: Tier, origin: str, skipped: list[SkippedLine] | None = None
) -> list[SourceRating]:
    """Rate every domain of a one-per-line list with tier; unusable lines go to skipped."""
    if tier is Tier.UNRATED:
        raise ValueError("a tier list cannot rate sources as unrated")
    reason = f"{tier.value} in {origin}"
    return _parse_list(lines, tier=tier, reason=reason, origin=origin, skipped=skipped)


def parse_block_list(
    lines: Iterable[str], *, origin: str, skipped: list[SkippedLine] | None = None
) -> list[SourceRating]:
    """Rate every domain of a one-per-line block list as BLOCKED."""
    reason = f"on block list {origin}"
    return _parse_list(lines, tier=Tier.BLOCKED, reason=reason, origin=origin, skipped=skipped)


def parse_mbfc_table(
    csv_text: str, *, origin: str, skipped: list[SkippedLine] | None = None
) -> list[SourceRating]:
    """Rate the rows of an MBFC CSV with `mbfc_tier`."""
    out = _Collector(origin, skipped)
    for number, row, raw in _csv_rows(csv_text, ("bias", "factual_reporting"), out):
        fact, bias = row["factual_reporting"], row["bias"]
        tier, reason = mbfc_tier(fact, bias)
        if tier is Tier.UNRATED:
            out.skip(number, raw, reason)
        else:
            out.add(number, raw, row["domain"], tier, reason, bias=bias, factual_reporting=fact)
    return out.ratings()


def parse_score_table(
    csv_text: str,
    *,
    origin: str,
    high: float = SCORE_HIGH,
    medium: float = SCORE_MEDIUM,
    low: float = SCORE_LOW,
    skipped: list[SkippedLine] | None = None,
) -> list[SourceRating]:
    """Cut a domain,score table (score in [0, 1], e.g. Lin et al.'s pc1) into tiers."""
    if not 0.0 <= low <= medium <= high <= 1.0:
        raise ValueError(
            f"thresholds need 0 <= low <= medium <= high <= 1: {low}, {medium}, {high}"
        )
    out = _Collector(origin, skipped)
    for number, row, raw in _csv_rows(csv_text, ("score",), out):
        try:
            score = float(row["score"])
        except ValueError:
            out.skip(number, raw, f"score {row['score']!r} is not a number")
            continue
        if math.isnan(score) or not 0.0 <= score <= 1.0:
            out.skip(number, raw, f"score {row['score']!r} is not in [0, 1]")
            continue
        cuts = ((Tier.HIGH, high), (Tier.MEDIUM, medium), (Tier.LOW, low))
        tier, floor = next(((t, c) for t, c in cuts if score >= c), (Tier.UNUSABLE, low))
        sign = ">=" if score >= floor else "<"
        reason = f"quality score {score:.2f} {sign} {floor:.2f}"
        out.add(number, raw, row["domain"], tier, reason, score=score)
    return out.ratings()


def parse_perennial_json(
    json_text: str, *, origin: str, skipped: list[SkippedLine] | None = None
) -> list[SourceRating]:
    """Rate Wikipedia perennial sources ({domain: -2..1}); 1 is MEDIUM, below 0 UNUSABLE."""
    try:
        table = json.loads(json_text)
    except json.JSONDecodeError as exc:
        raise SourceImportError(f"{origin}: not valid JSON ({exc})") from exc
    if not isinstance(table, dict):
        raise SourceImportError(f"{origin}: expected a JSON object of domain -> -2..1")
    out = _Collector(origin, skipped)
    for number, (domain, value) in enumerate(table.items(), start=1):
        raw = f"{domain}: {value}"
        if isinstance(value, bool) or value not in _PERENNIAL:
            out.skip(number, raw, f"rating {value!r} is not one of -2, -1, 0, 1")
            continue
        tier, reason = _PERENNIAL[value]
        out.add(number, raw, str(domain), tier, reason, perennial=value)
    return out.ratings()


def parse_rating_table(
    csv_text: str, *, origin: str, skipped: list[SkippedLine] | None = None
) -> list[SourceRating]:
    """Read a domain,tier[,reason] CSV such as the built-in seed list."""
    out = _Collector(origin, skipped)
    named = {t.value: t for t in Tier if t is not Tier.UNRATED}
    for number, row, raw in _csv_rows(csv_text, ("tier",), out):
        tier = named.get(row["tier"].strip().lower())
        if tier is None:
            out.skip(number, raw, f"tier {row['tier']!r} is not one of {', '.join(named)}")
            continue
        reason = row.get("reason", "").strip() or f"{tier.value} in {origin}"
        out.add(number, raw, row["domain"], tier, reason)
    return out.ratings()


def detect_format(path: Path, text: str) -> str:
    """Return the format of a rating file from its extension and first line."""
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if path.suffix.lower() == ".json" or first.startswith(("{", "[")):
        return "perennial"
    if "," not in first and path.suffix.lower() != ".csv":
        return "tiers"
    columns = {c.strip().lower() for c in next(csv.reader([first]), [])}
    if {"bias", "factual_reporting"} <= columns:
        return "mbfc"
    if columns & {"domain", "source"} and columns & {"pc1", "score"}:
        return "scores"
    if {"domain", "tier"} <= columns:
        return "ratings"
    raise SourceImportError(
        f"{path}: unknown table header {first[:80]!r}; expected MBFC (source,bias,"
        "factual_reporting), scores (domain,pc1) or ratings (domain,tier,reason) columns"
    )


def import_sources(
    store_sources: RatingTable,
    path: Path,
    *,
    fmt: str | None = None,
    tier: Tier | None = None,
    origin: str | None = None,
) -> ImportReport:
    """Import one rating file into the sources table and report every skipped line."""
    text, notes = _read_text(path)
    fmt = fmt or detect_format(path, text)
    origin = origin or path.name
    if fmt not in FORMATS:
        raise SourceImportError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    if origin == SEED_ORIGIN:
        raise SourceImportError(f"origin {SEED_ORIGIN!r} is reserved for the built-in list")
    if fmt == "tiers" and tier is None:
        raise SourceImportError(
            f"{path} is a plain domain list: pass --tier high|medium|low to import it as a tier "
            "list, or --format blocklist to block every domain in it"
        )
    if tier is not None and fmt != "tiers":
        raise SourceImportError(f"--tier applies only to plain domain lists, not to {fmt}")
    skipped: list[SkippedLine] = []
    try:
        ratings = _parse(fmt, text, tier=tier, origin=origin, skipped=skipped)
    except ValueError as exc:
        raise SourceImportError(f"{path}: {exc}") from exc
    read = len(ratings) + len(skipped)
    existing = _get_many(store_sources, [r.domain for r in ratings if r.tier is not Tier.BLOCKED])
    kept: list[SourceRating] = []
    for rating in ratings:
        old = existing.get(rating.domain)
        if old is not None and old.tier is Tier.BLOCKED and rating.tier is not Tier.BLOCKED:
            why = f"{rating.domain} stays blocked (blocked by {old.origin})"
            skipped.append(SkippedLine(int(rating.details.get("line", 0)), why, rating.domain))
        else:
            kept.append(rating)
    written = store_sources.upsert_many(kept)
    by_tier: dict[str, int] = {}
    for rating in kept:
        by_tier[rating.tier.value] = by_tier.get(rating.tier.value, 0) + 1
    skipped.sort(key=lambda s: s.line)
    return ImportReport(str(path), fmt, origin, read, written, tuple(skipped), by_tier, notes)


def load_seed(store_sources: RatingTable) -> int:
    """Write the built-in ratings wherever no operator import has rated the key; return count."""
    text = resources.files("pipeline").joinpath("data/seed_sources.csv").read_text("utf-8")
    skipped: list[SkippedLine] = []
    ratings = parse_rating_table(text, origin=SEED_ORIGIN, skipped=skipped)
    for item in skipped:
        log.warning("seed line skipped", extra={"line": item.line, "reason": item.reason})
    existing = _get_many(store_sources, [r.domain for r in ratings])
    fresh = [
        r for r in ratings if (old := existing.get(r.domain)) is None or old.origin == SEED_ORIGIN
    ]
    return store_sources.upsert_many(fresh)


class _Collector:
    """Gathers one file's ratings, keeping the less credible one when a key repeats."""

    def __init__(self, origin: str, skipped: list[SkippedLine] | None) -> None:
        self.origin = origin
        self.skipped = skipped if skipped is not None else []
        self._by_key: dict[str, tuple[int, str, SourceRating]] = {}

    def skip(self, line: int, text: str, reason: str) -> None:
        self.skipped.append(SkippedLine(line, reason, text.strip()))

    def add(
        self, line: int, text: str, entry: str, tier: Tier, reason: str, **details: object
    ) -> None:
        try:
            key = normalize_entry(entry)
        except ValueError as exc:
            self.skip(line, text, str(exc))
            return
        rating = SourceRating(key, tier, reason, self.origin, {**details, "line": line})
        previous = self._by_key.get(key)
        if previous is None:
            self._by_key[key] = (line, text, rating)
        elif tier.rank > previous[2].tier.rank:
            self._by_key[key] = (line, text, rating)
            self.skip(previous[0], previous[1], f"{key} is rated lower on line {line}")
        else:
            self.skip(line, text, f"{key} is already rated on line {previous[0]}")

    def ratings(self) -> list[SourceRating]:
        return [rating for _, _, rating in self._by_key.values()]


def _parse_list(
    lines: Iterable[str],
    *,
    tier: Tier,
    reason: str,
    origin: str,
    skipped: list[SkippedLine] | None,
) -> list[SourceRating]:
    out = _Collector(origin, skipped)
    for number, raw in enumerate(lines, start=1):
        # "#" starts a comment only at a line start or after a space: "x.org/#a" is an entry.
        text = re.split(r"(?:^|\s)#", raw, maxsplit=1)[0].strip()
        if not text:
            continue
        if "\ufffd" in text:
            out.skip(number, raw, "line is not valid UTF-8")
            continue
        out.add(number, raw, text, tier, reason)
    return out.ratings()


def _csv_rows(
    text: str, required: Sequence[str], out: _Collector
) -> Iterator[tuple[int, dict[str, str], str]]:
    """Yield (line number, row, raw line) with "domain" and the required columns present."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.strip()), len(lines))
    header = [c.strip().lower() for c in next(csv.reader(lines[start : start + 1]), [])]
    # Tables name the same column differently; rename unless the canonical name is taken.
    aliases = {"source": "domain", "url": "domain", "pc1": "score"}
    header = [a if (a := aliases.get(c, c)) not in header else c for c in header]
    missing = [c for c in ("domain", *required) if c not in header]
    if missing:
        raise SourceImportError(f"table has no {', '.join(missing)} column (header {header})")
    for index in range(start + 1, len(lines)):
        raw, number = lines[index], index + 1
        if not raw.strip():
            continue
        if "\ufffd" in raw:
            out.skip(number, raw, "line is not valid UTF-8")
            continue
        try:
            fields = next(csv.reader([raw]))
        except csv.Error as exc:
            out.skip(number, raw, f"unreadable CSV: {exc}")
            continue
        if len(fields) != len(header):
            out.skip(number, raw, f"expected {len(header)} fields, found {len(fields)}")
            continue
        yield number, dict(zip(header, fields, strict=True)), raw


def _parse(
    fmt: str, text: str, *, tier: Tier | None, origin: str, skipped: list[SkippedLine]
) -> list[SourceRating]:
    if fmt == "tiers" and tier is not None:
        return parse_tier_list(text.splitlines(), tier=tier, origin=origin, skipped=skipped)
    if fmt == "blocklist":
        return parse_block_list(text.splitlines(), origin=origin, skipped=skipped)
    if fmt == "mbfc":
        return parse_mbfc_table(text, origin=origin, skipped=skipped)
    if fmt == "scores":
        return parse_score_table(text, origin=origin, skipped=skipped)
    if fmt == "perennial":
        return parse_perennial_json(text, origin=origin, skipped=skipped)
    return parse_rating_table(text, origin=origin, skipped=skipped)


def _read_text(path: Path) -> tuple[str, tuple[str, ...]]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SourceImportError(f"cannot read {path}: {exc.strerror or exc}") from exc
    if b"\x00" in data:
        raise SourceImportError(f"{path} looks binary or UTF-16: save it as UTF-8 text")
    try:
        return data.decode("utf-8-sig"), ()
    except UnicodeDecodeError as exc:
        # Keep the readable lines; the undecodable ones are reported as skipped.
        note = f"{path} is not valid UTF-8 (first bad byte at offset {exc.start})"
        return data.decode("utf-8-sig", errors="replace"), (note,)


def _get_many(table: RatingTable, keys: Sequence[str]) -> dict[str, SourceRating]:
    found: dict[str, SourceRating] = {}
    for i in range(0, len(keys), _CHUNK):
        found.update(table.get_many(keys[i : i + _CHUNK]))
    return found


def _norm_factual(value: str) -> str:
    text = " ".join(re.sub(r"[^a-z]+", " ", value.lower()).split()).removesuffix(" reporting")
    if text != "mostly factual":
        text = text.removesuffix(" factual")
    return text if text in _FACTUAL else "unknown"


def _norm_bias(value: str) -> str:
    words = set(re.sub(r"[^a-z]+", " ", value.lower()).split())
    # Substrings, not words: the scrape has typos such as "pseusdoscience" and "psuedoscience".
    if any(w in value.lower() for w in ("conspiracy", "pseudo", "psuedo", "quackery")):
        return "conspiracy-pseudoscience"
    if words & {"questionable", "junk", "fake", "propaganda"}:
        return "questionable"
    if "satire" in words:
        return "satire"
    if "science" in words:
        return "pro-science"
    if "least" in words or (
        words & {"center", "centre", "centrist"} and not words & {"left", "right"}
    ):
        return "least biased"
    if words & {"center", "centre"}:
        return "left-center" if "left" in words else "right-center"
    side = "left" if "left" in words else "right" if "right" in words else ""
    if not side:
        return "unknown"
    return f"far {side}" if words & {"far", "extreme", "alt"} else side
