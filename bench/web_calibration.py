"""Fit the verifier's rule on evidence that looks like retrieved web passages (issue 51).

`python -m bench.web_calibration read` builds claim-level bundles from licence-clean and
threshold-only train sets (never AVeriTeC dev) and records the verifier's reading of every
passage of each bundle; `python -m bench.web_calibration fit` chooses the rule on them.

Bundles, each a claim with five passages, in evidence forms kept apart as strata:

- ``wiki``: FEVER-Symmetric *test* claims (never trained on) with their gold Wikipedia sentence
  (supports -> `accurate`, refutes -> `false`);
- ``health``: HealthVer *dev* claims with a gold passage (supports, refutes; neutral ->
  `unverifiable`);
- ``reports``: FEVER-Symmetric claims whose only passage about them reports them as hearsay
  ("Posts shared online this week say that <claim>.", five wordings unlike the probe's
  frames): gold `unverifiable`, and `accurate` there costs as much as endorsing a false claim;
- ``web``: the calibration half of `bench/data/web_evidence.jsonl`, read through the real check
  path (`python -m bench.web_evidence --half calibration --report …`, its records passed with
  `--web`).

Every bundle's other passages are the gold passages of the four claims of its set that are most
similar to it (MiniLM cosine; never its own): passages on the same topic that do not bear on
the claim, as retrieval finds them. Relevance is the same MiniLM cosine the check uses. A
passage that may bear on the claim is never a distractor (`distractor`): one that holds
`DISTRACTOR_WORDS` of the claim's content words, or one of the claim's names, or that begins
with the same subject as the claim's own passage (a FEVER sentence begins with its Wikipedia
page's title). FEVER-Symmetric pairs each claim with counterpart evidence written to flip its
label: without this, the nearest "distractors" were those counterparts (the first read of this
set, docs/results/2026-12-08-verifier-web-evidence.md).

The rule (`pipeline.verifier.verdict`): a passage bears on the claim when its relevance is within
`margin` of the claim's best and it holds `coverage` of the claim's content words; among those,
`accurate` needs support >= `support` and refutation < `veto`, `false` a refutation >= `refute`.
The objective: the least mean cost where a right decisive answer is worth `--value` (a cost of
minus that), calling a true claim false or a false claim accurate costs 4, any other wrong
decisive answer 1 (2 where the evidence is not decisive), abstaining where the truth is decisive
0; with the bounds of `bench.verifier_thresholds` (at most 8 % of true claims called false, 5 %
of false ones and of reports-only claims called accurate), every stratum weighted equally.
"""

from __future__ import annotations

import csv
import itertools
import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
import numpy as np

TRAIN = Path("../shared/data/train")
REPORT_FRAMES = (
    "Posts shared online this week say that {c}",
    "A message forwarded in family chat groups claims that {c}",
    "A video circulating on social media asserts that {c}",
    "Users on several forums have been sharing a screenshot saying that {c}",
    "A viral chain message tells readers that {c}",
)
SUPPORT = [0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95]
REFUTE = [0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95]
VETO = [0.3, 0.5, 0.7, 1.01]
MARGIN = [0.05, 0.1, 0.15, 0.2, 0.3, 1.0]
COVERAGE = [0.0, 0.3, 0.5, 0.6]
MIXED = 0.9
DISTRACTOR_WORDS = 0.34  # a distractor holds less than this share of the claim's content words
MAX_TRUE_CALLED_FALSE = 0.08
MAX_FALSE_CALLED_ACCURATE = 0.05
ACC, FALSE, MIS, UNV = 0, 1, 2, 3
NAMES = ("accurate", "false", "misleading", "unverifiable")


def _lower(claim: str) -> str:
    return claim[0].lower() + claim[1:] if claim[:2] != claim[:2].upper() else claim


