"""Near-duplicate robustness of the perceptual hashes (`python -m bench.image_dupes`).

Every VMU picture (../shared/data/multimodal/vmu/images, 410 files) is hashed into an index of
originals. Each picture is then edited (`bench.image_transforms`: resize to 50 %, JPEG quality
30, a 10 % crop, a caption bar, a screenshot frame, a horizontal flip), hashed again and looked
up: recall@1 counts the look-ups whose nearest entry within the match threshold is the original,
a byte-identical copy of it, or one of the corpus's own near-duplicates of it (an original within
the threshold of it); `recall_at_1_same_file` counts only the first two.

False matches: every pair of distinct originals (different bytes) that the threshold calls the
same. The corpus holds real near-duplicates too (one photo shared by several posts at another
size or crop); `--show` lists the matched pairs so they can be looked at. Goal: recall >= 0.95
on every edit but the flip, false-match rate <= 1 %.
"""

from __future__ import annotations

import argparse
import hashlib
import json
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


def load(path: Path) -> Image.Image:
    """Return the first frame of a picture file as RGB, EXIF orientation applied."""
    with Image.open(path) as opened:
        opened.seek(0)
        return ImageOps.exif_transpose(opened).convert("RGB")


def run(images: Path, limit: int | None, show: bool) -> dict[str, object]:
    """Return the benchmark's figures."""
    paths = sorted(p for p in images.rglob("*") if p.is_file())[:limit]
    digests = [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths]
    pictures = [load(p) for p in paths]
    started = time.perf_counter()
    hashes = [hash_picture(p) for p in pictures]
    hash_ms = (time.perf_counter() - started) * 1000 / len(pictures)
    index = HashIndex([(str(n), h) for n, h in enumerate(hashes)])
    n = len(paths)
    matrix = np.stack([index.distances(h) for h in hashes])
    distinct = np.array([[digests[i] != digests[j] for j in range(n)] for i in range(n)])
    upper = np.triu(np.ones((n, n), dtype=bool), 1) & distinct
    pairs = int(upper.sum())
    false = np.argwhere(upper & (matrix <= PHASH_DISTANCE))
    figures: dict[str, object] = {
        "images": n,
        "threshold_bits": PHASH_DISTANCE,
        "hash_ms_per_image": round(hash_ms, 1),
        "distinct_pairs": pairs,
        "false_matches": len(false),
        "false_match_rate": round(len(false) / pairs, 5) if pairs else 0.0,
    }
    recall: dict[str, float] = {}
    strict: dict[str, float] = {}
    for name, transform in TRANSFORMS.items():
        hits = exact = 0
        for i, picture in enumerate(pictures):
            found = index.nearest(hash_picture(transform(picture)), limit=1)
            if not found:
                continue
            top = int(found[0][0])
            exact += digests[top] == digests[i]
            # the corpus's own near-duplicates of the original count as finding it
            hits += digests[top] == digests[i] or bool(matrix[i, top] <= PHASH_DISTANCE)
        recall[name] = round(hits / n, 4)
        strict[name] = round(exact / n, 4)
    figures["recall_at_1"] = recall
    figures["recall_at_1_same_file"] = strict
    figures["goals_met"] = {
        "recall": all(v >= GOAL_RECALL for k, v in recall.items() if k != "flip"),
        "false_matches": figures["false_match_rate"] <= GOAL_FALSE,  # type: ignore[operator]
    }
    if show:
        figures["matched_pairs"] = [
            [
                str(paths[i].relative_to(images)),
                str(paths[j].relative_to(images)),
                int(matrix[i, j]),
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
