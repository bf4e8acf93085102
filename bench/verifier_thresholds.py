"""Choose the verifier's thresholds on AVeriTeC *train* (`python -m bench.verifier_thresholds`).

The verdict (`pipeline.verifier.verdict.label_from`) turns each claim's strongest support S and
refutation R into a label with three thresholds (support, refute, mixed). They are chosen here,
on claims of AVeriTeC's training set, never on dev (the data docs/results/ reports on):

1. each sampled train claim runs through the same gold-mode check as `factbot eval averitec
   --mode gold --judge verifier` (its evidence documents indexed, heuristic claims, retrieval,
   relevance, ranking); the verifier's readings of each sub-claim's evidence are recorded;
2. every threshold triple on a grid is scored on those readings (each passage on its stronger
   side, `verdict.sides`): the post label is `combine`
   of its claims' labels, as in a check; the objective is the least mean cost under the
   configured `Costs`, among the settings that call at most 8 % of true claims false and 5 % of
   false claims accurate (the costly errors, as shares of each label, so the sample's label mix
   does not move them). The sample is stratified by label (every label gets as many claims), and
   its mean cost is weighted back to the label shares of the whole train file (`--weighting
   natural`, the default: 57 % of the claims that reach fact-checkers are false) or left even
   (`--weighting even`);
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
import dataclasses
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
    Costs,
    Decided,
    Thresholds,
    VerifierJudge,
    deciding,
    label_from,
    sides,
)
from storage import Store

TRAIN = Path("../shared/data/train/averitec/train.json")
GRID = [round(float(x), 2) for x in np.arange(0.1, 0.96, 0.05)]
MIXED = [0.3, 0.5, 0.7, 0.9, 1.01]  # 1.01: never misleading
VETO = [0.2, 0.35, 0.5, 0.7, 1.01]  # 1.01: no veto
# The relevance gates tried: readings are recorded at RECORD_GATE with RECORD_EVIDENCE passages,
# so any higher gate (and the check's MAX_EVIDENCE) can be replayed without scoring again.
GATES = [0.2, 0.3, 0.4, 0.5, 0.6]
RECORD_GATE = 0.2
RECORD_EVIDENCE = 10
MAX_EVIDENCE = 5
# The costly errors bound the search: at most this share of true claims called false and of
# false claims called accurate; among the settings that keep to both, the least cost wins.
MAX_TRUE_CALLED_FALSE = 0.08
MAX_FALSE_CALLED_ACCURATE = 0.05
TRADEOFF = [1.0, 2.0, 3.0, 5.0, 8.0]
_CHUNK = 512  # candidates labelled at once by the search

# The hybrid judge's `confident`: the verifier overrules the model from the lowest deciding
# probability at which its verdicts on train are right this often, over at least this many.
CONFIDENT_PRECISION = 0.7
CONFIDENT_MIN_CLAIMS = 20
CONFIDENT_GRID = [round(x, 2) for x in np.arange(0.5, 0.991, 0.05)]


class RecordingVerifier(VerifierJudge):
    """The verifier, keeping each sub-claim's passage readings (supports, refutes, relevance)."""

    def __init__(self, stance: StanceModel) -> None:
        super().__init__(stance)
        self.last: list[list[tuple[float, float, float]]] = []

    async def decide(self, claims: Sequence[Claim], evidence: Sequence[Evidence]) -> Decided:
        decided = await super().decide(claims, evidence)
        by_id = {e.id: e for e in evidence}
        self.last = []
        for claim in claims:
            mine = [r for r in decided.readings if by_id[r.evidence_id].claim_id == claim.id]
            self.last.append(
                [
                    (r.stance.supports, r.stance.refutes, by_id[r.evidence_id].relevance)
                    for r in mine
                ]
            )
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


def _read(readings: Sequence[Sequence[float]], gate: float) -> list[tuple[float, float]]:
    """Return the (supports, refutes) of the passages a relevance gate lets through.

    Readings are recorded at `RECORD_GATE` with up to `RECORD_EVIDENCE` passages in the check's
    order (tier, then relevance); a higher gate keeps those at or above it, then the first
    `MAX_EVIDENCE`, as the check itself would. Rows recorded before relevance was kept (two
    numbers a passage) pass every gate.
    """
    kept = [r for r in readings if len(r) < 3 or r[2] >= gate]
    return [(r[0], r[1]) for r in kept[:MAX_EVIDENCE]]