def _fever(limit: int) -> list[tuple[str, str, int]]:
    path = TRAIN / "fever" / "symmetric_test.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line]
    gold = {"SUPPORTS": ACC, "REFUTES": FALSE}
    out = [
        (r["claim"].replace(" .", "."), r["evidence"].replace(" .", "."), gold[r["label"]])
        for r in rows
        if r["label"] in gold
    ]
    return out[:limit]


def _health(limit: int) -> list[tuple[str, str, int]]:
    path = TRAIN / "healthver" / "healthver_dev.csv"
    gold = {"Supports": ACC, "Refutes": FALSE, "Neutral": UNV}
    with path.open(newline="", encoding="utf-8") as handle:
        rows = [(r["claim"], r["evidence"], gold[r["label"]]) for r in csv.DictReader(handle)]
    random.Random(0).shuffle(rows)
    return rows[:limit]


def _subject(passage: str) -> str:
    """Return a passage's first three words, lower-cased (a FEVER sentence's page title)."""
    return " ".join(passage.lower().split()[:3])


def distractor(claim: str, own: str, other: str) -> bool:
    """Return whether `other` may stand beside `claim` as a passage that does not bear on it."""
    from pipeline.verifier import frames

    if frames.coverage(claim, other) >= DISTRACTOR_WORDS:
        return False
    names = frames.name_words(claim)
    if names and names & frames.name_words(other):
        return False
    return _subject(own) != _subject(other)


def bundles(fever: int, health: int, reports: int) -> list[dict[str, Any]]:
    """Return the claim bundles (claim, passages, gold, form) before reading."""
    from pipeline.embedding.onnx import OnnxEmbedder

    embedder = OnnxEmbedder()
    out: list[dict[str, Any]] = []
    sets = {"wiki": _fever(fever), "health": _health(health)}
    rng = random.Random(0)
    picked = rng.sample(sets["wiki"], reports)
    sets["reports"] = [
        (c, REPORT_FRAMES[i % len(REPORT_FRAMES)].format(c=_lower(c)), UNV)
        for i, (c, _, _) in enumerate(picked)
    ]
    for form, rows in sets.items():
        claims = embedder.embed_sync([c for c, _, _ in rows], role="query")
        golds = embedder.embed_sync([e for _, e, _ in rows], role="passage")
        pool = sets["wiki"] if form == "reports" else rows
        pool_vectors = (
            golds
            if form != "reports"
            else embedder.embed_sync([e for _, e, _ in pool], role="passage")
        )
        for i, (claim, passage, gold) in enumerate(rows):
            sims = pool_vectors @ claims[i]
            order = [
                j
                for j in np.argsort(-sims)
                if pool[j][0] != claim
                and pool[j][1] != passage
                and distractor(claim, passage, pool[j][1])
            ]
            others = [pool[j][1] for j in order[:4]]
            texts = [passage, *others]
            relevance = [float(golds[i] @ claims[i]), *(float(sims[j]) for j in order[:4])]
            out.append(
                {
                    "form": form,
                    "claim": claim,
                    "gold": gold,
                    "passages": texts,
                    "relevance": relevance,
                }
            )
    return out


def read(rows: list[dict[str, Any]]) -> None:
    """Add each passage's reading (supports, refutes) and coverage to the rows, in place."""
    from pipeline.verifier import frames
    from pipeline.verifier.stance import StanceModel
    from pipeline.verifier.verdict import evidence_form

    model = StanceModel()
    for row in rows:
        found = frames.read(model, row["claim"], row["passages"])
        row["readings"] = [
            [
                round(s.supports, 4),
                round(s.refutes, 4),
                rel,
                round(frames.coverage(row["claim"], p), 3),
                evidence_form(p),
            ]
            for s, rel, p in zip(found, row["relevance"], row["passages"], strict=True)
        ]
        row.pop("passages")


