"""A check's basis, narratives, assessments, quotes and image report survive storage."""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from sqlite_utils import Database

from pipeline.records.codec import dump, from_plain
from pipeline.records.domain import Basis, Relation, Stance
from pipeline.records.image import ImageReport
from storage import Store
from storage.details import images_in, redact_images
from storage.migrations import migrations
from tests.bots.dashboard.factory import CAPTION, OCR_TEXT, image_report, make_check, with_details


def test_a_check_keeps_its_basis_narratives_assessments_and_images(store: Store) -> None:
    check = with_details(make_check(), basis=Basis.REVIEW)
    store.checks.save(check)
    loaded = store.checks.get(check.id)
    assert loaded == check  # basis takes part in equality
    assert loaded.verdict.claims[0].basis is Basis.REVIEW
    assert loaded.narratives == check.narratives and loaded.narratives
    assert loaded.assessments[0].relation is Relation.CONFLICTS
    assert loaded.quotes == check.quotes and loaded.quotes[0].stance is Stance.REFUTES
    image = loaded.images.descriptions[0]
    assert image.ocr is not None and image.ocr.text == OCR_TEXT
    assert image.metadata.exif is not None
    assert image.metadata.exif.captured_at == datetime(2019, 7, 4, 18, 30)  # still naive
    assert image.metadata.credentials is not None and image.metadata.credentials.ai_generated
    assert loaded.images.failures[0].reason.startswith("the image could not be downloaded")


def test_a_different_basis_makes_a_different_check(store: Store) -> None:
    check = with_details(make_check(), basis=Basis.MODEL)
    other = with_details(check, basis=Basis.FALLBACK)
    assert check != other


def test_a_check_stored_before_m020_loads_with_empty_details(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = Database(path)
    migrations.apply(db, stop_before="m020_check_details")
    db.table("posts").insert({"id": "p", "platform": "cli", "platform_id": "p", "text": "X is Y."})
    db.table("checks").insert(
        {
            "id": "old",
            "post_id": "p",
            "created_at": "2026-01-01T00:00:00+00:00",
            "verdict": "false",
            "judge": "model",
            "correction": "This post is false.",
            "refs": "[]",
            "timings": "[]",
        }
    )
    db.table("claims").insert(
        {
            "id": "c",
            "check_id": "old",
            "post_id": "p",
            "position": 0,
            "text": "X is Y.",
            "label": "false",
            "rationale": "r",
            "evidence_ids": "[]",
        }
    )
    db.close()
    with Store.open(path) as store:
        loaded = store.checks.get("old")
    assert loaded.images == ImageReport()
    assert loaded.narratives == () and loaded.assessments == () and loaded.quotes == ()
    assert loaded.verdict.claims[0].basis is Basis.UNKNOWN


def test_a_basis_this_code_does_not_know_loads_as_unknown(store: Store) -> None:
    check = make_check()
    store.checks.save(check)
    store.db.execute("UPDATE claims SET basis = 'a basis from the future'")
    assert store.checks.get(check.id).verdict.claims[0].basis is Basis.UNKNOWN


@dataclasses.dataclass(frozen=True)
class _Grown:
    """A record that gained a field at its end (as ImageDescription gains `faces`)."""

    name: str
    when: datetime | None
    parts: tuple[int, ...]
    faces: tuple[str, ...] = ()


if TYPE_CHECKING:
    from decimal import Decimal  # known to type checkers only, as PIL's Image is in records


@dataclasses.dataclass(frozen=True)
class _Hinted:
    name: str
    amount: Decimal | None = None


def test_a_field_whose_type_is_imported_for_type_checks_only_reads_as_its_default() -> None:
    assert from_plain(_Hinted, {"name": "x", "amount": "1.5"}) == _Hinted("x")


def test_a_row_written_before_a_field_was_added_reads_with_its_default() -> None:
    old = {"name": "x", "when": "2020-01-01T00:00:00+00:00", "parts": [1, 2]}
    assert from_plain(_Grown, old) == _Grown("x", datetime(2020, 1, 1, tzinfo=UTC), (1, 2))
    grown = _Grown("y", None, (), ("f1",))
    assert from_plain(_Grown, json.loads(dump(grown))) == grown
    newer = {**old, "faces": [], "added_by_a_newer_factbot": 3}
    assert from_plain(_Grown, newer).faces == ()


def test_an_image_report_tolerates_fields_it_lacks_and_names_a_missing_required_one() -> None:
    data = json.loads(dump(image_report()))
    data["descriptions"][0]["future_field"] = [{"name": "someone"}]  # a field this code lacks
    assert images_in(json.dumps(data)) == image_report()
    del data["descriptions"][0]["terms"]  # required (no default): a clear error
    with pytest.raises(ValueError, match="terms"):
        images_in(json.dumps(data))


def test_redaction_keeps_hashes_and_credentials_and_drops_post_content() -> None:
    redacted = images_in(redact_images(dump(image_report())))
    image = redacted.descriptions[0]
    assert image.ocr is None and image.caption is None and image.terms == ()
    assert image.url == "" and image.text == ""
    assert image.metadata.exif is not None and image.metadata.exif.latitude is None
    assert image.metadata.exif.captured_at is None and image.metadata.exif.camera is None
    assert image.metadata.credentials is not None
    assert image.metadata.credentials.signer == "Example News Agency"
    assert image.hashes == image_report().descriptions[0].hashes
    assert redacted.failures[0].source.ref == "" and redacted.failures[0].reason
    text = redact_images(dump(image_report()))
    assert OCR_TEXT not in text and "warning" not in text and "Paris" not in text
    assert CAPTION not in text
