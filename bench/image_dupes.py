"""Near-duplicate robustness of the perceptual hashes (`python -m bench.image_dupes`).

Every VMU picture (../shared/data/multimodal/vmu/images, 410 files) is hashed into an index of
originals. Each picture is then edited (`bench.image_transforms`: resize to 50 %, JPEG quality
30, a 10 % crop, a caption bar, a screenshot frame, a horizontal flip), hashed again and looked
up: recall@1 counts the look-ups whose nearest entry within the match threshold is the original,
a byte-identical copy of it, or one of the corpus's own near-duplicates of it (an original within
the threshold of it); `recall_at_1_same_file` counts only the first two.

False matches: every pair of distinct originals (different bytes) that the threshold calls the
same. The corpus holds real near-duplicates too (one photo shared by several posts at another
size or crop); `--show` lists the matched pairs so they can be looked at.

Calibration: the pictures are split in two halves by a hash of their file name. The threshold
is chosen on the calibration half only (the smallest number of bits at which every edit but the
flip reaches the recall goal with at most 1 % false matches; failing that, the one with the best
worst recall) and the figures are reported for both halves at that threshold and at the
module's `PHASH_DISTANCE`; the held-out half's are the honest ones. Recalls carry a 95 % Wilson
interval. Goal: recall >= 0.95 on every edit but the flip, false-match rate <= 1 %.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps

from bench.image_transforms import TRANSFORMS
from pipeline.image.hashing import PHASH_DISTANCE, HashIndex, hash_picture

VMU = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "multimodal" / "vmu"
GOAL_RECALL = 0.95
GOAL_FALSE = 0.01
THRESHOLDS = range(6, 21)  # bits of 64 tried by the calibration
Z95 = 1.959964


def load(path: Path) -> Image.Image:
    """Return the first frame of a picture file as RGB, EXIF orientation applied."""
    with Image.open(path) as opened:
        opened.seek(0)
        return ImageOps.exif_transpose(opened).convert("RGB")


def wilson(hits: int, n: int) -> list[float]:
    """Return the 95 % Wilson score interval of a proportion hits / n."""
    if not n:
        return [0.0, 1.0]
    p = hits / n
    centre = (p + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / (1 + Z95**2 / n)
    return [round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)]


class Lookups:
    """Every edit's look-up distances, scored at any threshold for any subset of pictures."""

    def __init__(self, digests: list[str], matrix: np.ndarray) -> None:
        self.digests = digests
        self.matrix = matrix  # originals x originals pHash distances
        self.found: dict[str, list[tuple[int, int]]] = {}  # edit -> (nearest entry, distance)

    def add(self, name: str, distances: list[np.ndarray]) -> None:
        """Record an edit's distances from each edited picture to every original."""
        self.found[name] = [(int(np.argmin(d)), int(d.min())) for d in distances]

    def hits(self, name: str, members: list[int], threshold: int, *, strict: bool) -> int:
        """Return how many members' edited pictures find their original at threshold."""
        count = 0
        for i in members:
            top, gap = self.found[name][i]
            if gap > threshold:
                continue
            same = self.digests[top] == self.digests[i]
            count += same if strict else same or bool(self.matrix[i, top] <= threshold)
        return count

    def false_matches(
        self, members: list[int], threshold: int
    ) -> tuple[list[tuple[int, int]], int]:
        """Return the distinct-file pairs among members matched at threshold, and all pairs."""
        pairs: list[tuple[int, int]] = []
        total = 0
        for a, i in enumerate(members):
            for j in members[a + 1 :]:
                if self.digests[i] == self.digests[j]:
                    continue
                total += 1
                if self.matrix[i, j] <= threshold:
                    pairs.append((i, j))
        return pairs, total

    def score(self, members: list[int], threshold: int) -> dict[str, object]:
        """Return the recall of every edit and the false matches among members at threshold."""
        n = len(members)
        false, total = self.false_matches(members, threshold)
        recall: dict[str, dict[str, object]] = {}
        worst = 1.0
        for name in self.found:
            hits = self.hits(name, members, threshold, strict=False)
            recall[name] = {"recall": round(hits / n, 4), "ci95": wilson(hits, n)}
            worst = min(worst, hits / n) if name != "flip" else worst
        strict = {
            name: round(self.hits(name, members, threshold, strict=True) / n, 4)
            for name in self.found
        }
        rate = len(false) / total if total else 0.0
        return {
            "images": n,
            "threshold_bits": threshold,
            "recall_at_1": recall,
            "recall_at_1_same_file": strict,
            "distinct_pairs": total,
            "false_matches": len(false),
            "false_match_rate": round(rate, 5),
            "goals_met": {
                "recall": round(worst, 4) >= GOAL_RECALL,
                "false_matches": rate <= GOAL_FALSE,
            },
        }