def web_rows(report: Path) -> list[dict[str, Any]]:
    """Return the web bench's calibration records as rows (claims its language gate left out
    are skipped: they were never read)."""
    from pipeline.verifier import frames
    from pipeline.verifier.verdict import evidence_form

    data = json.loads(report.read_text(encoding="utf-8"))
    gold = {"support": ACC, "debunk": FALSE, "reports": UNV}
    rows = []
    for rec in data["records"]:
        if not rec.get("readings"):
            continue
        rows.append(
            {
                "form": "web-" + rec["kind"],
                "claim": rec["claim"],
                "gold": gold[rec["kind"]],
                "readings": [
                    [
                        r["supports"],
                        r["refutes"],
                        r["relevance"],
                        round(frames.coverage(rec["claim"], r["text"]), 3),
                        evidence_form(r["text"]),
                    ]
                    for r in rec["readings"]
                ],
            }
        )
    return rows


def _sides(rows: Sequence[dict[str, Any]], margin: float, coverage: float) -> np.ndarray:
    """Return each row's (S, R): strongest support and refutation among passages that bear."""
    out = np.zeros((len(rows), 2))
    for i, row in enumerate(rows):
        top = max((r[2] for r in row["readings"]), default=0.0)
        kept = [r for r in row["readings"] if r[2] >= top - margin and r[3] >= coverage]
        out[i] = (max((r[0] for r in kept), default=0.0), max((r[1] for r in kept), default=0.0))
    return out


def labels(sr: np.ndarray, support: float, refute: float, veto: float) -> np.ndarray:
    """Return the label of each row under the thresholds (`verdict.label_from`, one tier)."""
    s, r = sr[:, 0], sr[:, 1]
    supported, refuted = s >= support, r >= refute
    endorsable = supported & (r < veto)
    out = np.full(len(sr), UNV)
    out[endorsable] = ACC
    out[refuted] = FALSE
    both = supported & refuted
    out[both & (np.minimum(s, r) >= MIXED)] = MIS
    out[both & (np.minimum(s, r) < MIXED) & (s > r)] = np.where(
        endorsable[both & (np.minimum(s, r) < MIXED) & (s > r)], ACC, UNV
    )
    return out


def cost_matrix(value: float, weight: float = 4.0) -> np.ndarray:
    """Return cost[gold, predicted]: a right decisive answer earns `value`."""
    c = np.ones((4, 4))
    c[ACC, ACC] = c[FALSE, FALSE] = -value
    c[FALSE, ACC] = c[ACC, FALSE] = weight
    c[ACC, UNV] = c[FALSE, UNV] = 0.0
    c[UNV, UNV] = 0.0
    c[UNV, ACC] = c[UNV, FALSE] = 2.0
    c[MIS, MIS] = -value
    c[MIS, UNV] = 0.0
    return c


def _of(hit: np.ndarray, among: np.ndarray) -> str:
    return f"{int(hit.sum())} of {int(among.sum())}"


def figures(rows: Sequence[dict[str, Any]], predicted: np.ndarray) -> dict[str, Any]:
    """Return per form: n, decided share, right share of the decided, the costly errors."""
    out: dict[str, Any] = {}
    forms = sorted({r["form"] for r in rows})
    gold = np.array([r["gold"] for r in rows])
    form = np.array([r["form"] for r in rows])
    for f in forms:
        m = form == f
        g, p = gold[m], predicted[m]
        decided = p != UNV
        out[f] = {
            "n": int(m.sum()),
            "decided": round(float(decided.mean()), 3),
            "right_of_decided": round(float((g[decided] == p[decided]).mean()), 3)
            if decided.any()
            else None,
            "accurate_recall": round(float((p[g == ACC] == ACC).mean()), 3)
            if (g == ACC).any()
            else None,
            "false_recall": round(float((p[g == FALSE] == FALSE).mean()), 3)
            if (g == FALSE).any()
            else None,
            "true_as_false": _of((g == ACC) & (p == FALSE), g == ACC),
            "false_as_accurate": _of((g == FALSE) & (p == ACC), g == FALSE),
            "undecisive_as_accurate": _of((g == UNV) & (p == ACC), g == UNV),
        }
    return out


