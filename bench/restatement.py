"""Is a page that only repeats a claim read as evidence for it? (`python -m bench.restatement`)

A debunking article, a fact-check and a post that spreads a rumour all repeat the claim; none of
them is evidence that it is true. This probe scores each FEVER-Symmetric test claim against its
own wording in attributed or questioning frames (none of them the frames `factbot train stance
--frames` trains on) and against fact-check rating frames, and reports how often the model's
reading would count as support (supports >= the verifier's `support` threshold) or refutation,
and how often the verifier's reading does: the model's, with debunking frames read in code
(`pipeline.verifier.frames`).

It also reads a contrast set (`--contrast`, default tests/fixtures/verifier/contrast.jsonl,
hand-written): claims against a credible passage that names another winner, number, date or
place, negates the claim or debunks it (each should come out `false`, never `accurate`), beside
the same passages for the true version (`accurate`). Each passage is decided as the verifier
decides one piece of evidence (`label_from` of its readings under the thresholds).

What it cannot tell: whether the model reads every real debunking page right; only that
repeating a claim does not by itself make a page support it, and how often such contrasts are
caught. Run it on any export with `--model-dir`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Callable, Sequence
from pathlib import Path

from pipeline.records.domain import Label
from pipeline.verifier import frames
from pipeline.verifier.stance import REFUTES, SUPPORTS, StanceModel
from pipeline.verifier.verdict import Thresholds, label_from

CLAIMS = Path("../shared/data/train/fever/symmetric_test.jsonl")
CONTRAST = Path(__file__).resolve().parent.parent / "tests/fixtures/verifier/contrast.jsonl"


def _plain(claim: str) -> str:
    return " ".join(claim.split()).rstrip(" .!?")


def _lower(claim: str) -> str:
    text = _plain(claim)
    first = text.split(" ", 1)[0].lower()
    return text[0].lower() + text[1:] if first in {"the", "a", "an", "there", "it"} else text


# Frames the training augmentation never used; the expected reading of each.
FRAMES: dict[str, tuple[Callable[[str], str], str]] = {
    "according to a post": (lambda c: f"According to a Facebook post, {_lower(c)}.", "neither"),
    "rumour": (lambda c: f"Rumours circulating this week say {_lower(c)}.", "neither"),
    "headline question": (lambda c: f"Fact check: {_plain(c)}?", "neither"),
    "asked, no answer": (lambda c: f"Readers asked us whether {_lower(c)}.", "neither"),
    "verdict false": (lambda c: f"{_plain(c)}? Our verdict: this is false.", "refutes"),
    "debunked": (lambda c: f"The claim that {_lower(c)} is false, fact-checkers found.", "refutes"),
}


def probe(model: StanceModel, claims: Sequence[str], threshold: Thresholds) -> dict[str, object]:
    """Return, per frame, the share of claims read as support and as refutation."""
    out: dict[str, object] = {}
    for name, (frame, expected) in FRAMES.items():
        probs = model.probabilities([(c, frame(c)) for c in claims])
        supported = float((probs[:, SUPPORTS] >= threshold.support).mean())
        refuted = float((probs[:, REFUTES] >= threshold.refute).mean())
        # the verifier's reading: the model's on the page, debunking frames read in code
        read = [frames.read(model, c, [frame(c)])[0] for c in claims]
        out[name] = {
            "expected": expected,
            "read_as_support": round(supported, 3),
            "read_as_refutation": round(refuted, 3),
            "mean_supports": round(float(probs[:, SUPPORTS].mean()), 3),
            "mean_refutes": round(float(probs[:, REFUTES].mean()), 3),
            "verifier_read_as_support": round(
                sum(r.supports >= threshold.support for r in read) / len(read), 3
            ),
            "verifier_read_as_refutation": round(
                sum(r.refutes >= threshold.refute for r in read) / len(read), 3
            ),
        }
    return out


def contrast(
    model: StanceModel, items: Sequence[dict[str, str]], threshold: Thresholds
) -> dict[str, object]:
    """Return, per kind of contrast, how many passages were decided as expected.

    `endorsed` counts the claims expected `false` that came out `accurate`: the harm.
    """
    by_kind: dict[str, dict[str, int]] = {}
    for item in items:
        [reading] = frames.read(model, item["claim"], [item["passage"]])
        label = label_from(reading.supports, reading.refutes, threshold)
        row = by_kind.setdefault(item["kind"], {"n": 0, "right": 0, "endorsed": 0})
        row["n"] += 1
        row["right"] += label.value == item["expected"]
        row["endorsed"] += item["expected"] == "false" and label is Label.ACCURATE
    total = {k: sum(r[k] for r in by_kind.values()) for k in ("n", "right", "endorsed")}
    return {"by_kind": by_kind, "total": total}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=Path, default=CLAIMS)
    parser.add_argument("--limit", type=int, default=300)
    parser.add_argument("--model-dir", type=Path, help="stance model [default: the shipped one]")
    parser.add_argument("--support", type=float, default=Thresholds.support)
    parser.add_argument("--refute", type=float, default=Thresholds.refute)
    parser.add_argument("--mixed", type=float, default=Thresholds.mixed)
    parser.add_argument("--veto", type=float, default=Thresholds.veto)
    parser.add_argument("--contrast", type=Path, default=CONTRAST)
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in args.claims.read_text().splitlines() if line.strip()]
    claims = list(dict.fromkeys(str(r["claim"]) for r in rows))[: args.limit]
    t = Thresholds(support=args.support, refute=args.refute, mixed=args.mixed, veto=args.veto)
    model = StanceModel(args.model_dir)
    items = [json.loads(line) for line in args.contrast.read_text().splitlines() if line.strip()]
    report = {
        "model_dir": str(args.model_dir or "shipped"),
        "claims": len(claims),
        "thresholds": dataclasses.asdict(t),
        "frames": probe(model, claims, t),
        "contrast": contrast(model, items, t),
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
