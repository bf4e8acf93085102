"""Narratives (CRAVE): cluster a claim's evidence into the few stories it tells.

Each evidence passage is embedded (384-d, normalised) and grouped by k-means with
K = min(max_k, items, distinct vectors), so one item, or identical passages, make one narrative
instead of empty clusters. A narrative is represented by the member nearest its centroid (the
better-ranked member on a tie). Evidence arrives ranked by credibility and relevance, so members
keep that order and narratives are ordered by their best-ranked member.

Narrative ids are derived from the claim id and the member ids, so clustering the same evidence
again gives the same ids.

Clustering runs in the CPU pool; scikit-learn is imported there, on first use.

Failure policy: never raises for ordinary input; evidence of other claims is ignored (logged),
and no evidence gives no narratives.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from pipeline.embedding.embedder import Embedder, Vectors
from pipeline.records.domain import Evidence, Narrative, content_hash
from pipeline.util.cpu import CpuPool, run_cpu

log = logging.getLogger(__name__)

N_INIT = 10  # k-means restarts; cheap at these sizes and stabler than one
_DISTINCT_DECIMALS = 5  # vectors equal to this precision count as one point


def narrative_id(claim_id: str, evidence_ids: Sequence[str]) -> str:
    """Return the stable id of the narrative of claim_id made of evidence_ids."""
    return content_hash("\x1f".join((claim_id, *evidence_ids)))[:32]


def _labels(
    vectors: Vectors, k: int, seed: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """Return each row's cluster label and the cluster centroids."""
    if k == 1:
        return np.zeros(len(vectors), dtype=np.int64), vectors.mean(axis=0, keepdims=True)
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    # A few dozen points: one thread is fastest, and an OpenMP pool of sklearn's own would
    # fight torch's (the embedder) for the same cores, slowing both many times over.
    with threadpool_limits(limits=1):
        model = KMeans(n_clusters=k, n_init=N_INIT, random_state=seed).fit(vectors)
    return np.asarray(model.labels_, dtype=np.int64), np.asarray(
        model.cluster_centers_, dtype=np.float32
    )


def _group(
    claim_id: str, items: Sequence[Evidence], vectors: Vectors, *, max_k: int, seed: int
) -> list[Narrative]:
    """Cluster items (already ranked) by their vectors into ordered narratives."""
    distinct = len(np.unique(np.round(vectors, _DISTINCT_DECIMALS), axis=0))
    k = max(1, min(max_k, len(items), distinct))
    labels, centroids = _labels(vectors, k, seed)
    narratives: list[Narrative] = []
    # First appearance of a label = its best-ranked member: that orders the narratives.
    for label in dict.fromkeys(int(x) for x in labels):
        members = [i for i in range(len(items)) if labels[i] == label]
        distances = np.linalg.norm(vectors[members] - centroids[label], axis=1)
        nearest = members[int(np.argmin(distances))]  # argmin keeps the earliest on a tie
        ids = tuple(items[i].id for i in members)
        narratives.append(
            Narrative(
                id=narrative_id(claim_id, ids),
                claim_id=claim_id,
                evidence_ids=ids,
                representative_id=items[nearest].id,
            )
        )
    return narratives


async def cluster_narratives(
    claim_id: str,
    evidence: Sequence[Evidence],
    *,
    embedder: Embedder,
    max_k: int = 4,
    seed: int = 0,
    cpu: CpuPool | None = None,
) -> list[Narrative]:
    """Cluster a claim's ranked evidence into at most max_k narratives, best-ranked first."""
    if max_k < 1:
        raise ValueError(f"max_k must be at least 1, not {max_k}")
    items = [e for e in evidence if e.claim_id == claim_id]
    if len(items) < len(evidence):
        log.info(
            "evidence of other claims ignored",
            extra={"claim_id": claim_id, "ignored": len(evidence) - len(items)},
        )
    if not items:
        return []
    vectors = np.asarray(
        await embedder.embed([e.passage.text for e in items], role="query"), dtype=np.float32
    )
    # Even a few dozen points take k-means (10 restarts) tens of milliseconds: never inline.
    narratives = await run_cpu(cpu, _group, claim_id, items, vectors, max_k=max_k, seed=seed)
    log.info(
        "narratives clustered",
        extra={"claim_id": claim_id, "evidence": len(items), "narratives": len(narratives)},
    )
    return narratives