def predict(rows: Sequence[dict[str, Any]], t: Thresholds, gate: float = 0.0) -> list[Label]:
    """Return each row's post label under thresholds t and a relevance gate."""
    return [
        combine([label_from(*sides(_read(readings, gate)), t) for readings in row["claims"]])
        for row in rows
    ]


def figures(
    rows: Sequence[dict[str, Any]], predicted: Sequence[Label], costs: Costs | None = None
) -> dict[str, Any]:
    """Return macro-F1, accuracy, per-label recall, the costly errors and coverage."""
    costs = costs or Costs()
    gold = [Label(row["gold"]) for row in rows]
    pairs = list(zip(gold, predicted, strict=True))
    f1s, recall = {}, {}
    for label in GOLD_LABELS:
        tp = sum(1 for g, p in pairs if g is label and p is label)
        fp = sum(1 for g, p in pairs if g is not label and p is label)
        fn = sum(1 for g, p in pairs if g is label and p is not label)
        f1s[label.value] = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
        recall[label.value] = tp / (tp + fn) if tp + fn else 0.0
    true_claims = sum(1 for g in gold if g is Label.ACCURATE)
    false_claims = sum(1 for g in gold if g is Label.FALSE)
    accurate_false = sum(1 for g, p in pairs if g is Label.ACCURATE and p is Label.FALSE)
    false_accurate = sum(1 for g, p in pairs if g is Label.FALSE and p is Label.ACCURATE)
    return {
        "claims": len(rows),
        "macro_f1": round(float(np.mean(list(f1s.values()))), 4),
        "accuracy": round(sum(g is p for g, p in pairs) / len(rows), 4),
        "recall": {k: round(v, 3) for k, v in recall.items()},
        "accurate_to_false": accurate_false,
        "accurate_to_false_share": round(accurate_false / true_claims, 4) if true_claims else 0.0,
        "false_to_accurate": false_accurate,
        "false_to_accurate_share": (
            round(false_accurate / false_claims, 4) if false_claims else 0.0
        ),
        "coverage": round(sum(p is not Label.UNVERIFIABLE for p in predicted) / len(rows), 4),
        "cost": round(sum(costs.of(g, p) for g, p in pairs) / len(rows), 4),
    }


_ORDER = (Label.ACCURATE, Label.FALSE, Label.MISLEADING, Label.UNVERIFIABLE)
_PARTLY = len(_ORDER)  # accurate beside false or misleading: partly accurate (never gold)
_POSTS = _PARTLY + 1  # the post labels a row can get: the gold ones and partly accurate


class _Table:
    """Every row's sub-claim readings under one gate, as arrays (the search's fast path)."""

    def __init__(self, rows: Sequence[dict[str, Any]], gate: float) -> None:
        support, refute, owner = [], [], []
        for i, row in enumerate(rows):
            for readings in row["claims"]:
                s, r = sides(_read(readings, gate))
                support.append(s)
                refute.append(r)
                owner.append(i)
        self.support, self.refute = np.array(support), np.array(refute)
        self.owner = np.array(owner, dtype=int)
        self.rows = len(rows)
        self.gold = np.array([_ORDER.index(Label(row["gold"])) for row in rows])

    def labels(self, t: Thresholds) -> np.ndarray:
        """Return each row's post label (an index into _ORDER, or _PARTLY), as `predict`."""
        post: np.ndarray = self.labels_many([t])[0]
        return post

    def labels_many(self, ts: Sequence[Thresholds]) -> np.ndarray:
        """Return the post labels of every row under each of ts: one row of labels per t."""
        s, r = self.support[None, :], self.refute[None, :]

        def column(name: str) -> np.ndarray:
            return np.array([getattr(t, name) for t in ts], dtype=float)[:, None]

        supported, refuted = s >= column("support"), r >= column("refute")
        endorsable = supported & (r < column("veto"))
        both = supported & refuted
        label = np.full(supported.shape, 3)
        label[endorsable] = 0
        label[refuted] = 1
        leaning = both & (s > r)
        label[leaning] = np.where(endorsable[leaning], 0, 3)
        label[both & (np.minimum(s, r) >= column("mixed"))] = 2
        # counts[c, row, label]: the decided sub-claims of each row under each candidate
        owner = np.broadcast_to(self.owner[None, :], label.shape)
        cand = np.broadcast_to(np.arange(len(ts))[:, None], label.shape)
        decided = label < 3
        flat = (cand[decided] * self.rows + owner[decided]) * 3 + label[decided]
        counts = np.bincount(flat, minlength=len(ts) * self.rows * 3).reshape(-1, self.rows, 3)
        post = np.full((len(ts), self.rows), 3)
        kinds = (counts > 0).sum(axis=2)
        single = kinds == 1
        post[single] = counts.argmax(axis=2)[single]
        several = kinds > 1
        post[several & (counts[:, :, 0] > 0)] = _PARTLY
        post[several & (counts[:, :, 0] == 0)] = 1  # false beside misleading: false
        return post


