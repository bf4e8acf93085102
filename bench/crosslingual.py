"""Cross-language retrieval: does a claim in es/de/fr/ar find its English evidence?

`python -m bench.crosslingual` reads tests/fixtures/crosslingual/pairs.jsonl (43 facts from the
leads of English Wikipedia articles, each an English evidence sentence and one claim of it in
en, es, de, fr and ar, plus 18 English distractors on neighbouring topics; provenance in the
fixture's README.md). Every claim is embedded as a query, every evidence sentence as a passage,
and the claim's evidence is looked up among all 61 sentences by cosine, as the dense path of the
evidence index ranks them. Per backend (`--backend`, repeatable; default: all that load) and
language it reports

- ``recall_at_1``: the share of claims whose own evidence ranks first;
- ``recall_at_5`` and ``mrr`` (mean reciprocal rank);
- ``own_cosine`` and ``best_other_cosine``: medians of the cosine to the claim's own evidence and
  to the best other sentence, which show where a relevance threshold could sit;
- ``ms_per_text``: embedding time per text (claims and passages), which a loaded machine inflates.

Goal (issue 40): recall@1 >= 0.75 for es, de, fr and ar; English no worse than today's embedder.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.embedding.backends import build_embedder
from pipeline.embedding.embedder import LocalEmbedder

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "crosslingual"
LANGUAGES = ("en", "es", "de", "fr", "ar")
GOAL_RECALL_AT_1 = 0.75
GOAL_LANGUAGES = ("es", "de", "fr", "ar")


def load_pairs(path: Path = FIXTURE / "pairs.jsonl") -> list[dict[str, Any]]:
    """Return the fixture's items: id, article, evidence and claims by language."""
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def score(items: Sequence[dict[str, Any]], embedder: LocalEmbedder) -> dict[str, Any]:
    """Embed every claim and evidence sentence and report the rankings per language."""
    evidence = [item["evidence"] for item in items]
    claims = [
        (lang, i, item["claims"][lang])
        for i, item in enumerate(items)
        for lang in LANGUAGES
        if lang in item["claims"]
    ]
    embedder.embed_sync(["warm up"], role="query")
    started = time.perf_counter()
    passages = embedder.embed_sync(evidence, role="passage")
    queries = embedder.embed_sync([text for _, _, text in claims], role="query")
    seconds = time.perf_counter() - started
    cosines = queries @ passages.T
    per_language: dict[str, Any] = {}
    for lang in LANGUAGES:
        rows = [(k, own) for k, (code, own, _) in enumerate(claims) if code == lang]
        if not rows:
            continue
        ranks, owns, others = [], [], []
        for k, own in rows:
            row = cosines[k]
            ranks.append(int((row > row[own]).sum()) + 1)
            owns.append(float(row[own]))
            others.append(float(np.max(np.delete(row, own))))
        rank = np.array(ranks)
        per_language[lang] = {
            "claims": len(rows),
            "recall_at_1": round(float((rank == 1).mean()), 3),
            "recall_at_5": round(float((rank <= 5).mean()), 3),
            "mrr": round(float((1.0 / rank).mean()), 3),
            "own_cosine": round(float(np.median(owns)), 3),
            "best_other_cosine": round(float(np.median(others)), 3),
            "misses": [claims[k][2] for (k, _), r in zip(rows, ranks, strict=True) if r > 1],
        }
    return {
        "embedder": embedder.name,
        "passages": len(evidence),
        "ms_per_text": round(1000 * seconds / (len(evidence) + len(claims)), 1),
        "languages": per_language,
        "goal_met": all(
            per_language[lang]["recall_at_1"] >= GOAL_RECALL_AT_1 for lang in GOAL_LANGUAGES
        ),
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Print the figures of each backend as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--backend",
        action="append",
        choices=("onnx", "torch", "e5"),
        help="embedding backend to measure (repeatable; default: onnx and e5)",
    )
    parser.add_argument("--threads", type=int, default=None, help="embedding threads")
    parser.add_argument("--brief", action="store_true", help="leave out the missed claims")
    args = parser.parse_args(argv)
    items = load_pairs()
    results = []
    for backend in args.backend or ["onnx", "e5"]:
        result = score(items, build_embedder(backend, threads=args.threads))
        if args.brief:
            for figures in result["languages"].values():
                figures.pop("misses")
        results.append(result)
    print(json.dumps(results, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
