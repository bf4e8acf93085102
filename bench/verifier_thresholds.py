"""Choose the verifier's thresholds on AVeriTeC *train* (`python -m bench.verifier_thresholds`).

The verdict (`pipeline.verifier.verdict.label_from`) turns each claim's strongest support S and
refutation R into a label with three thresholds (support, refute, mixed). They are chosen here,
on claims of AVeriTeC's training set, never on dev (the data docs/results/ reports on):

1. each sampled train claim runs through the same gold-mode check as `factbot eval averitec
   --mode gold --judge verifier` (its evidence documents indexed, heuristic claims, retrieval,
   relevance, ranking); the verifier's readings of each sub-claim's evidence are recorded;
2. every threshold triple on a grid is scored on those readings (each passage on its stronger
   side, `verdict.sides`): the post label is `combine`
   of its claims' labels, as in a check; the objective is macro-F1 over the four gold labels on
   a sample stratified by label, among the triples that call at most 8 % of true claims false
   (the costliest error; the issue's goal is 2 of 25);
3. the best triple, its train figures, and the grid's neighbourhood are printed and written as
   JSON (`--report`);
4. the hybrid judge's `confident`, under the best triple: for each deciding probability p on a
   grid, how often the verifier's decisive sub-claim verdicts resting on at least p
   (`verdict.deciding`) match the gold label, with a Wilson interval; `confident` is the lowest p
   from which they are right at least 70 % of the time over at least 20 sub-claims (the
   verifier overrules the language model only where it is that reliable on train), 1.0 (never)
   when no p is.

The readings are kept in a JSON-lines file (`--readings`): a cut run resumes, and another
objective can be tried without scoring the claims again.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bench.reuse_calibration import wilson
from bots.app.root import App
from bots.evaluation.averitec import (
    GOLD_LABELS,
    EvalClaim,
    claim_post,
    load_averitec,
    stratified_sample,
)
from bots.settings import Settings
from pipeline.credibility.policy import SourcePolicy
from pipeline.embedding.onnx import OnnxEmbedder
from pipeline.errors import EmptyPostError
from pipeline.evidence.ingest import Ingester
from pipeline.judge.claimreview import ReviewMatchJudge, combine
from pipeline.records.domain import Claim, Evidence, Label
from pipeline.run import CheckConfig, CheckDeps, run_check
from pipeline.verifier.stance import StanceModel
from pipeline.verifier.verdict import (
    Decided,
    Thresholds,
    VerifierJudge,
    deciding,
    label_from,
    sides,
)
from storage import Store

TRAIN = Path("../shared/data/train/averitec/train.json")
GRID = [round(x, 2) for x in np.arange(0.1, 0.96, 0.05)]
# The costliest error bounds the search: at most this share of true claims called false (the
# issue's goal, 2 of 25); among the triples that keep to it, the best macro-F1 wins.
MAX_TRUE_CALLED_FALSE = 0.08

# The hybrid judge's `confident`: the verifier overrules the model from the lowest deciding
# probability at which its verdicts on train are right this often, over at least this many.
CONFIDENT_PRECISION = 0.7
CONFIDENT_MIN_CLAIMS = 20
CONFIDENT_GRID = [round(x, 2) for x in np.arange(0.5, 0.991, 0.05)]


class RecordingVerifier(VerifierJudge):
    """The verifier, keeping each sub-claim's passage readings (supports, refutes)."""

    def __init__(self, stance: StanceModel) -> None:
        super().__init__(stance)
        self.last: list[list[tuple[float, float]]] = []

    async def decide(self, claims: Sequence[Claim], evidence: Sequence[Evidence]) -> Decided:
        decided = await super().decide(claims, evidence)
        by_id = {e.id: e for e in evidence}
        self.last = []
        for claim in claims:
            mine = [r for r in decided.readings if by_id[r.evidence_id].claim_id == claim.id]
            self.last.append([(r.stance.supports, r.stance.refutes) for r in mine])
        return decided