def _cost_matrix(costs: Costs) -> np.ndarray:
    partly = Label.PARTLY_ACCURATE
    return np.array([[costs.of(g, p) for p in (*_ORDER, partly)] for g in _ORDER], dtype=float)


def _candidates() -> list[Thresholds]:
    found = []
    for support, refute in itertools.product(GRID, GRID):
        for mixed in MIXED:
            if mixed < min(support, refute):
                continue  # below both thresholds, mixed changes nothing: skip duplicates
            found += [Thresholds(support, refute, mixed, veto) for veto in VETO]
    return found


def label_weights(
    rows: Sequence[dict[str, Any]], shares: dict[str, float] | None
) -> np.ndarray | None:
    """Return each row's weight so the rows' label mix becomes `shares` (None: even weights).

    A stratified sample holds every label equally; weighting its rows by share / (the label's
    share of the sample) makes a mean over it estimate the mean over data mixed as `shares`.
    """
    if shares is None:
        return None
    gold = [row["gold"] for row in rows]
    counts = {label: gold.count(label) for label in set(gold)}
    total = sum(shares.get(label, 0.0) for label in counts) or 1.0
    return np.array([shares.get(g, 0.0) / total * len(rows) / counts[g] for g in gold])


def train_shares(claims: Sequence[EvalClaim]) -> dict[str, float]:
    """Return each gold label's share of the claims (the file's own label mix)."""
    return {
        label.value: sum(1 for c in claims if c.gold is label) / max(1, len(claims))
        for label in GOLD_LABELS
    }


def search(
    rows: Sequence[dict[str, Any]],
    costs: Costs | None = None,
    shares: dict[str, float] | None = None,
) -> tuple[Thresholds, float, dict[str, Any], list[Any]]:
    """Return the thresholds and gate of least cost on rows, their figures, and the top.

    The least mean cost under `costs` (rows weighted to the label `shares`, if given) among the
    settings that keep both costly errors within their bounds (true claims called false, false
    claims called accurate, each a share of its own label); if none does, the least cost of all
    (the report says so: `within_bounds`). Ties go to the higher macro-F1, then to the first on
    the grid.
    """
    costs = costs or Costs()
    matrix = _cost_matrix(costs)
    weights = label_weights(rows, shares)
    scored = []
    for gate in GATES:
        table = _Table(rows, gate)
        gold = table.gold
        n_true, n_false = max(1, int((gold == 0).sum())), max(1, int((gold == 1).sum()))
        # A row's weight is its gold label's, so each candidate's figures come from its
        # confusion matrix (gold x post label): one count in place of a dozen array passes.
        row_weight = np.ones(len(gold)) if weights is None else weights
        label_weight = np.zeros(len(_ORDER))
        np.add.at(label_weight, gold, row_weight)
        label_weight /= np.maximum(1, np.bincount(gold, minlength=len(_ORDER)))
        weighted = matrix * label_weight[:, None]
        total = float(row_weight.sum())
        candidates = _candidates()
        for start in range(0, len(candidates), _CHUNK):
            chunk = candidates[start : start + _CHUNK]
            posts = table.labels_many(chunk)
            cells = len(_ORDER) * _POSTS
            index = np.arange(len(chunk))[:, None] * cells + gold[None, :] * _POSTS + posts
            confs = np.bincount(index.ravel(), minlength=len(chunk) * cells)
            for t, conf in zip(chunk, confs.reshape(-1, len(_ORDER), _POSTS), strict=True):
                cost = float((conf * weighted).sum()) / total
                true_false = int(conf[0, 1]) / n_true
                false_true = int(conf[1, 0]) / n_false
                within = (
                    true_false <= MAX_TRUE_CALLED_FALSE and false_true <= MAX_FALSE_CALLED_ACCURATE
                )
                hits = np.diagonal(conf)
                f1 = 2 * hits / np.maximum(1, conf.sum(axis=1) + conf.sum(axis=0)[: len(_ORDER)])
                scored.append(((not within, round(cost, 6), -float(f1.mean())), gate, t))
    scored.sort(key=lambda item: item[0])
    top = []
    for _, gate, t in scored[:10]:
        f = figures(rows, predict(rows, t, gate), costs)
        top.append({"gate": gate, **dataclasses.asdict(t), **f})
    _, gate, best = scored[0]
    return best, gate, figures(rows, predict(rows, best, gate), costs), top


