"""A check's details stored as JSON: image report, narratives, their assessments and quotes.

These records grow: other parts of factbot add fields at the end of `ImageDescription` (faces,
provenance, ...) with defaults. So they are written as the JSON of the dataclass and read back
field by field from the record's own type hints: a key the row lacks takes the field's default
(an older row), a key the record no longer has is ignored (a newer row read by older code).
Nested dataclasses, tuples, optionals, enums and datetimes are rebuilt; a datetime keeps its
offset or its absence (EXIF times are often naive).

Redaction (`redact_images`) removes what is post content — text read in the images, captions,
descriptions, names, addresses, EXIF place and time — and keeps what says nothing of the post:
sizes, hashes, content-credential signers and whether an image was AI-made.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import types
import typing
from datetime import datetime
from enum import Enum
from functools import cache
from typing import Any, TypeVar, cast

from sqlite_utils import Database

from pipeline.records.domain import Assessment, ImageTrace, Narrative, Quote
from pipeline.records.image import ImageReport

T = TypeVar("T")


def to_json(value: Any) -> str:
    """Return the JSON of a dataclass (or a tuple of them), datetimes as ISO 8601."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        plain: Any = dataclasses.asdict(value)
    else:
        plain = [dataclasses.asdict(v) for v in value]
    return json.dumps(plain, default=_default, ensure_ascii=False)


def _default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not stored as JSON")


_UNKNOWN = object()  # a field whose type cannot be resolved here (imported for type checks only)


@cache
def _hints(cls: Any) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except NameError:  # resolve field by field; an unresolvable one reads as its default
        space = vars(sys.modules[cls.__module__])
        hints: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            one = {"__annotations__": {f.name: f.type}, "__module__": cls.__module__}
            try:
                hints[f.name] = typing.get_type_hints(type("One", (), one), globalns=space)[f.name]
            except NameError:
                hints[f.name] = _UNKNOWN
        return hints


def from_plain(kind: Any, value: Any) -> Any:
    """Rebuild a value of type `kind` from its JSON form (dataclasses field by field)."""
    if value is None:
        return None
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(kind) if a is not type(None)]
        return from_plain(options[0], value) if len(options) == 1 else value
    if origin is tuple:
        args = typing.get_args(kind)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_plain(args[0], v) for v in value)
        return tuple(from_plain(a, v) for a, v in zip(args, value, strict=False))
    if origin in (dict, list):
        return value if origin is dict else list(value)
    if isinstance(kind, type):
        if dataclasses.is_dataclass(kind):
            return _dataclass(kind, value)
        if issubclass(kind, Enum):
            return kind(value)
        if issubclass(kind, datetime):
            return datetime.fromisoformat(value)
        if kind is float:
            return float(value)
    return value


def _dataclass(cls: type[T], data: dict[str, Any]) -> T:
    hints = _hints(cast(Any, cls))
    found: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if not f.init:
            continue
        has_default = not (
            f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        )
        if f.name in data and (hints[f.name] is not _UNKNOWN or not has_default):
            found[f.name] = from_plain(hints[f.name], data[f.name])
        elif not has_default:
            raise ValueError(f"a stored {cls.__name__} has no {f.name!r}")
    return cls(**found)


def images_out(report: ImageReport) -> str:
    """Return the stored form of an image report."""
    return to_json(report)


def images_in(value: str | None) -> ImageReport:
    """Read an image report stored by `images_out` (an empty report for older rows)."""
    if not value:
        return ImageReport()
    data = json.loads(value)
    return _dataclass(ImageReport, data) if data else ImageReport()


def trace_out(trace: ImageTrace | None) -> str | None:
    """Return the stored form of an evidence item's image trace (None when it has none)."""
    return None if trace is None else to_json(trace)


def trace_in(value: str | None) -> ImageTrace | None:
    """Read an image trace stored by `trace_out`."""
    return _dataclass(ImageTrace, json.loads(value)) if value else None


def narratives_out(narratives: tuple[Narrative, ...]) -> str:
    """Return the stored form of a check's narratives."""
    return to_json(narratives)


def narratives_in(value: str | None) -> tuple[Narrative, ...]:
    """Read narratives stored by `narratives_out`."""
    return tuple(_dataclass(Narrative, n) for n in json.loads(value or "[]"))


def assessments_out(assessments: tuple[Assessment, ...]) -> str:
    """Return the stored form of a check's assessments."""
    return to_json(assessments)


def assessments_in(value: str | None) -> tuple[Assessment, ...]:
    """Read assessments stored by `assessments_out`."""
    return tuple(_dataclass(Assessment, a) for a in json.loads(value or "[]"))


def quotes_out(quotes: tuple[Quote, ...]) -> str:
    """Return the stored form of a check's extracted quotes."""
    return to_json(quotes)


def quotes_in(value: str | None) -> tuple[Quote, ...]:
    """Read quotes stored by `quotes_out`."""
    return tuple(_dataclass(Quote, q) for q in json.loads(value or "[]"))


# Keys of an image description (and its parts) that are post content, and what they become.
_PRIVATE_DESCRIPTION: dict[str, Any] = {
    "url": "",
    "ocr": None,
    "caption": None,
    "terms": [],
    "text": "",
}
_PRIVATE_EXIF: dict[str, Any] = {
    "captured_at": None,
    "latitude": None,
    "longitude": None,
    "camera": None,
}


def redact_images(value: str | None) -> str:
    """Return a stored image report without its post content (text, captions, place, URLs).

    Fields added later to a description are dropped unless they are known to be harmless, so
    a redacted report never keeps something private by accident.
    """
    if not value:
        return "{}"
    data = json.loads(value)
    if not data:
        return "{}"
    kept_keys = {"image_id", "origin", "width", "height", "frames", "hashes", "metadata"}
    descriptions = []
    for d in data.get("descriptions", []):
        out = {k: v for k, v in d.items() if k in kept_keys}
        out.update(_PRIVATE_DESCRIPTION)
        meta = dict(out.get("metadata") or {})
        if meta.get("exif"):
            meta["exif"] = {**meta["exif"], **_PRIVATE_EXIF}
        out["metadata"] = meta
        descriptions.append(out)
    failures = [
        {"source": {**f["source"], "ref": "", "page_url": None}, "reason": f["reason"]}
        for f in data.get("failures", [])
    ]
    return json.dumps({"descriptions": descriptions, "failures": failures}, ensure_ascii=False)


def redact_assessments(value: str | None) -> str:
    """Return stored assessments without the model's words (rationale and facet notes)."""
    found = []
    for a in json.loads(value or "[]"):
        facets = [{**f, "note": ""} for f in a.get("facets", [])]
        found.append({**a, "rationale": "", "facets": facets})
    return json.dumps(found)


def redact_check_details(db: Database, check_id: str) -> None:
    """Redact a stored check's image report and assessments (inside the caller's transaction)."""
    row = db.execute("SELECT images, assessments FROM checks WHERE id = ?", [check_id]).fetchone()
    if row is None:
        return
    db.execute(
        "UPDATE checks SET images = ?, assessments = ? WHERE id = ?",
        [redact_images(row[0]), redact_assessments(row[1]), check_id],
    )