def _done(out: Path) -> set[int]:
    if not out.is_file():
        return set()
    return {json.loads(line)["index"] for line in out.read_text().splitlines() if line}


async def read_claims(
    claims: Sequence[EvalClaim], out: Path, model_dir: Path | None, config: CheckConfig
) -> None:
    """Run the gold-mode check on each claim not yet in `out`, appending its readings."""
    done = _done(out)
    embedder = OnnxEmbedder()
    verifier = RecordingVerifier(StanceModel(model_dir))
    judge = ReviewMatchJudge(embedder)
    todo = [c for c in claims if c.index not in done]
    started = time.perf_counter()
    with out.open("a", encoding="utf-8") as handle:
        for n, claim in enumerate(todo, 1):
            with Store.open(":memory:") as store:
                ingester = Ingester(store.documents, embedder)
                for document in claim.documents:
                    await ingester.add_document(document)
                await ingester.finish()
                deps = CheckDeps(
                    index=store.documents,
                    embedder=embedder,
                    rater=SourcePolicy(store.sources, unrated="allow"),
                    judge=judge,
                    verifier=verifier,
                )
                verifier.last = []
                try:
                    check = await run_check(claim_post(claim), deps=deps, config=config)
                    predicted = check.verdict.label.value
                except EmptyPostError:  # nothing check-worthy: unverifiable, as the eval counts it
                    predicted = Label.UNVERIFIABLE.value
            row = {
                "index": claim.index,
                "gold": claim.gold.value,
                "claims": verifier.last,
                "predicted": predicted,
            }
            handle.write(json.dumps(row) + "\n")
            handle.flush()
            if n % 25 == 0:
                rate = n / (time.perf_counter() - started)
                print(f"{n}/{len(todo)} claims, {rate:.2f}/s", flush=True)


def predict(rows: Sequence[dict[str, Any]], t: Thresholds) -> list[Label]:
    """Return each row's post label under thresholds t."""
    return [
        combine([label_from(*sides(readings), t) for readings in row["claims"]]) for row in rows
    ]


def figures(rows: Sequence[dict[str, Any]], predicted: Sequence[Label]) -> dict[str, Any]:
    """Return macro-F1, accuracy, per-label recall and accurate->false of predictions."""
    gold = [Label(row["gold"]) for row in rows]
    f1s, recall = {}, {}
    for label in GOLD_LABELS:
        tp = sum(1 for g, p in zip(gold, predicted, strict=True) if g is label and p is label)
        fp = sum(1 for g, p in zip(gold, predicted, strict=True) if g is not label and p is label)
        fn = sum(1 for g, p in zip(gold, predicted, strict=True) if g is label and p is not label)
        f1s[label.value] = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
        recall[label.value] = tp / (tp + fn) if tp + fn else 0.0
    true_claims = sum(1 for g in gold if g is Label.ACCURATE)
    accurate_false = sum(
        1 for g, p in zip(gold, predicted, strict=True) if g is Label.ACCURATE and p is Label.FALSE
    )
    return {
        "claims": len(rows),
        "macro_f1": round(float(np.mean(list(f1s.values()))), 4),
        "accuracy": round(sum(g is p for g, p in zip(gold, predicted, strict=True)) / len(rows), 4),
        "recall": {k: round(v, 3) for k, v in recall.items()},
        "accurate_to_false": accurate_false,
        "accurate_to_false_share": round(accurate_false / true_claims, 4) if true_claims else 0.0,
    }


