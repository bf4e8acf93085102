"""The image tier: date and place conflicts, the typed marker, and the rules that decide on it."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from pipeline.checking.images import describe_findings
from pipeline.image.conflicts import Conflict, EventFrame, event_frame, find_conflict, places_in
from pipeline.judge.rules import enforce_rules
from pipeline.judge.tiered import decide, is_image_provenance, out_of_context
from pipeline.records.domain import (
    Assessment,
    Basis,
    Claim,
    ClaimVerdict,
    Correction,
    Document,
    Evidence,
    ImageTrace,
    Label,
    Narrative,
    Passage,
    Reference,
    Relation,
    Tier,
    Verdict,
)
from pipeline.records.image import ImageHashes, IndexedImage
from pipeline.reply.writer import verify_references

POSTED = datetime(2024, 9, 27, 12, tzinfo=UTC)
HASHES = ImageHashes(phash="0" * 16, phash_core="0" * 16)


def seen(when: datetime | None, caption: str = "") -> IndexedImage:
    return IndexedImage(
        "sha", "https://old.example/a.jpg", "https://old.example/a", HASHES, None, when, caption
    )


def test_places_are_read_after_place_words_and_countries_anywhere() -> None:
    assert [p.name for p in places_in("Storm Xavier flooded Manila yesterday")] == ["Manila"]
    assert [p.country for p in places_in("Floods in Bangkok, Thailand")] == ["TH", "TH"]
    assert [p.name for p in places_in("Typhoon hits the Philippines")] == ["Philippines"]
    # The first word of a longer name is not the town it happens to name (Hurricane, Utah).
    assert places_in("A photo of Hurricane Sandy") == ()
    assert places_in("Look at this photo from today") == ()


def test_the_event_is_dated_by_its_text_else_by_the_post() -> None:
    named = event_frame("The floods of March 2012 in Bangkok", when=POSTED)
    assert named.dated_by_text and named.start == datetime(2012, 3, 1, tzinfo=UTC)
    assert [p.name for p in named.places] == ["Bangkok"]
    plain = event_frame("Storm flooded Manila", when=POSTED)
    assert not plain.dated_by_text and plain.start == POSTED
    assert event_frame("Storm flooded Manila", when=None).start is None


def test_date_and_place_conflicts() -> None:
    frame = event_frame("Storm Xavier flooded Manila", when=POSTED)
    older = find_conflict(seen(datetime(2012, 5, 3, tzinfo=UTC), "Flooding in Bangkok"), frame)
    assert older is not None and older.kind == "date" and "3 May 2012" in older.detail
    # Within the margin and in the same city: it may well show the event.
    assert (
        find_conflict(seen(datetime(2024, 9, 26, tzinfo=UTC), "Flooding in Manila"), frame) is None
    )
    place = find_conflict(seen(datetime(2024, 9, 26, tzinfo=UTC), "Flooding in Bangkok"), frame)
    assert place is not None and place.kind == "place"
    assert place.detail == "its caption places it in Bangkok, not Manila"
    dated = find_conflict(seen(datetime(2024, 9, 26, tzinfo=UTC), "Manila floods, 2012"), frame)
    assert dated is not None and dated.kind == "date" and "2012" in dated.detail
    # An event the post itself dates to 2012 is not contradicted by a 2012 photo.
    then = event_frame("The 2012 floods in Manila", when=POSTED)
    assert find_conflict(seen(datetime(2012, 5, 3, tzinfo=UTC), "Manila, 2012"), then) is None
    # Nothing dates the event and no place to compare: no conflict.
    assert (
        find_conflict(seen(datetime(2012, 5, 3, tzinfo=UTC), "A flood"), EventFrame(None)) is None
    )


CLAIM = Claim(id="c1", post_id="p", position=0, text="Storm Xavier flooded Manila")


def evidence(n: int, *, trace: ImageTrace | None = None, tier: Tier = Tier.HIGH) -> Evidence:
    document = Document(
        id=f"d{n}",
        url=f"https://pub{n}.example/s",
        domain=f"pub{n}.example",
        title=f"S{n}",
        text="t",
    )
    return Evidence(
        id=f"e{n}",
        claim_id="c1",
        passage=Passage(id=f"d{n}:image", document_id=f"d{n}", position=0, text="t"),
        document=document,
        relevance=0.9,
        tier=tier,
        image=trace,
    )


def trace(conflict: str = "date") -> ImageTrace:
    return ImageTrace(
        image_id="img",
        image_url="https://pub1.example/a.jpg",
        distance=3,
        published_at=datetime(2012, 5, 3, tzinfo=UTC),
        caption="Flooding in Bangkok",
        conflict=conflict,
        detail="it appeared on 3 May 2012, before the event" if conflict else "",
    )


def test_the_marker_is_typed_and_only_citable_conflicts_count() -> None:
    assert is_image_provenance(evidence(1, trace=trace()))
    assert not is_image_provenance(evidence(2))
    assert out_of_context(evidence(1, trace=trace()))
    assert not out_of_context(evidence(1, trace=trace(conflict="")))
    assert not out_of_context(evidence(1, trace=trace(), tier=Tier.UNUSABLE))


def test_out_of_context_decides_first_in_the_tiered_rule() -> None:
    items = [evidence(1, trace=trace()), evidence(2)]
    narratives = [Narrative("n1", "c1", ("e2",), "e2")]
    # The model reads the text's evidence as supporting: the photo still decides first.
    assessments = [Assessment("c1", "n1", Relation.SUPPORTS, (), "Reports confirm the storm.")]
    verdict = decide(CLAIM, assessments, narratives, items)
    assert verdict.label is Label.MISLEADING and verdict.evidence_ids == ("e1",)
    assert verdict.rationale.startswith("The photo is shown out of context: it appeared on 3 May")
    # A trace that fits the post is CRAVE's image support, when a narrative supports.
    fits = [evidence(1, trace=trace(conflict="")), evidence(2)]
    narratives = [Narrative("n1", "c1", ("e1", "e2"), "e1")]
    assert decide(CLAIM, assessments, narratives, fits).label is Label.ACCURATE


def test_the_rules_make_any_judge_say_misleading_but_false_stands() -> None:
    items = [evidence(1, trace=trace()), evidence(2)]
    for label in (Label.ACCURATE, Label.UNVERIFIABLE, Label.PARTLY_ACCURATE):
        judged = Verdict(label, (ClaimVerdict("c1", label, "judge", ("e2",), basis=Basis.MODEL),))
        ruled = enforce_rules(judged, items, [])
        assert ruled.label is Label.MISLEADING
        (cv,) = ruled.claims
        assert cv.basis is Basis.RULES and cv.evidence_ids[0] == "e1"
        if label is Label.UNVERIFIABLE:  # what an unverifiable verdict saw decided nothing
            assert cv.evidence_ids == ("e1",)
    false = Verdict(Label.FALSE, (ClaimVerdict("c1", Label.FALSE, "refuted", ("e2",)),))
    assert enforce_rules(false, items, []).label is Label.FALSE
    # Without a conflict, nothing changes.
    fits = [evidence(1, trace=trace(conflict="")), evidence(2)]
    accurate = Verdict(Label.ACCURATE, (ClaimVerdict("c1", Label.ACCURATE, "ok", ("e2",)),))
    assert enforce_rules(accurate, fits, []) == accurate


def test_a_caption_naming_another_storm_is_an_event_conflict() -> None:
    frame = event_frame("Storm Xavier flooded Manila", when=POSTED)
    assert frame.storms == ("Storm Xavier",) and frame.kind == "storm"
    other = find_conflict(
        seen(datetime(2024, 9, 26, tzinfo=UTC), "Hurricane Sandy in Manila"), frame
    )
    assert other == Conflict("event", "its caption names Hurricane Sandy, not Storm Xavier")
    # The same storm under another kind's name is the same storm.
    assert find_conflict(seen(datetime(2024, 9, 26, tzinfo=UTC), "Typhoon Xavier"), frame) is None


def test_the_correction_says_what_was_found_about_the_photo() -> None:
    correction = Correction(
        label=Label.MISLEADING,
        headline="This post is misleading.",
        references=(Reference(1, "d1", "https://pub1.example/s", "S1"),),
    )
    said = describe_findings(correction, [evidence(1, trace=trace())], event="storm")
    assert said.note == (
        'This photo appeared on 3 May 2012 [1], captioned "Flooding in Bangkok", before the storm '
        "the post describes."
    )
    assert said.references == correction.references  # the verdict already cited the page
    place = dataclasses.replace(
        trace(conflict="place"), detail="its caption places it in Bangkok, not Manila"
    )
    uncited = Correction(label=Label.MISLEADING, headline="h", note="(A note.)")
    said = describe_findings(uncited, [evidence(2, trace=place), evidence(3)])
    assert said.note == (
        '(A note.) This photo appeared on 3 May 2012 [1], captioned "Flooding in Bangkok": it '
        "shows Bangkok, not Manila as the post says."
    )
    assert [r.url for r in said.references] == ["https://pub2.example/s"]  # added, retrieved
    verify_references(said, [evidence(2, trace=place)])
    assert describe_findings(uncited, [evidence(3)]) is uncited
