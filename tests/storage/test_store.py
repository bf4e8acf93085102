from __future__ import annotations

import dataclasses
import json
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from sqlite_utils import Database

from pipeline.errors import NotFoundError
from pipeline.records.domain import (
    Check,
    Claim,
    ClaimReview,
    ClaimVerdict,
    Correction,
    CorrectionItem,
    CorrectionQuote,
    Document,
    Evidence,
    Label,
    ModelUsage,
    Passage,
    Post,
    Reference,
    StageTiming,
    Stance,
    Tier,
    Verdict,
    document_id_for,
)
from storage import Store
from storage.migrations import migrations


def _doc(url: str = "https://example.org/a", text: str = "Some text about things.") -> Document:
    return Document(
        id=document_id_for(url),
        url=url,
        domain="example.org",
        title="A title",
        text=text,
        published_at=datetime(2020, 5, 1, tzinfo=UTC),
        claim_review=ClaimReview(claim_reviewed="X is Y", rating="False", label=Label.FALSE),
    )


def _vec(seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=384).astype(np.float32)
    return v / np.linalg.norm(v)


def test_open_applies_named_migrations_in_wal_mode(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "a.db")
    applied = store.applied_migrations()
    assert applied == [
        "m001_posts_and_checks",
        "m002_evidence_index",
        "m003_sources",
        "m004_jobs",
        "m005_web_caches",
        "m006_model_usage",
        "m007_claim_shown",
        "m008_job_runtime",
        "m009_structured_correction",
        "m010_reuse_fingerprints",
        "m011_platform_requests",
        "m012_slack_installations",
        "m013_image_index",
        "m014_claim_graphs",
        "m015_x_notes",
        "m016_review_queue",
        "m017_monitor",
        "m018_dashboard",
        "m019_search_status",
        "m020_check_details",
        "m021_face_gallery",
        "m022_image_tight_hash",
        "m023_evidence_image",
        "m024_check_quotes",
        "m025_claim_language",
        "m026_post_kind",
        "m027_posts_language_index",
        "m028_passages_trigram",
        "m029_fact_checks",
        "m030_check_fact_checks",
        "m031_post_leads",
        "m032_fact_check_hashes",
    ]
    assert store.journal_mode() == "wal"
    tables = set(store.db.table_names())
    assert {
        "posts",
        "checks",
        "claims",
        "evidence",
        "documents",
        "passages",
        "sources",
        "jobs",
    } <= tables
    store.close()
    # Re-opening applies nothing twice.
    again = Store.open(tmp_path / "a.db")
    assert again.applied_migrations() == applied
    again.close()


def test_upsert_is_idempotent_by_url_and_hash(store: Store) -> None:
    doc = _doc()
    passages = [("first passage", _vec(1)), ("second passage", _vec(2))]
    assert store.documents.upsert(doc, passages, content_hash="h1") == "added"
    assert store.documents.upsert(doc, passages, content_hash="h1") == "unchanged"
    assert store.documents.upsert(doc, passages[:1], content_hash="h2") == "updated"
    stats = store.documents.stats()
    assert (stats.documents, stats.passages, stats.fact_checks) == (1, 1, 1)
    # The FTS index followed the delete and the insert.
    assert len(store.documents.search_text('"second"', limit=5)) == 0
    assert len(store.documents.search_text('"first"', limit=5)) == 1
    loaded = store.documents.get(doc.id)
    assert loaded is not None and loaded.claim_review is not None
    assert loaded.claim_review.label is Label.FALSE


def test_vectors_cache_follows_changes(store: Store) -> None:
    store.documents.upsert(_doc(), [("p", _vec(1))], content_hash="h1")
    first = store.documents.vectors()
    assert first.matrix.shape == (1, 384)
    assert store.documents.vectors() is first
    store.documents.upsert(_doc("https://example.org/b"), [("q", _vec(2))], content_hash="h2")
    assert store.documents.vectors().matrix.shape == (2, 384)


def test_time_bound_excludes_later_and_undated_documents(store: Store) -> None:
    store.documents.upsert(_doc(text="alpha"), [("alpha beta", _vec(1))], content_hash="h1")
    before = datetime(2020, 4, 1, tzinfo=UTC)
    assert store.documents.search_text('"alpha"', limit=5, before=before) == []
    assert len(store.documents.search_text('"alpha"', limit=5)) == 1