def search(rows: Sequence[dict[str, Any]], value: float, weight: float = 4.0) -> dict[str, Any]:
    """Return the least-cost rule within the bounds, each form weighted equally."""
    gold = np.array([r["gold"] for r in rows])
    form = np.array([r["form"] for r in rows])
    forms = sorted(set(form))
    costs = cost_matrix(value, weight)
    for i, r in enumerate(rows):
        if r["form"].endswith("reports"):
            gold[i] = UNV
    reports = np.array([r["form"].endswith("reports") for r in rows])
    best: dict[str, Any] | None = None
    for margin, coverage in itertools.product(MARGIN, COVERAGE):
        sr = _sides(rows, margin, coverage)
        for support, refute, veto in itertools.product(SUPPORT, REFUTE, VETO):
            p = labels(sr, support, refute, veto)
            c = costs[gold, p]
            c = np.where(reports & (p == ACC), weight, c)
            mean = float(np.mean([c[form == f].mean() for f in forms]))
            true_false = ((gold == ACC) & (p == FALSE)).sum() / max(1, (gold == ACC).sum())
            false_acc = ((gold == FALSE) & (p == ACC)).sum() / max(1, (gold == FALSE).sum())
            rep_acc = (reports & (p == ACC)).sum() / max(1, reports.sum())
            if (
                true_false > MAX_TRUE_CALLED_FALSE
                or max(false_acc, rep_acc) > MAX_FALSE_CALLED_ACCURATE
            ):
                continue
            if best is None or mean < best["cost"] - 1e-9:
                best = {
                    "cost": round(mean, 4),
                    "rule": {
                        "support": support,
                        "refute": refute,
                        "veto": veto,
                        "margin": margin,
                        "coverage": coverage,
                    },
                    "figures": figures(rows, p),
                }
    assert best is not None
    return best


def abstain_cost(rows: Sequence[dict[str, Any]], value: float) -> float:
    """Return the mean cost of answering `unverifiable` everywhere (0 by construction)."""
    return float(np.mean([cost_matrix(value)[r["gold"], UNV] for r in rows]))


@click.group()
def main() -> None:
    """Build, read and fit the web-evidence calibration set."""


@main.command("read")
@click.option("--out", type=click.Path(path_type=Path), required=True)
@click.option("--fever", default=712, show_default=True)
@click.option("--health", default=600, show_default=True)
@click.option("--reports", default=300, show_default=True)
def read_command(out: Path, fever: int, health: int, reports: int) -> None:
    """Build the bundles and record every passage's reading (JSON lines)."""
    rows = bundles(fever, health, reports)
    read(rows)
    with out.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    click.echo(f"{len(rows)} bundles -> {out}")


@main.command("fit")
@click.option("--readings", type=click.Path(exists=True, path_type=Path), required=True)
@click.option("--web", type=click.Path(exists=True, path_type=Path), help="web bench records")
@click.option("--value", default=1.0, show_default=True, help="what a right decisive answer earns")
@click.option("--report", "report_path", type=click.Path(path_type=Path))
def fit_command(readings: Path, web: Path | None, value: float, report_path: Path | None) -> None:
    """Print the chosen rule, its figures per form, and the trade-off curve."""
    rows = [json.loads(line) for line in readings.read_text().splitlines() if line]
    if web:
        rows += web_rows(web)
    chosen = search(rows, value)
    curve = []
    for v, w in [(0.25, 4.0), (0.5, 4.0), (1.0, 4.0), (2.0, 4.0), (1.0, 8.0), (1.0, 2.0)]:
        found = search(rows, v, w)
        curve.append({"value": v, "weight": w, **found})
    result = {"value": value, "chosen": chosen, "curve": curve}
    click.echo(json.dumps(result, indent=1))
    if report_path:
        report_path.write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
