"""A check's details stored as JSON: image report, narratives, their assessments and quotes.

These records grow: other parts of factbot add fields at the end of `ImageDescription` (faces,
provenance, ...) with defaults. They are written and read by `pipeline.records.codec` (pydantic's
`TypeAdapter` over the record's own type hints): a key the row lacks takes the field's default
(an older row), a key the record no longer has is ignored (a newer row read by older code).
Nested dataclasses, tuples, optionals, enums and datetimes are rebuilt; a datetime keeps its
offset or its absence (EXIF times are often naive).

Redaction (`redact_images`) removes what is post content — text read in the images, captions,
descriptions, names, addresses, EXIF place and time — and keeps what says nothing of the post:
sizes, hashes, content-credential signers and whether an image was AI-made.
"""

from __future__ import annotations

import json
from typing import Any

from sqlite_utils import Database

from pipeline.records.codec import dump, load
from pipeline.records.domain import Assessment, ImageTrace, Narrative, Quote
from pipeline.records.factchecks import ClaimMatch
from pipeline.records.image import ImageReport


def images_out(report: ImageReport) -> str:
    """Return the stored form of an image report."""
    return dump(report)


def images_in(value: str | None) -> ImageReport:
    """Read an image report stored by `images_out` (an empty report for older rows)."""
    return load(ImageReport, value) if value else ImageReport()


def trace_out(trace: ImageTrace | None) -> str | None:
    """Return the stored form of an evidence item's image trace (None when it has none)."""
    return None if trace is None else dump(trace)


def trace_in(value: str | None) -> ImageTrace | None:
    """Read an image trace stored by `trace_out`."""
    return load(ImageTrace, value) if value else None


def narratives_out(narratives: tuple[Narrative, ...]) -> str:
    """Return the stored form of a check's narratives."""
    return dump(narratives, kind=tuple[Narrative, ...])


def narratives_in(value: str | None) -> tuple[Narrative, ...]:
    """Read narratives stored by `narratives_out`."""
    return load(tuple[Narrative, ...], value or "[]")


def assessments_out(assessments: tuple[Assessment, ...]) -> str:
    """Return the stored form of a check's assessments."""
    return dump(assessments, kind=tuple[Assessment, ...])


def assessments_in(value: str | None) -> tuple[Assessment, ...]:
    """Read assessments stored by `assessments_out`."""
    return load(tuple[Assessment, ...], value or "[]")


def quotes_out(quotes: tuple[Quote, ...]) -> str:
    """Return the stored form of a check's extracted quotes."""
    return dump(quotes, kind=tuple[Quote, ...])


def quotes_in(value: str | None) -> tuple[Quote, ...]:
    """Read quotes stored by `quotes_out`."""
    return load(tuple[Quote, ...], value or "[]")


def fact_checks_out(matches: tuple[ClaimMatch, ...]) -> str:
    """Return the stored form of a check's matched published fact-checks."""
    return dump(matches, kind=tuple[ClaimMatch, ...])


def fact_checks_in(value: str | None) -> tuple[ClaimMatch, ...]:
    """Read matches stored by `fact_checks_out`."""
    return load(tuple[ClaimMatch, ...], value or "[]")


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
