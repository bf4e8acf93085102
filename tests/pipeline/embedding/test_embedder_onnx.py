"""The int8 ONNX embedder against the torch one, the index's model record, and retrieval results."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from pipeline.claims.queries import Query
from pipeline.embedding.backends import build_embedder
from pipeline.embedding.embedder import SentenceTransformerEmbedder
from pipeline.embedding.onnx import ONNX_MODEL_NAME, OnnxEmbedder
from pipeline.errors import ConfigError, EmbeddingMismatchError
from pipeline.evidence.ingest import Ingester
from pipeline.evidence.retrieval import RRF_K, retrieve
from pipeline.records.domain import Document
from storage import Store
from storage.codec import dt_out

# Only these tests load torch: one worker runs them all and loads it once.
pytestmark = pytest.mark.xdist_group("torch")

SENTENCES = [
    "The WHO declared in 2023 that 5G towers spread COVID-19.",
    "Drinking hot water does not kill the coronavirus.",
    "The city council approved the new cycle lanes on Monday after a long debate.",
    "Vaccines were tested on tens of thousands of volunteers before approval.",
]


@pytest.fixture(scope="module")
def onnx_embedder() -> OnnxEmbedder:
    model = OnnxEmbedder()
    model.warm_up()
    return model


def test_onnx_loads_offline_and_agrees_with_torch(
    onnx_embedder: OnnxEmbedder, torch_embedder: SentenceTransformerEmbedder
) -> None:
    # The conftest blocks every non-loopback connection: loading needs no network.
    ours = onnx_embedder.embed_sync(SENTENCES)
    theirs = torch_embedder.embed_sync(SENTENCES)
    assert ours.shape == (4, 384) and ours.dtype == np.float32
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert float(np.min((ours * theirs).sum(axis=1))) > 0.995
    # The same pairs are close and far in both models.
    assert np.allclose(ours @ ours.T, theirs @ theirs.T, atol=0.01)
    assert onnx_embedder.name == ONNX_MODEL_NAME != torch_embedder.name


def test_order_and_batching_do_not_change_vectors(onnx_embedder: OnnxEmbedder) -> None:
    one_by_one = np.vstack([onnx_embedder.embed_sync([s]) for s in SENTENCES])
    small_batches = OnnxEmbedder(batch_size=3)
    assert np.allclose(small_batches.embed_sync(SENTENCES), one_by_one, atol=1e-4)
    assert onnx_embedder.embed_sync([]).shape == (0, 384)


def test_unknown_backend_and_missing_model_say_how_to_fix(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="FACTBOT_EMBEDDING__BACKEND"):
        build_embedder("tensorflow")
    with pytest.raises(ConfigError, match="does not exist"):
        OnnxEmbedder(str(tmp_path / "missing.onnx")).warm_up()


def _doc(n: int, text: str, published: datetime | None = None) -> Document:
    return Document(
        id=f"d{n}",
        url=f"https://news.example/{n}",
        domain="news.example",
        title=f"Story {n}",
        text=text,
        published_at=published,
    )


DOCS = [
    "The council approved the cycle lanes. Residents said the lanes changed their routines.",
    "Hospital waiting times rose by twelve percent, the health board said on Tuesday.",
    "5G towers do not spread viruses; radio waves cannot carry a virus, experts said.",
    "The ferry timetable changes in May. The port authority promised a consultation.",
    "COVID-19 vaccines were tested on tens of thousands of volunteers before approval.",
    "Flood defences along the river will cost about 40 million over three years.",
]


async def _fill(store: Store, embedder: object) -> None:
    ingester = Ingester(store.documents, embedder)  # type: ignore[arg-type]
    for n, text in enumerate(DOCS):
        published = datetime(2021, 1 + n, 1, tzinfo=UTC) if n % 3 else None
        await ingester.add_document(_doc(n, text, published))
    await ingester.finish()


async def test_vectors_of_another_model_are_refused_until_reembedded(
    store: Store, onnx_embedder: OnnxEmbedder, torch_embedder: SentenceTransformerEmbedder
) -> None:
    await _fill(store, torch_embedder)
    assert store.documents.embedding_model() == torch_embedder.name
    query = [Query(claim_id="c", text="Do 5G towers spread COVID-19?", terms=("5G", "towers"))]
    with pytest.raises(EmbeddingMismatchError, match="factbot ingest --reembed") as raised:
        await retrieve(query, index=store.documents, embedder=onnx_embedder)
    assert raised.value.index_model == torch_embedder.name
    ingester = Ingester(store.documents, onnx_embedder)
    with pytest.raises(EmbeddingMismatchError):  # nor may new documents be added
        await ingester.add_document(_doc(99, "Another story about towers."))
        await ingester.finish()
    assert store.documents.stats().documents == len(DOCS)

    before = store.documents.vectors().matrix.copy()
    assert await Ingester(store.documents, onnx_embedder).reembed(batch=4) == len(DOCS)
    assert store.documents.embedding_model() == onnx_embedder.name
    after = store.documents.vectors().matrix
    assert not np.array_equal(before, after)  # the cache followed the rewrite
    texts = [f"Story {n}\n{text}" for n, text in enumerate(DOCS)]
    assert np.allclose(after, onnx_embedder.embed_sync(texts), atol=1e-5)
    found = await retrieve(query, index=store.documents, embedder=onnx_embedder)
    assert found[0].document.id == "d2"


def test_an_index_from_before_the_record_is_the_torch_models(store: Store) -> None:
    assert store.documents.embedding_model() is None
    vec = np.ones(384, dtype=np.float32) / np.sqrt(384)
    store.documents.upsert(_doc(1, "text"), [("text", vec)], content_hash="h")
    assert store.documents.embedding_model() == "all-MiniLM-L6-v2"
    with pytest.raises(EmbeddingMismatchError, match="BACKEND=torch"):
        store.documents.require_model(ONNX_MODEL_NAME)


def _reference(
    store: Store, query: Query, qvec: np.ndarray, limit: int, before: datetime | None
) -> list[tuple[int, float]]:
    """Retrieval as it was before the speed-up: every row scored, FTS joined to documents."""
    rows = store.db.execute(
        "SELECT passages.id, passages.embedding, documents.published_at FROM passages "
        "JOIN documents ON documents.id = passages.document_id ORDER BY passages.id"
    ).fetchall()
    cosines = {
        r[0]: float(np.frombuffer(r[1], dtype=np.float32) @ qvec)
        for r in rows
        if before is None or (r[2] and datetime.fromisoformat(r[2]) < before)
    }
    dense = sorted(cosines, key=lambda p: -cosines[p])[:limit]
    sql = (
        "SELECT passages_fts.rowid, bm25(passages_fts) AS score FROM passages_fts "
        "JOIN passages ON passages.id = passages_fts.rowid "
        "JOIN documents ON documents.id = passages.document_id WHERE passages_fts MATCH ?"
    )
    params: list[object] = [query.fts]
    if before is not None:
        sql += " AND documents.published_at IS NOT NULL AND documents.published_at < ?"
        params.append(dt_out(before))
    sql += " ORDER BY score LIMIT ?"
    lexical = [r[0] for r in store.db.execute(sql, [*params, limit]).fetchall()]
    fused: dict[int, float] = {}
    for ranked in (dense, lexical):
        for rank, pid in enumerate(ranked):
            fused[pid] = fused.get(pid, 0.0) + 1.0 / (RRF_K + rank + 1)
    every = {r[0]: np.frombuffer(r[1], dtype=np.float32) for r in rows}
    return [(pid, float(every[pid] @ qvec)) for pid in sorted(fused, key=lambda p: -fused[p])]


@pytest.mark.parametrize("before", [None, datetime(2021, 4, 15, tzinfo=UTC)])
async def test_retrieval_matches_the_reference_top_k(
    store: Store, onnx_embedder: OnnxEmbedder, before: datetime | None
) -> None:
    await _fill(store, onnx_embedder)
    claims = [
        "5G towers spread the coronavirus",
        "Hospital waiting times rose this year",
        "The council approved new cycle lanes",
    ]
    queries = [
        Query(claim_id=f"c{i}", text=t, terms=tuple(t.lower().split()))
        for i, t in enumerate(claims)
    ]
    for limit in (2, 4, 40):
        found = await retrieve(
            queries, index=store.documents, embedder=onnx_embedder, limit=limit, before=before
        )
        vectors = onnx_embedder.embed_sync(claims)
        for query, qvec in zip(queries, vectors, strict=True):
            ours = [(int(c.passage.id), c.cosine) for c in found if c.claim_id == query.claim_id]
            expected = _reference(store, query, qvec, limit, before)
            assert [p for p, _ in ours] == [p for p, _ in expected]
            assert np.allclose([c for _, c in ours], [c for _, c in expected], atol=1e-5)
