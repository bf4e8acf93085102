"""Narrative clustering with the real bundled embedder."""

from __future__ import annotations

import pytest

from pipeline.embedding.onnx import OnnxEmbedder
from pipeline.judge.narratives import cluster_narratives
from pipeline.records.domain import Document, Evidence, Passage, Tier

FLOOD = [
    "Flash floods in Valencia, Spain killed more than 200 people after torrential rain.",
    "Rescue teams in Valencia searched flooded streets and cars after the storm in Spain.",
    "Spain's government declared Valencia a disaster zone after the deadly flooding.",
]
VACCINE = [
    "The FDA approved an updated COVID-19 vaccine for adults over 65.",
    "Regulators at the US Food and Drug Administration cleared the new coronavirus shot.",
    "Pharmacies will offer the newly approved COVID vaccine to older adults this autumn.",
]


def item(n: int, text: str, *, claim_id: str = "c1") -> Evidence:
    doc = Document(
        id=f"d{n}", url=f"https://news{n}.example/a", domain=f"news{n}.example", title="", text=text
    )
    return Evidence(
        id=f"e{n}",
        claim_id=claim_id,
        passage=Passage(id=f"p{n}", document_id=doc.id, position=0, text=text),
        document=doc,
        relevance=0.9 - n / 100,
        tier=Tier.HIGH,
    )


def mixed() -> list[Evidence]:
    """Six ranked items, the two stories interleaved."""
    texts = [FLOOD[0], VACCINE[0], FLOOD[1], VACCINE[1], FLOOD[2], VACCINE[2]]
    return [item(n, text) for n, text in enumerate(texts)]


def story(evidence_id: str) -> str:
    return "flood" if int(evidence_id[1:]) % 2 == 0 else "vaccine"


@pytest.mark.parametrize(("max_k", "expected"), [(4, 4), (2, 2), (9, 6)])
async def test_clusters_keep_stories_apart(
    embedder: OnnxEmbedder, max_k: int, expected: int
) -> None:
    evidence = mixed()
    narratives = await cluster_narratives("c1", evidence, embedder=embedder, max_k=max_k)
    assert len(narratives) == expected  # K = min(max_k, number of items)
    members = [i for n in narratives for i in n.evidence_ids]
    assert sorted(members) == sorted(e.id for e in evidence)
    for narrative in narratives:
        assert narrative.claim_id == "c1"
        assert len({story(i) for i in narrative.evidence_ids}) == 1
        assert narrative.representative_id in narrative.evidence_ids
        # members keep the ranking order
        assert list(narrative.evidence_ids) == sorted(narrative.evidence_ids)
    # narratives are ordered by their best-ranked member
    firsts = [min(int(i[1:]) for i in n.evidence_ids) for n in narratives]
    assert firsts == sorted(firsts) and firsts[0] == 0


async def test_two_clusters_are_the_two_stories(embedder: OnnxEmbedder) -> None:
    narratives = await cluster_narratives("c1", mixed(), embedder=embedder, max_k=2)
    assert [n.evidence_ids for n in narratives] == [("e0", "e2", "e4"), ("e1", "e3", "e5")]


async def test_one_item_is_one_narrative(embedder: OnnxEmbedder) -> None:
    (narrative,) = await cluster_narratives("c1", [item(0, FLOOD[0])], embedder=embedder)
    assert narrative.evidence_ids == ("e0",)
    assert narrative.representative_id == "e0"


async def test_identical_passages_make_one_narrative(
    embedder: OnnxEmbedder,
) -> None:
    evidence = [item(n, FLOOD[0]) for n in range(3)]
    (narrative,) = await cluster_narratives("c1", evidence, embedder=embedder)
    assert narrative.evidence_ids == ("e0", "e1", "e2")
    assert narrative.representative_id == "e0"  # the best-ranked on a tie


async def test_representative_is_nearest_the_centroid(
    embedder: OnnxEmbedder,
) -> None:
    # One cluster: the middle-of-the-road flood report is closer to the mean than the outlier.
    texts = [*FLOOD, "Valencia football club won its match on Saturday evening."]
    evidence = [item(n, text) for n, text in enumerate(texts)]
    (narrative,) = await cluster_narratives("c1", evidence, embedder=embedder, max_k=1)
    assert narrative.representative_id != "e3"


async def test_ids_are_stable_and_other_claims_ignored(
    embedder: OnnxEmbedder,
) -> None:
    evidence = [*mixed(), item(7, FLOOD[0], claim_id="c2")]
    first = await cluster_narratives("c1", evidence, embedder=embedder, max_k=2)
    again = await cluster_narratives("c1", evidence, embedder=embedder, max_k=2)
    assert [n.id for n in first] == [n.id for n in again]
    assert len({n.id for n in first}) == 2
    assert "e7" not in {i for n in first for i in n.evidence_ids}


async def test_no_evidence_and_bad_k(embedder: OnnxEmbedder) -> None:
    assert await cluster_narratives("c1", [], embedder=embedder) == []
    with pytest.raises(ValueError, match="max_k"):
        await cluster_narratives("c1", mixed(), embedder=embedder, max_k=0)