def calibrate(lookups: Lookups, members: list[int]) -> int:
    """Return the threshold chosen on members: the smallest meeting both goals, else the one
    with the best worst recall (edits but the flip) within the false-match goal."""
    best, best_worst = PHASH_DISTANCE, -1.0
    for threshold in THRESHOLDS:
        false, total = lookups.false_matches(members, threshold)
        if total and len(false) / total > GOAL_FALSE:
            break
        worst = min(
            lookups.hits(name, members, threshold, strict=False) / len(members)
            for name in lookups.found
            if name != "flip"
        )
        if worst >= GOAL_RECALL:
            return threshold
        if worst > best_worst:
            best, best_worst = threshold, worst
    return best


def half_of(path: Path) -> int:
    """Return 0 (calibration) or 1 (held out) for a picture, from a hash of its name."""
    return hashlib.sha256(path.name.encode()).digest()[0] & 1


def run(images: Path, limit: int | None, show: bool) -> dict[str, object]:
    """Return the benchmark's figures."""
    paths = sorted(p for p in images.rglob("*") if p.is_file())[:limit]
    digests = [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths]
    pictures = [load(p) for p in paths]
    started = time.perf_counter()
    hashes = [hash_picture(p) for p in pictures]
    hash_ms = (time.perf_counter() - started) * 1000 / len(pictures)
    index = HashIndex([(str(n), h) for n, h in enumerate(hashes)])
    lookups = Lookups(digests, np.stack([index.distances(h) for h in hashes]))
    for name, transform in TRANSFORMS.items():
        lookups.add(name, [index.distances(hash_picture(transform(p))) for p in pictures])
    calibration = [i for i, p in enumerate(paths) if half_of(p) == 0]
    held_out = [i for i, p in enumerate(paths) if half_of(p) == 1]
    everyone = list(range(len(paths)))
    chosen = calibrate(lookups, calibration)
    figures: dict[str, object] = {
        "images": len(paths),
        "hash_ms_per_image": round(hash_ms, 1),
        "module_threshold_bits": PHASH_DISTANCE,
        "calibrated_threshold_bits": chosen,
        "calibration_half": lookups.score(calibration, chosen),
        "held_out_half": lookups.score(held_out, chosen),
        "all_images_at_module_threshold": lookups.score(everyone, PHASH_DISTANCE),
    }
    if show:
        false, _ = lookups.false_matches(everyone, PHASH_DISTANCE)
        figures["matched_pairs"] = [
            [
                str(paths[i].relative_to(images)),
                str(paths[j].relative_to(images)),
                int(lookups.matrix[i, j]),
            ]
            for i, j in false
        ]
    return figures


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark and print its figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--images", type=Path, default=VMU / "images")
    parser.add_argument("--limit", type=int, default=None, help="Only the first N pictures.")
    parser.add_argument("--show", action="store_true", help="List the falsely matched pairs.")
    args = parser.parse_args(argv)
    print(json.dumps(run(args.images, args.limit, args.show), indent=2))


if __name__ == "__main__":
    main()
