"""The whole text pipeline on a real index: real embedder, real SQLite, real credibility."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipeline.credibility.importers import import_sources, load_seed
from pipeline.credibility.policy import SourcePolicy
from pipeline.embedding.onnx import OnnxEmbedder
from pipeline.evidence.ingest import Ingester
from pipeline.inputs.posts import post_from_text
from pipeline.judge.claimreview import ReviewMatchJudge
from pipeline.records.domain import Check, Label, Stance
from pipeline.run import CheckConfig, CheckDeps, run_check
from storage import Store
from tests.conftest import FIXTURES


@pytest.fixture
async def indexed(store: Store, embedder: OnnxEmbedder, tmp_path: Path) -> Store:
    load_seed(store.sources)
    blocklist = tmp_path / "block.txt"
    blocklist.write_text("naturalnews.com\n")
    import_sources(store.sources, blocklist, fmt="blocklist")
    report = await Ingester(store.documents, embedder).ingest([str(FIXTURES / "corpus.jsonl")])
    assert report.added == 7 and not report.errors
    return store


async def _check(store: Store, embedder: OnnxEmbedder, text: str, **kw: object) -> Check:
    deps = CheckDeps(
        index=store.documents,
        embedder=embedder,
        rater=SourcePolicy(store.sources, unrated="allow"),
        judge=ReviewMatchJudge(embedder, match_threshold=0.75),
    )
    post = post_from_text(text, max_chars=100_000)
    return await run_check(post, deps=deps, config=CheckConfig(), **kw)  # type: ignore[arg-type]


def _assert_references_retrieved(check: Check, store: Store) -> None:
    evidence_docs = {e.document.id: e.document.url for e in check.evidence}
    for ref in check.correction.references:
        assert evidence_docs[ref.document_id] == ref.url
        stored = store.documents.get(ref.document_id)
        assert stored is not None and stored.url == ref.url


async def test_matching_fact_check_decides_and_is_cited(
    indexed: Store, embedder: OnnxEmbedder
) -> None:
    check = await _check(
        indexed, embedder, "5G networks are spreading the coronavirus!! 📡 https://t.co/x"
    )
    assert check.verdict.label is Label.FALSE
    assert check.correction.text.startswith("This post is false.")
    urls = [r.url for r in check.correction.references]
    assert urls[0].startswith("https://www.politifact.com/")
    assert not any("naturalnews" in e.document.url for e in check.evidence)  # blocked, never cited
    decisive = [e for e in check.evidence if e.stance is Stance.REFUTES]
    assert decisive and decisive[0].document.claim_review is not None
    assert [t.stage for t in check.timings] == [
        "claims",
        "queries",
        "retrieval",
        "relevance",
        "ranking",
        "judgement",
        "correction",
    ]
    _assert_references_retrieved(check, indexed)


async def test_without_a_fact_check_the_claim_is_unverifiable_with_sources(
    indexed: Store, embedder: OnnxEmbedder
) -> None:
    check = await _check(
        indexed,
        embedder,
        "Hydroxychloroquine cures hospitalized COVID-19 patients, a big study found.",
    )
    assert check.verdict.label is Label.UNVERIFIABLE
    assert check.correction.text.startswith("This post is unverifiable")
    assert any("reuters.com" in r.url for r in check.correction.references)
    _assert_references_retrieved(check, indexed)


async def test_time_bound_keeps_only_earlier_evidence(
    indexed: Store, embedder: OnnxEmbedder
) -> None:
    before = datetime(2020, 4, 1, tzinfo=UTC)
    check = await _check(
        indexed, embedder, "5G networks are spreading the coronavirus.", before=before
    )
    assert check.verdict.label is Label.UNVERIFIABLE  # the fact-check came out later
    assert all(e.document.published_at and e.document.published_at < before for e in check.evidence)


async def test_unrelated_claim_cites_nothing(indexed: Store, embedder: OnnxEmbedder) -> None:
    check = await _check(indexed, embedder, "The Eiffel Tower was moved to Berlin in 1999.")
    assert check.verdict.label is Label.UNVERIFIABLE
    assert check.correction.references == ()
    assert "No credible evidence" in check.correction.text


async def test_negated_claim_does_not_adopt_the_rating(
    indexed: Store, embedder: OnnxEmbedder
) -> None:
    check = await _check(indexed, embedder, "5G networks do not spread the coronavirus.")
    assert check.verdict.label is not Label.FALSE


async def test_stored_check_round_trips(indexed: Store, embedder: OnnxEmbedder) -> None:
    check = await _check(indexed, embedder, "Drinking bleach protects you against COVID-19.")
    assert check.verdict.label is Label.FALSE
    indexed.checks.save(check)
    assert indexed.checks.get(check.id) == check


async def test_reingest_is_idempotent(indexed: Store, embedder: OnnxEmbedder) -> None:
    report = await Ingester(indexed.documents, embedder).ingest([str(FIXTURES / "corpus.jsonl")])
    assert (report.added, report.updated, report.unchanged) == (0, 0, 7)
    assert indexed.documents.stats().documents == 7


async def test_bad_jsonl_lines_are_reported_and_the_rest_kept(
    store: Store, embedder: OnnxEmbedder, tmp_path: Path
) -> None:
    good = {
        "url": "https://example.org/ok",
        "title": "Fine",
        "text": "A perfectly good article about rivers and lakes.",
    }
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(
        b"\n".join(
            [
                json.dumps(good).encode(),
                b"{not json",
                json.dumps({"url": "https://example.org/notext"}).encode(),
                json.dumps({"url": "ftp://example.org/x", "text": "t"}).encode(),
                b'{"url": "https://example.org/latin", "text": "caf\xe9"}',
                b"[1, 2]",
                b"",
            ]
        )
    )
    report = await Ingester(store.documents, embedder).ingest(
        [str(path), str(tmp_path / "missing.jsonl")]
    )
    assert report.added == 1
    assert [e.line for e in report.errors] == [2, 3, 4, 5, 6, None]
    assert "not valid UTF-8" in str(report.errors[3])
    assert "no such file" in str(report.errors[5])


async def test_the_posts_own_links_are_not_evidence(indexed: Store, embedder: OnnxEmbedder) -> None:
    own = "https://www.politifact.com/factchecks/2020/apr/15/facebook-posts/no-5g-doesnt-spread-coronavirus/"
    check = await _check(indexed, embedder, f"5G networks spread the coronavirus. {own}")
    assert own not in {e.document.url for e in check.evidence}
    assert check.verdict.label is Label.UNVERIFIABLE


async def test_every_passage_occurs_in_its_stored_document(indexed: Store) -> None:
    from pipeline.reply.citations import quote_is_verbatim

    rows = indexed.db.execute(
        "SELECT passages.text, documents.text FROM passages "
        "JOIN documents ON documents.id = passages.document_id"
    ).fetchall()
    assert rows and all(quote_is_verbatim(passage, text) for passage, text in rows)