def search(rows: Sequence[dict[str, Any]]) -> tuple[Thresholds, dict[str, Any], list[Any]]:
    """Return the best thresholds on rows, their figures, and the top of the grid."""
    scored = []
    for support, refute, mixed in itertools.product(GRID, GRID, GRID):
        if mixed < min(support, refute):
            continue  # below both thresholds, mixed changes nothing: skip duplicates
        t = Thresholds(support=support, refute=refute, mixed=mixed)
        f = figures(rows, predict(rows, t))
        within = f["accurate_to_false_share"] <= MAX_TRUE_CALLED_FALSE
        objective = f["macro_f1"] if within else f["macro_f1"] - 1.0
        scored.append((objective, t, f))
    scored.sort(key=lambda item: -item[0])
    best = scored[0]
    top = [
        {"objective": round(o, 4), "support": t.support, "refute": t.refute, "mixed": t.mixed, **f}
        for o, t, f in scored[:10]
    ]
    return best[1], best[2], top


def reliability(rows: Sequence[dict[str, Any]], t: Thresholds) -> list[dict[str, Any]]:
    """Return how often the verifier's decisive sub-claim verdicts are right, by strength.

    For each p on CONFIDENT_GRID: the sub-claims whose label under t is decisive (not
    `unverifiable`) and rests on a probability of at least p, and how many of them carry their
    post's gold label (an AVeriTeC claim is one post; its sub-claims share its label).
    """
    decided: list[tuple[float, bool]] = []
    for row in rows:
        gold = Label(row["gold"])
        for readings in row["claims"]:
            support, refute = sides(readings)
            label = label_from(support, refute, t)
            if label is not Label.UNVERIFIABLE:
                decided.append((deciding(label, support, refute), label is gold))
    table = []
    for p in CONFIDENT_GRID:
        hits = [right for strength, right in decided if strength >= p]
        n, k = len(hits), sum(hits)
        low, high = wilson(k, n)
        table.append(
            {
                "from": p,
                "sub_claims": n,
                "right": k,
                "precision": round(k / n, 3) if n else None,
                "interval": [round(low, 3), round(high, 3)],
            }
        )
    return table


def confident_from(table: Sequence[dict[str, Any]]) -> float:
    """Return the lowest p whose verdicts are right often enough on enough sub-claims, else 1.0."""
    for row in table:
        n, k = row["sub_claims"], row["right"]
        if n >= CONFIDENT_MIN_CLAIMS and k / n >= CONFIDENT_PRECISION:
            return float(row["from"])
    return 1.0


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=TRAIN)
    parser.add_argument("--sample", type=int, default=600, help="claims, stratified by label")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model-dir", type=Path, help="stance model [default: the shipped one]")
    parser.add_argument(
        "--readings", type=Path, default=Path("reports/verifier-train-passages.jsonl")
    )
    parser.add_argument("--report", type=Path, default=Path("reports/verifier-thresholds.json"))
    args = parser.parse_args(argv)
    claims = stratified_sample(load_averitec(args.data), args.sample, seed=args.seed)
    args.readings.parent.mkdir(parents=True, exist_ok=True)
    config = App(Settings()).checks.check_config()  # the knobs `factbot eval averitec` uses
    asyncio.run(read_claims(claims, args.readings, args.model_dir, config))
    wanted = {c.index for c in claims}
    rows = [json.loads(line) for line in args.readings.read_text().splitlines() if line]
    rows = [r for r in rows if r["index"] in wanted]
    best, found, top = search(rows)
    table = reliability(rows, best)
    report = {
        "data": str(args.data),
        "sample": {"size": args.sample, "seed": args.seed, "stratified": True},
        "model_dir": str(args.model_dir or "shipped"),
        "objective": f"macro-F1; at most {MAX_TRUE_CALLED_FALSE:.0%} of true claims called false",
        "best": {"support": best.support, "refute": best.refute, "mixed": best.mixed},
        "train_figures": found,
        "defaults_figures": figures(rows, predict(rows, Thresholds())),
        "top": top,
        "confident": confident_from(table),
        "confident_rule": f"lowest p right >= {CONFIDENT_PRECISION:.0%} of the time over >= "
        f"{CONFIDENT_MIN_CLAIMS} decisive sub-claims (1.0: never overrule)",
        "reliability": table,
    }
    print(json.dumps(report, indent=2))
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text(json.dumps(report, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
