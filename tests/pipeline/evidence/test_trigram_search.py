"""The evidence index's trigram table: claims in Chinese, Japanese, Korean and Thai find passages
that share their words through the lexical path, which the word table cannot do."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pipeline.claims.queries import MAX_TRIGRAMS, Query, build_queries, trigrams
from pipeline.embedding.onnx import OnnxEmbedder
from pipeline.evidence.ingest import Ingester
from pipeline.evidence.retrieval import retrieve
from pipeline.records.domain import Claim, Document
from storage import Store

DOCS = [
    ("zh", "埃菲尔铁塔位于巴黎战神广场，于1889年建成，是世界博览会的入口。"),
    ("ja", "東京タワーは東京都港区にある電波塔で、1958年に完成した。"),
    ("ko", "에펠탑은 파리의 샹드마르스 공원에 있는 철탑으로 1889년에 완공되었다."),
    ("th", "หอไอเฟลเป็นหอคอยเหล็กในกรุงปารีส สร้างเสร็จในปี 1889"),
    ("en", "Hospital waiting times rose by twelve percent, the health board said."),
]
CLAIMS = {
    "zh": "埃菲尔铁塔是1889年建成的",
    "ja": "東京タワーが完成したのは1958年だ",
    "ko": "에펠탑이 1889년에 완공됐다",
    "th": "หอไอเฟลสร้างเสร็จปี 1889",
}


@pytest.fixture(scope="module")
def embedder() -> OnnxEmbedder:
    return OnnxEmbedder(threads=1)


async def _fill(store: Store, embedder: OnnxEmbedder) -> None:
    ingester = Ingester(store.documents, embedder)
    for n, (lang, text) in enumerate(DOCS):
        published = datetime(2020, 1, 1, tzinfo=UTC) if n % 2 else None
        await ingester.add_document(
            Document(
                id=lang,
                url=f"https://news.example/{lang}",
                domain="news.example",
                title="",
                text=text,
                published_at=published,
            )
        )
    await ingester.finish()


def test_trigrams_come_from_unspaced_scripts_only() -> None:
    assert trigrams("埃菲尔铁塔") == ("埃菲尔", "菲尔铁", "尔铁塔")
    assert trigrams("The Eiffel Tower, 1889") == ()
    assert trigrams("巴黎 is 二字") == ()  # runs shorter than three characters give nothing
    assert len(trigrams("".join(chr(0x4E00 + i) for i in range(60)))) == MAX_TRIGRAMS
    query = Query(claim_id="c", text='引号"埃菲尔铁塔"', terms=())  # quotes never reach MATCH
    assert query.trigram_fts == '"埃菲尔" OR "菲尔铁" OR "尔铁塔"'


async def test_each_script_finds_its_passage_through_the_lexical_path(
    store: Store, embedder: OnnxEmbedder
) -> None:
    await _fill(store, embedder)
    claims = [Claim(id=lang, post_id="p", position=0, text=text) for lang, text in CLAIMS.items()]
    queries = await build_queries(claims)
    for before in (None, datetime(2030, 1, 1, tzinfo=UTC)):
        found = await retrieve(
            queries, index=store.documents, embedder=embedder, before=before, undated="include"
        )
        for lang in CLAIMS:
            lexical = [c for c in found if c.claim_id == lang and c.lexical_rank == 0]
            assert [c.document.id for c in lexical] == [lang], (lang, before)


async def test_the_word_table_alone_misses_what_the_trigram_table_finds(
    store: Store, embedder: OnnxEmbedder
) -> None:
    await _fill(store, embedder)
    query = (await build_queries([Claim(id="zh", post_id="p", position=0, text=CLAIMS["zh"])]))[0]
    assert query.fts and query.trigram_fts
    words = store.documents.search_text(query.fts, limit=5)
    assert "zh" not in {store.documents.passages([p])[p][1].id for p, _ in words}
    found = store.documents.search_text(query.trigram_fts, limit=5, trigram=True)
    assert found and store.documents.passages([found[0][0]])[found[0][0]][1].id == "zh"


def test_an_index_from_before_m026_is_filled_when_it_migrates(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    Store.open(path).close()
    db = sqlite3.connect(path)
    db.execute("DROP TRIGGER passages_trigram_ai")
    db.execute("DROP TRIGGER passages_trigram_ad")
    db.execute("DROP TABLE passages_trigram")
    db.execute("DELETE FROM _sqlite_migrations WHERE name = 'm028_passages_trigram'")
    db.execute(
        "INSERT INTO documents (id, url, domain, title, text, content_hash, extra, "
        "ingested_at) VALUES ('d', 'u', 'x', '', 't', 'h', '{}', '2026-01-01')"
    )
    db.execute(
        "INSERT INTO passages (document_id, position, text, embedding) "
        "VALUES ('d', 0, '埃菲尔铁塔位于巴黎', x'00')"
    )
    db.commit()
    db.close()
    with Store.open(path) as store:
        assert store.documents.search_text('"铁塔位"', limit=3, trigram=True)