def _check(store: Store) -> Check:
    doc = _doc()
    store.documents.upsert(doc, [("passage text", _vec(1))], content_hash="h")
    post = Post(id="post1", platform="cli", platform_id="post1", text="X is Y.")
    claim = Claim(id="c1", post_id="post1", position=0, text="X is Y.")
    passage = Passage(id="1", document_id=doc.id, position=0, text="passage text")
    ev = Evidence(
        id="e1",
        claim_id="c1",
        passage=passage,
        document=doc,
        relevance=0.8,
        tier=Tier.HIGH,
        stance=Stance.REFUTES,
    )
    verdict = Verdict(
        label=Label.FALSE,
        claims=(
            ClaimVerdict(claim_id="c1", label=Label.FALSE, rationale="r", evidence_ids=("e1",)),
        ),
    )
    correction = Correction(
        label=Label.FALSE,
        headline="This post is false.",
        items=(
            CorrectionItem(
                claim_number=1,
                claim="X is Y.",
                label=Label.FALSE,
                explanation="r",
                references=(1,),
                quote=CorrectionQuote(text="passage text", reference=1),
            ),
        ),
        references=(Reference(number=1, document_id=doc.id, url=doc.url, title=doc.title),),
    )
    return Check(
        id="check1",
        post=post,
        claims=(claim,),
        evidence=(ev,),
        verdict=verdict,
        correction=correction,
        timings=(StageTiming("claims", 0.01),),
        usage=(ModelUsage("judge", 1, 900, 120, 0.0021, 1.4),),
    )


def test_check_round_trips(store: Store) -> None:
    check = _check(store)
    store.checks.save(check)
    loaded = store.checks.get("check1")
    assert loaded == check


def test_structured_correction_round_trips(store: Store) -> None:
    check = _check(store)
    item = check.correction.items[0]
    unknown = CorrectionItem(
        3, "Z happened.", Label.UNVERIFIABLE, "No fact-check settles it.", (1,)
    )
    bare = CorrectionItem(4, "W.", Label.UNVERIFIABLE, "No credible evidence about it was found.")
    note = "(1 claim was checked but not shown: its evidence did not pass the citation check.)"
    correction = dataclasses.replace(
        check.correction, items=(item, unknown, bare), note=note, label=Label.PARTLY_ACCURATE
    )
    store.checks.save(dataclasses.replace(check, correction=correction))
    loaded = store.checks.get(check.id).correction
    assert loaded == correction
    assert loaded.items[0].quote == CorrectionQuote(text="passage text", reference=1)
    stored = store.db.execute("SELECT correction FROM checks").fetchone()[0]
    assert stored == correction.text  # the full text stays readable in the table


def test_a_check_stored_before_structured_corrections_loads_headline_only(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = Database(path)
    migrations.apply(db, stop_before="m009_structured_correction")
    text = 'This post is false.\nClaim 1, "X is Y.": false. r [1]'
    db.table("posts").insert({"id": "p", "platform": "cli", "platform_id": "p", "text": "X is Y."})
    ref = {"number": 1, "document_id": "d", "url": "https://example.org/a", "title": "A"}
    db.table("checks").insert(
        {
            "id": "old",
            "post_id": "p",
            "created_at": "2026-01-01T00:00:00+00:00",
            "verdict": "false",
            "judge": "no-model",
            "correction": text,
            "refs": json.dumps([ref]),
            "timings": "[]",
        }
    )
    db.close()
    with Store.open(path) as store:
        correction = store.checks.get("old").correction
    assert correction == Correction(
        label=Label.FALSE,
        headline=text,
        references=(Reference(1, "d", "https://example.org/a", "A"),),
    )
    assert correction.text == text


def test_a_post_stored_before_leads_loads_without_any(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = Database(path)
    migrations.apply(db, stop_before="m031_post_leads")
    row = {"id": "p", "platform": "x", "platform_id": "1", "text": "X is Y.", "links": '["h"]'}
    db.table("posts").insert(row)
    db.close()
    with Store.open(path) as store:
        post = store.jobs.post("p")
    assert post == Post("p", "x", "1", "X is Y.", links=("h",)) and post.leads == ()


def test_check_write_is_atomic(store: Store) -> None:
    check = _check(store)
    broken = dataclasses.replace(check, evidence=check.evidence * 2)  # duplicate evidence id
    with pytest.raises(sqlite3.IntegrityError):
        store.checks.save(broken)  # fails on the last table: every earlier write rolls back
    for table in ("posts", "checks", "claims", "evidence"):
        assert store.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0


def test_missing_check_raises_not_found(store: Store) -> None:
    with pytest.raises(NotFoundError):
        store.checks.get("nope")
