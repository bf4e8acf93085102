"""Graph verification: typed graphs from real spaCy, values, Hungarian matching, conflicts."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, date, datetime

import numpy as np
import pytest

from pipeline.checking.stages import Stages
from pipeline.credibility.importers import load_seed
from pipeline.credibility.policy import SourcePolicy
from pipeline.embedding.onnx import OnnxEmbedder
from pipeline.evidence.ingest import Ingester
from pipeline.graph.build import Edge, Graph, GraphBuilder, Node
from pipeline.graph.places import Place, _meant, shared_gazetteer
from pipeline.graph.values import DateSpan, parse_date, parse_quantity
from pipeline.graph.verify import GraphVerifier, match_nodes, verify_graph
from pipeline.inputs.posts import post_from_text
from pipeline.judge.claimreview import ReviewMatchJudge
from pipeline.records.domain import (
    Claim,
    ClaimGraph,
    ClaimVerdict,
    Document,
    Evidence,
    GraphConflict,
    Label,
    Passage,
    Tier,
    Verdict,
)
from pipeline.reply.writer import write_correction
from pipeline.run import CheckConfig, CheckDeps, run_check
from pipeline.util.cpu import CpuPool
from storage import Store
from tests.conftest import FIXTURES

# Only these tests load spaCy (graph verification is off elsewhere): one worker loads it.
pytestmark = pytest.mark.xdist_group("spacy")

POSTED = datetime(2024, 3, 13, 9, 0, tzinfo=UTC)  # a Wednesday


@pytest.fixture(scope="module")
def builder() -> GraphBuilder:
    return GraphBuilder()


def _one(builder: GraphBuilder, text: str) -> Graph:
    return builder.build_many([text], POSTED)[0]


def _node(graph: Graph, text: str) -> Node:
    return next(n for n in graph.nodes if n.text == text)


# ---- values ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "start", "end", "grain"),
    [
        ("2012", date(2012, 1, 1), date(2012, 12, 31), "year"),
        ("November 2022", date(2022, 11, 1), date(2022, 11, 30), "month"),
        ("3 March 2024", date(2024, 3, 3), date(2024, 3, 3), "day"),
        ("March 3, 2024", date(2024, 3, 3), date(2024, 3, 3), "day"),
        ("2024-03-03", date(2024, 3, 3), date(2024, 3, 3), "day"),
        ("2019-2021", date(2019, 1, 1), date(2021, 12, 31), "range"),
        ("the 1990s", date(1990, 1, 1), date(1999, 12, 31), "range"),
        ("yesterday", date(2024, 3, 12), date(2024, 3, 12), "day"),
        ("last week", date(2024, 3, 4), date(2024, 3, 10), "range"),
        ("last Tuesday", date(2024, 3, 12), date(2024, 3, 12), "day"),
        ("last year", date(2023, 1, 1), date(2023, 12, 31), "year"),
        ("last month", date(2024, 2, 1), date(2024, 2, 29), "month"),
        ("in January", date(2024, 1, 1), date(2024, 1, 31), "month"),
    ],
)
def test_dates_are_intervals_in_a_hierarchy(text: str, start: date, end: date, grain: str) -> None:
    assert parse_date(text, POSTED) == DateSpan(start, end, grain)


def test_date_conflicts_follow_the_hierarchy() -> None:
    year, month, other = (parse_date(t, POSTED) for t in ("2012", "March 2012", "2024"))
    assert year is not None and month is not None and other is not None

    assert not year.conflicts(month) and not month.conflicts(year)
    assert year.conflicts(other) and month.conflicts(other)
    assert parse_date("last week") is None  # a relative date needs the post's time


@pytest.mark.parametrize(
    ("a", "b", "conflict"),
    [
        ("5,000", "50", True),
        ("5k", "5,000", False),
        ("3.5 million", "3,500,000", False),
        ("about 50", "55", False),
        ("more than 5,000", "6,000", False),
        ("95 percent", "59 percent", True),
        ("95 percent", "95 km", False),  # different units are not compared
        ("two dozen", "24", False),
    ],
)
def test_numbers_carry_scale_hedges_and_units(a: str, b: str, conflict: bool) -> None:
    first, second = parse_quantity(a, "people"), parse_quantity(b, "people")
    assert first is not None and second is not None

    assert first.conflicts(second) is conflict


def test_places_resolve_into_city_region_country() -> None:
    places = shared_gazetteer()
    paris, lyon, france, texas = (places.resolve(n) for n in ("Paris", "Lyon", "France", "Texas"))
    berlin = places.resolve("Berlin")
    assert paris and lyon and france and texas and berlin

    assert (paris.kind, paris.country) == ("city", "FR") and texas.kind == "region"
    assert paris.conflicts(berlin) == "a city in another country"
    assert paris.conflicts(france) == "" and paris.conflicts(lyon) == ""
    assert places.resolve("Nowhereville") is None


def test_regions_outside_the_us_take_their_code_from_a_city_they_hold() -> None:
    places = shared_gazetteer()
    bavaria, munich, queensland, perth = (
        places.resolve(n) for n in ("Bavaria", "Munich", "Queensland", "Perth")
    )
    assert bavaria and munich and queensland and perth

    assert (bavaria.kind, bavaria.country) == ("region", "DE") and bavaria.region == munich.region
    assert bavaria.conflicts(munich) == ""
    assert queensland.conflicts(perth) == "a place in another region"
    assert queensland.conflicts(bavaria) == "a place in another country"


@pytest.mark.parametrize("name", ["Georgia", "Washington", "Punjab", "Birmingham", "Victoria"])
def test_a_name_two_prominent_places_share_resolves_to_none(name: str) -> None:
    assert shared_gazetteer().resolve(name) is None


@pytest.mark.parametrize(
    ("others", "meant"),
    [
        ([("city", "FR", "11", 2_100_000), ("city", "US", "TX", 25_000)], "FR"),  # Paris
        ([("city", "GB", "ENG", 1_100_000), ("city", "US", "AL", 200_000)], None),
        ([("region", "AU", "07", 10**9), ("city", "HK", "", 600_000)], None),
        ([("region", "AU", "07", 10**9), ("city", "CA", "02", 290_000)], "AU"),
        ([("region", "US", "GA", 10**9), ("country", "GE", "", 10**10)], None),
        ([("region", "US", "NY", 10**9), ("city", "US", "NY", 8_000_000)], "US"),  # one place
    ],
)  # fmt: skip
def test_prominence_decides_whether_a_shared_name_is_ambiguous(
    others: list[tuple[str, str, str, int]], meant: str | None
) -> None:
    known = {Place(f"p{i}", kind, cc, region): w for i, (kind, cc, region, w) in enumerate(others)}

    found = _meant(known)

    assert (found.country if found else None) == meant


# ---- graph building ----------------------------------------------------------------------------


def test_a_sentence_becomes_typed_nodes_and_action_edges(builder: GraphBuilder) -> None:
    graph = _one(builder, "NASA launched the Artemis rocket from Florida in November 2022.")

    assert _node(graph, "NASA").kind == "organisation"
    assert _node(graph, "Florida").place is not None
    assert str(_node(graph, "November 2022").date) == "November 2022"
    labels = {graph.label(e) for e in graph.edges}
    assert {"NASA -launch-> rocket", "NASA -launch from-> Florida"} <= labels
    assert _node(graph, "November 2022").context == "NASA launch in"


def test_relative_dates_resolve_against_the_posts_time(builder: GraphBuilder) -> None:
    graph = _one(builder, "The minister resigned in Berlin last Tuesday.")

    assert _node(graph, "last Tuesday").date == DateSpan(
        date(2024, 3, 12), date(2024, 3, 12), "day"
    )
    assert builder.build_many(["It rained yesterday."], None)[0].nodes[0].date is None


def test_numbers_count_their_noun(builder: GraphBuilder) -> None:
    graph = _one(builder, "Police said 5,000 people marched through Paris on Saturday.")

    quantity = _node(graph, "5,000").quantity
    assert quantity is not None and (quantity.low, quantity.unit) == (5000.0, "people")
    assert "people -march through-> Paris" in {graph.label(e) for e in graph.edges}


def test_a_number_counts_the_noun_it_is_of_with_its_qualifiers(builder: GraphBuilder) -> None:
    claim = _one(builder, "At independence, Nigeria had a population of 45 million.")
    evidence = _one(builder, "In 1960 it had 6,956,000 urban population at mid year.")

    counted = _node(claim, "45 million").quantity
    qualified = _node(evidence, "6,956,000").quantity
    assert counted is not None and counted.unit == "population"
    assert qualified is not None and qualified.unit == "urban population"
    assert not counted.conflicts(qualified)  # the urban population is not the population


def test_negations_mark_edges_and_nodes(builder: GraphBuilder) -> None:
    verb = _one(builder, "The minister did not resign in Berlin.")
    node = _one(builder, "The photo was taken in 2012, not last week.")

    assert all(e.negated for e in verb.edges if "resign" in e.action)
    assert _node(node, "last week").negated and not _node(node, "2012").negated


# ---- Hungarian matching on hand-made graphs ---------------------------------------------


def test_matching_is_one_to_one_and_optimal_not_greedy() -> None:
    # Greedy would give A its best match X (0.95) and leave B with Y (0.1); the assignment
    # gives A -> Y (0.9) and B -> X (0.9): a higher total, both above the threshold.
    vectors = {
        "A": np.array([1.0, 0.0]),
        "B": np.array([0.0, 1.0]),
        "X": np.array([0.95, 0.9]),
        "Y": np.array([0.9, 0.1]),
    }
    claim = Graph("", (Node(0, "A", "thing"), Node(1, "B", "thing")), ())
    evidence = Graph("", (Node(0, "X", "thing"), Node(1, "Y", "thing")), ())

    pairs = match_nodes(claim, [evidence], vectors, threshold=0.8)

    assert {(m.claim_node, m.node) for m in pairs} == {(0, 1), (1, 0)}


def test_typed_nodes_match_only_their_kind_and_by_role() -> None:
    vectors = {"taken in": np.array([1.0, 0.0]), "2012": np.array([0.0, 1.0])}
    claim = Graph("", (Node(0, "2024", "date", context="taken in"),), ())
    place = Graph("", (Node(0, "Paris", "place", context="taken in"),), ())
    year = Graph("", (Node(0, "2012", "date", context="taken in"),), ())

    assert match_nodes(claim, [place], vectors, threshold=0.8) == []
    assert [m.graph for m in match_nodes(claim, [place, year], vectors, threshold=0.8)] == [1]


def test_edges_verify_through_a_path_with_a_similar_action() -> None:
    nodes = (Node(0, "NASA", "organisation"), Node(1, "rocket", "thing"))
    claim = Graph("", nodes, (Edge(0, 1, "launch"),), {0: {1}, 1: {0}})
    middle = (*nodes, Node(2, "Artemis", "thing"))
    path = Graph("", middle, (Edge(0, 2, "launch"), Edge(2, 1, "")), {0: {2}, 1: {2}, 2: {0, 1}})
    vectors = {t: np.eye(3)[i] for i, t in enumerate(["NASA", "rocket", "Artemis"])}
    vectors["launch"] = np.array([1.0, 0.0, 0.0])

    result = verify_graph("c1", claim, [("e1", path)], vectors)

    assert result.support == 1.0 and result.verified == ("NASA -launch-> rocket",)


# ---- conflicts on real sentences ----------------------------------------------------------------


def _evidence(n: int, text: str, claim: str = "c1") -> Evidence:
    doc = Document(id=f"d{n}", url=f"https://news{n}.example/a", domain=f"news{n}.example",
                   title=f"Report {n}", text=text)  # fmt: skip
    return Evidence(id=f"e{n}", claim_id=claim, passage=Passage(f"p{n}", doc.id, 0, text),
                    document=doc, relevance=0.8, tier=Tier.HIGH)  # fmt: skip


@pytest.fixture(scope="module")
def verifier(builder: GraphBuilder, embedder: OnnxEmbedder) -> GraphVerifier:
    return GraphVerifier(builder, embedder)


@pytest.mark.parametrize(
    ("claim", "passage", "kind", "value"),
    [
        ("The photo of the flood in Venice was taken in 2024.",
         "The photo of the flood in Venice was taken in 2012 by a tourist.", "date", "2012"),
        ("Police said 5,000 people marched through Paris on Saturday.",
         "Police said about 50 people marched through Paris on Saturday.", "number", "about 50"),
        ("At independence, Nigeria had a population of 45 million.",
         "At independence, Nigeria had a population of 95 million.", "number", "95 million"),
        ("The summit was held in Paris in 2019.",
         "The summit was held in Berlin in 2019.", "place", "Berlin"),
        ("The bushfires started in Queensland in 2019.",
         "The bushfires started in Western Australia in 2019.", "place", "Western Australia"),
    ],
)  # fmt: skip
def test_conflicts_are_found(
    verifier: GraphVerifier, claim: str, passage: str, kind: str, value: str
) -> None:
    [result] = verifier.verify_sync([Claim("c1", "p", 0, claim)], [_evidence(1, passage)], POSTED)

    assert [(c.kind, c.evidence_value, c.evidence_id) for c in result.conflicts] == [
        (kind, value, "e1")
    ]


@pytest.mark.parametrize(
    ("claim", "passage"),
    [
        ("NASA launched the Artemis rocket from Florida in November 2022.",
         "NASA launched its Artemis I rocket from Florida on 16 November 2022."),
        ("Police said 5,000 people marched through Paris.",
         "Police said more than 4,800 people marched through Paris."),
        ("The summit was held in Paris last week.",
         "The summit was held in Paris on 6 March 2024."),
        ("The photo was not taken in 2012.", "The photo was taken in 2012."),
        ("At independence, Nigeria had a population of 45 million.",
         "At independence, Nigeria had 6,956,000 urban population."),
        # the evidence names a place the claim names too, matched to another of the claim's
        ("The United States, New Zealand, the U.K. and Australia have not listed the group as "
         "a terrorist organisation.",
         "Australia has not listed the group as a terrorist organisation."),
        ("Flights from Paris and Berlin were cancelled in 2019.",
         "Flights from Berlin were cancelled in 2019."),
        # a region holds its cities, outside the US too
        ("The fire started in Bavaria in 2019.", "The fire started in Munich in 2019."),
        # names two prominent places share are not evidence of either: the US state and the
        # country, Australia's state and the district of Hong Kong
        ("The protest took place in Georgia in 2020.",
         "The protest took place in Atlanta in 2020."),
        ("The lockdown began in Victoria in 2020.", "The lockdown began in Melbourne in 2020."),
    ],
)  # fmt: skip
def test_no_conflict_where_the_values_agree(
    verifier: GraphVerifier, claim: str, passage: str
) -> None:
    [result] = verifier.verify_sync([Claim("c1", "p", 0, claim)], [_evidence(1, passage)], POSTED)

    assert result.conflicts == ()


def test_support_and_unmatched_parts(verifier: GraphVerifier) -> None:
    claim = Claim("c1", "p", 0, "NASA launched the Artemis rocket from Florida in November 2022.")
    [same] = verifier.verify_sync([claim], [_evidence(1, claim.text)], POSTED)
    [other] = verifier.verify_sync([claim], [_evidence(2, "It rained in Oslo.")], POSTED)

    assert same.support == 1.0 and same.unmatched == () and same.evidence_ids == ("e1",)
    assert other.support == 0.0 and "NASA" in other.unmatched


async def test_the_correction_names_the_conflicted_part() -> None:
    claims = [Claim("c1", "p", 0, "The photo of the flood in Venice was taken in 2024.")]
    evidence = [_evidence(1, "A report on floods."), _evidence(2, "The photo was taken in 2012.")]
    verdict = Verdict(
        Label.FALSE, (ClaimVerdict("c1", Label.FALSE, "It is an old photo.", ("e1",)),)
    )
    conflict = GraphConflict("date", "2024", "2012", "e2", "a different year")
    graph = ClaimGraph("c1", 0.0, conflicts=(conflict,))

    correction = await write_correction(claims, verdict, evidence, graphs=[graph])

    item = correction.items[0]
    assert item.explained() == (
        "The date is wrong: the claim says 2024, the source says 2012. It is an old photo. [1] [2]"
    )
    assert correction.references[0].url == "https://news2.example/a"  # the conflicting source


async def test_a_check_stores_its_graphs_and_says_which_part_differs(
    store: Store, embedder: OnnxEmbedder, verifier: GraphVerifier
) -> None:
    load_seed(store.sources)
    await Ingester(store.documents, embedder).ingest([str(FIXTURES / "corpus.jsonl")])
    deps = CheckDeps(
        index=store.documents,
        embedder=embedder,
        rater=SourcePolicy(store.sources, unrated="allow"),
        judge=ReviewMatchJudge(embedder, match_threshold=0.75),
        graphs=verifier,
    )
    post = post_from_text(
        "The United Kingdom recorded a temperature above 40 degrees Celsius for the first time "
        "on 19 July 2019.",
        max_chars=1000,
    )

    check = await run_check(post, deps=deps, config=CheckConfig())

    assert "graphs" in [t.stage for t in check.timings]
    [graph] = check.graphs
    assert [(c.kind, c.evidence_value) for c in graph.conflicts] == [("date", "19 July 2022")]
    assert check.verdict.label is Label.UNVERIFIABLE  # no fact-check: a detail is not a verdict
    assert "the date differs: the claim says 19 July 2019" in check.correction.text
    assert check.correction.references[0].url == "https://www.metoffice.gov.uk/news/heatwave-record"
    store.checks.save(check)
    assert store.checks.get(check.id) == check


async def test_graph_work_runs_on_its_own_pool_never_the_shared_one(
    builder: GraphBuilder, embedder: OnnxEmbedder, caplog: pytest.LogCaptureFixture
) -> None:
    shared = CpuPool(2, name="shared")
    own = GraphVerifier(builder, embedder, threads=1)
    claim = Claim("c1", "p", 0, "The summit was held in Paris in 2019.")
    caplog.set_level(logging.INFO, logger="pipeline.graph.verify")
    try:
        results = await asyncio.gather(
            *(
                own.verify_claims([claim], [_evidence(n, claim.text)], reference=POSTED, cpu=shared)
                for n in range(3)
            )
        )
    finally:
        own.close()
        shared.close()
    assert all(r[0].support == 1.0 for r in results)
    # the verifier logs each claim from the thread that built its graph
    threads = {r.threadName for r in caplog.records if r.getMessage() == "claim graph verified"}
    assert len(threads) == 1 and threads.pop().startswith("factbot-graph")


async def test_only_claims_in_a_language_the_parser_reads_get_a_graph(
    builder: GraphBuilder, embedder: OnnxEmbedder, store: Store
) -> None:
    english = Claim("c1", "p", 0, "The summit was held in Paris in 2019.", language="en")
    spanish = Claim("c2", "p", 1, "La cumbre se celebró en París en 2019.", language="es")
    arabic = Claim("c3", "p", 2, "عقدت القمة في باريس عام 2019.", language="ar")
    claims = [english, spanish, arabic]
    evidence = [_evidence(n, c.text, c.id) for n, c in enumerate(claims)]
    deps = CheckDeps(
        index=store.documents, embedder=embedder, rater=SourcePolicy(store.sources),
        judge=ReviewMatchJudge(embedder), graphs=GraphVerifier(builder, embedder),
    )  # fmt: skip
    post = post_from_text(english.text, max_chars=500)
    stages = Stages(post, deps=deps, config=CheckConfig(), before=None, reference=POSTED)
    await stages.verify(claims, evidence)
    assert [g.claim_id for g in stages.claim_graphs(claims)] == ["c1"]
    await stages.verify([spanish, arabic], evidence)  # nothing to parse: no graphs stage
    assert [t.stage for t in stages.timings] == ["graphs"]
