"""Graph verification (stage "graphs"): RAV's node matching, conflicts and edge verification.

For each claim, its graph is matched against the graphs of its evidence passages:

1. nodes are matched one-to-one by the Hungarian algorithm
   (`scipy.optimize.linear_sum_assignment`) on embedding cosine, a pair kept at `MATCH` (RAV:
   0.8) or above. Dates, places and numbers match only their own kind, by their role
   (`Node.context`: "photo taken in"), since two years or two cities look alike to an embedder
   whatever their values; other nodes match by their text, across entity types;
2. a matched date, place or number whose values cannot both hold is a conflict (`values.py`,
   `places.py`), unless the claim's node is negated ("not in 2012") or the claim states the
   evidence's value in another node of its own ("the US, the UK and Australia");
3. a claim edge is verified when its two nodes are matched into one evidence graph and a path
   of at most `MAX_PATH` edges joins them there with an action similar to the claim's (cosine
   at `ACTION` or above, RAV: 0.5; a modifier edge needs only the path) and the same polarity,
   and neither end is in conflict; support = the share of verified edges;
4. claim nodes left unmatched are reported: refinement searches for them again.

The thresholds are RAV's; they were checked (not fitted) on the unit sentences and on AVeriTeC
dev claims outside the evaluation sample (docs/results/2026-12-02-graph-conflicts.md). The
embedder is the project's MiniLM.

Failure policy: `verify_claims` never raises on text; it returns no graph for a claim whose
text yields no node. CPU-bound work (spaCy, embeddings, the assignment) runs in the CPU pool.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from pipeline.embedding.embedder import Embedder
from pipeline.graph.build import TYPED, Edge, Graph, GraphBuilder, Node
from pipeline.records.domain import Claim, ClaimGraph, Evidence, GraphConflict
from pipeline.util.cpu import CpuPool, run_cpu

log = logging.getLogger(__name__)

MATCH = 0.8
ACTION = 0.5
MAX_PATH = 3
_NO = -1.0


@dataclass(frozen=True)
class Match:
    """A claim node matched to a node of one evidence graph."""

    claim_node: int
    graph: int  # index into the evidence graphs
    node: int
    score: float


def match_nodes(
    claim: Graph, evidence: Sequence[Graph], vectors: dict[str, np.ndarray], *, threshold: float
) -> list[Match]:
    """Return the one-to-one matching of claim nodes to evidence nodes, at threshold or above."""
    pool = [(g, n) for g, graph in enumerate(evidence) for n in range(len(graph.nodes))]
    if not claim.nodes or not pool:
        return []
    scores = np.full((len(claim.nodes), len(pool)), _NO, dtype=np.float32)
    for i, mine in enumerate(claim.nodes):
        for j, (g, n) in enumerate(pool):
            scores[i, j] = similarity(mine, evidence[g].nodes[n], vectors)
    from scipy.optimize import linear_sum_assignment  # 0.4 s to import: not on every start-up

    rows, cols = linear_sum_assignment(scores, maximize=True)
    return [
        Match(int(i), pool[j][0], pool[j][1], float(scores[i, j]))
        for i, j in zip(rows, cols, strict=True)
        if scores[i, j] >= threshold
    ]


def similarity(a: Node, b: Node, vectors: dict[str, np.ndarray]) -> float:
    """Return how alike two nodes are: typed nodes by their role, others by their text."""
    typed = a.kind in TYPED or b.kind in TYPED
    if typed and a.kind != b.kind:
        return _NO
    key_a, key_b = (a.context, b.context) if typed else (a.text, b.text)
    if not key_a or not key_b:
        return _NO
    if key_a.lower() == key_b.lower():
        return 1.0
    return float(vectors[key_a] @ vectors[key_b])


def conflict_of(claim: Node, found: Node, evidence_id: str) -> GraphConflict | None:
    """Return the conflict between a claim node and its matched evidence node, if any."""
    if claim.negated or found.negated:
        return None
    if claim.date is not None and found.date is not None and claim.date.conflicts(found.date):
        grain = "year" if claim.date.start.year != found.date.start.year else "date"
        return GraphConflict("date", claim.text, found.text, evidence_id, f"a different {grain}")
    if claim.place is not None and found.place is not None:
        reason = claim.place.conflicts(found.place)
        if reason:
            return GraphConflict("place", claim.text, found.text, evidence_id, reason)
    if (
        claim.quantity is not None
        and found.quantity is not None
        and claim.quantity.conflicts(found.quantity)
    ):
        return GraphConflict("number", claim.text, found.text, evidence_id, "a different number")
    return None


def _also_claimed(claim: Graph, node_id: int, found: Node) -> bool:
    """Return whether another node of the claim states the value the evidence node gives.

    A claim that names several places, dates or numbers ("the US, the UK and Australia") can
    have one matched to the evidence's mention of another ("Australia"): the evidence then
    repeats the claim, it does not contradict it. "States the value" is `conflict_of` finding
    no conflict between two values it can compare.
    """
    return any(
        other.id != node_id
        and not other.negated
        and _comparable(other, found)
        and conflict_of(other, found, "") is None
        for other in claim.nodes
    )


def _comparable(a: Node, b: Node) -> bool:
    """Return whether two nodes carry values of one kind that `conflict_of` compares."""
    if a.quantity is not None and b.quantity is not None:
        return len({a.quantity.unit, b.quantity.unit} - {""}) <= 1
    return (a.date is not None and b.date is not None) or (
        a.place is not None and b.place is not None
    )


def verify_graph(
    claim_id: str,
    claim: Graph,
    evidence: Sequence[tuple[str, Graph]],
    vectors: dict[str, np.ndarray],
    *,
    threshold: float = MATCH,
    action_threshold: float = ACTION,
) -> ClaimGraph:
    """Return the verification of one claim graph against its evidence graphs."""
    graphs = [g for _, g in evidence]
    matches = match_nodes(claim, graphs, vectors, threshold=threshold)
    by_node = {m.claim_node: m for m in matches}
    conflicts: dict[int, GraphConflict] = {}
    for m in matches:
        found = conflict_of(
            claim.nodes[m.claim_node], graphs[m.graph].nodes[m.node], evidence[m.graph][0]
        )
        if found is not None and not _also_claimed(
            claim, m.claim_node, graphs[m.graph].nodes[m.node]
        ):
            conflicts[m.claim_node] = found
    verified: list[str] = []
    supporting: list[str] = []
    for edge in claim.edges:
        a, b = by_node.get(edge.source), by_node.get(edge.target)
        if a is None or b is None or a.graph != b.graph:
            continue
        if edge.source in conflicts or edge.target in conflicts:
            continue
        if _path_verifies(graphs[a.graph], a.node, b.node, edge.action, edge.negated, vectors,
                          action_threshold):  # fmt: skip
            verified.append(claim.label(edge))
            supporting.append(evidence[a.graph][0])
    unmatched = tuple(n.text for n in claim.nodes if n.id not in by_node and not n.negated)
    support = len(verified) / len(claim.edges) if claim.edges else 0.0
    return ClaimGraph(
        claim_id=claim_id,
        support=round(support, 3),
        verified=tuple(verified),
        conflicts=tuple(conflicts.values()),
        unmatched=unmatched,
        evidence_ids=tuple(dict.fromkeys(supporting)),
    )


def _path_verifies(
    graph: Graph,
    start: int,
    goal: int,
    action: str,
    negated: bool,
    vectors: dict[str, np.ndarray],
    threshold: float,
) -> bool:
    """Return whether a short path from start to goal carries a similar action, same polarity."""
    edges: dict[frozenset[int], list[Edge]] = {}
    for e in graph.edges:
        edges.setdefault(frozenset((e.source, e.target)), []).append(e)
    frontier: list[tuple[int, list[int]]] = [(start, [start])]
    for _ in range(MAX_PATH):
        nxt = []
        for node, path in frontier:
            for other in graph.neighbours.get(node, ()):
                if other in path:
                    continue
                walk = [*path, other]
                if other == goal and _carries(walk, edges, action, negated, vectors, threshold):
                    return True
                nxt.append((other, walk))
        frontier = nxt
    return False


def _carries(
    walk: list[int],
    edges: dict[frozenset[int], list[Edge]],
    action: str,
    negated: bool,
    vectors: dict[str, np.ndarray],
    threshold: float,
) -> bool:
    steps = [edges[frozenset(pair)] for pair in itertools.pairwise(walk)]
    polarity = sum(any(e.negated for e in step) for step in steps) % 2 == 1
    if polarity != negated:
        return False
    if not action:
        return True
    actions = [e.action for step in steps for e in step]
    return any(
        a and (a == action or float(vectors[a] @ vectors[action]) >= threshold) for a in actions
    )


class GraphVerifier:
    """Claims against their evidence as graphs; the builder and embedder are shared.

    Graph building (spaCy's parse in Python code) holds the GIL most of the time. Run on the
    process's shared CPU pool, a burst of checks put it on every pool thread at once and the
    event loop got a third of the interpreter: discord.py's heartbeat ran 30 s late in a
    500-mention burst. With `threads` set, graph work runs on a dedicated pool of that many
    threads (1 by default in the service), so it can never occupy every CPU thread and other
    off-loop work (page extraction, embeddings) keeps its own threads; further checks' graph
    work queues there. `python -m bench.graph_lag` measures the loop's lag both ways.
    """

    def __init__(
        self,
        builder: GraphBuilder,
        embedder: Embedder,
        *,
        threshold: float = MATCH,
        action_threshold: float = ACTION,
        threads: int | None = None,
    ) -> None:
        self.builder = builder
        self.embedder = embedder
        self.threshold = threshold
        self.action_threshold = action_threshold
        # None: the caller's pool (the shared one); else a pool of this many threads of its own
        self.pool = CpuPool(threads, name="factbot-graph") if threads is not None else None

    def close(self) -> None:
        """Stop the dedicated graph threads (a later check starts them again)."""
        if self.pool is not None:
            self.pool.close()

    async def verify_claims(
        self,
        claims: Sequence[Claim],
        evidence: Sequence[Evidence],
        *,
        reference: datetime | None,
        cpu: CpuPool | None = None,
    ) -> list[ClaimGraph]:
        """Return the graph verification of every claim that has evidence (off the loop).

        The work runs on the verifier's own pool when it has one, else on `cpu`.
        """
        pool = self.pool or cpu
        return await run_cpu(pool, self.verify_sync, list(claims), list(evidence), reference)

    def verify_sync(
        self, claims: list[Claim], evidence: list[Evidence], reference: datetime | None
    ) -> list[ClaimGraph]:
        """Return the graph verification of every claim that has evidence, in this thread."""
        mine = {c.id: [e for e in evidence if e.claim_id == c.id] for c in claims}
        todo = [c for c in claims if mine[c.id]]
        if not todo:
            return []
        passages = list(dict.fromkeys(e.passage.text for c in todo for e in mine[c.id]))
        graphs = self.builder.build_many([c.text for c in todo] + passages, reference)
        claim_graphs = dict(zip((c.id for c in todo), graphs[: len(todo)], strict=True))
        passage_graph = dict(zip(passages, graphs[len(todo) :], strict=True))
        texts: set[str] = set()
        for graph in graphs:
            for node in graph.nodes:
                texts.update(t for t in (node.text, node.context) if t)
            texts.update(e.action for e in graph.edges if e.action)
        ordered = sorted(texts)
        matrix = self.embedder.embed_sync(ordered, role="query") if ordered else np.zeros((0, 384))
        vectors = dict(zip(ordered, matrix, strict=True))
        results = []
        for claim in todo:
            pairs = [(e.id, passage_graph[e.passage.text]) for e in mine[claim.id]]
            result = verify_graph(claim.id, claim_graphs[claim.id], pairs, vectors,
                                  threshold=self.threshold,
                                  action_threshold=self.action_threshold)  # fmt: skip
            log.info(
                "claim graph verified",
                extra={
                    "claim_id": claim.id,
                    "support": result.support,
                    "conflicts": len(result.conflicts),
                    "unmatched": len(result.unmatched),
                },
            )
            results.append(result)
        return results