def tradeoff(
    rows: Sequence[dict[str, Any]], costs: Costs, shares: dict[str, float] | None = None
) -> list[dict[str, Any]]:
    """Return the fitted settings' figures as endorsing misinformation is made costlier.

    The coverage-against-errors curve: for each cost of calling a false claim accurate (the
    other costs as given), the least-cost thresholds and what they decide, and get wrong.
    """
    curve = []
    for weight in TRADEOFF:
        weighted = dataclasses.replace(costs, false_as_accurate=weight, true_as_false=weight)
        t, gate, f, _ = search(rows, weighted, shares)
        f["within_bounds"] = (
            f["accurate_to_false_share"] <= MAX_TRUE_CALLED_FALSE
            and f["false_to_accurate_share"] <= MAX_FALSE_CALLED_ACCURATE
        )
        curve.append(
            {
                "costly_error_weight": weight,
                "gate": gate,
                "thresholds": dataclasses.asdict(t),
                **{k: f[k] for k in ("coverage", "macro_f1", "accuracy", "within_bounds")},
                "false_to_accurate_share": f["false_to_accurate_share"],
                "accurate_to_false_share": f["accurate_to_false_share"],
            }
        )
    return curve


def reliability(
    rows: Sequence[dict[str, Any]], t: Thresholds, gate: float = 0.0
) -> list[dict[str, Any]]:
    """Return how often the verifier's decisive sub-claim verdicts are right, by strength.

    For each p on CONFIDENT_GRID: the sub-claims whose label under t is decisive (not
    `unverifiable`) and rests on a probability of at least p, and how many of them carry their
    post's gold label (an AVeriTeC claim is one post; its sub-claims share its label).
    """
    decided: list[tuple[float, bool]] = []
    for row in rows:
        gold = Label(row["gold"])
        for readings in row["claims"]:
            support, refute = sides(_read(readings, gate))
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
    parser.add_argument(
        "--weighting",
        choices=["natural", "even"],
        default="natural",
        help="weight the stratified sample's cost to the file's label shares, or not",
    )
    args = parser.parse_args(argv)
    every = load_averitec(args.data)
    shares = train_shares(every) if args.weighting == "natural" else None
    claims = stratified_sample(every, args.sample, seed=args.seed)
    args.readings.parent.mkdir(parents=True, exist_ok=True)
    settings = Settings()
    # The knobs `factbot eval averitec` uses, recorded below the lowest gate tried.
    config = dataclasses.replace(
        App(settings).checks.check_config(),
        relevance_threshold=RECORD_GATE,
        max_evidence=RECORD_EVIDENCE,
    )
    asyncio.run(read_claims(claims, args.readings, args.model_dir, config))
    wanted = {c.index for c in claims}
    rows = [json.loads(line) for line in args.readings.read_text().splitlines() if line]
    rows = [r for r in rows if r["index"] in wanted]
    costs = settings.verifier.costs()
    best, gate, found, top = search(rows, costs, shares)
    table = reliability(rows, best, gate)
    best = dataclasses.replace(best, confident=confident_from(table))
    report = {
        "data": str(args.data),
        "sample": {"size": args.sample, "seed": args.seed, "stratified": True},
        "model_dir": str(args.model_dir or "shipped"),
        "costs": dataclasses.asdict(costs),
        "weighting": {"kind": args.weighting, "shares": shares},
        "objective": f"least mean cost; at most {MAX_TRUE_CALLED_FALSE:.0%} of true claims "
        f"called false and {MAX_FALSE_CALLED_ACCURATE:.0%} of false claims called accurate",
        "best": dataclasses.asdict(best),
        "relevance_gate": gate,
        "train_figures": found,
        "defaults_figures": figures(
            rows,
            predict(rows, settings.verifier.thresholds(), settings.verifier.relevance),
            costs,
        ),
        "top": top,
        "tradeoff": tradeoff(rows, costs, shares),
        "confident_rule": f"lowest p right >= {CONFIDENT_PRECISION:.0%} of the time over >= "
        f"{CONFIDENT_MIN_CLAIMS} decisive sub-claims (1.0: never overrule)",
        "reliability": table,
    }
    print(json.dumps(report, indent=2))
    args.report.parent.mkdir(parents=True, exist_ok=True)
    args.report.write_text(json.dumps(report, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
