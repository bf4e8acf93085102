"""The VMU posts through the image path (`python -m bench.image_posts`).

Each of the 376 posts of ../shared/data/multimodal/vmu/posts_sample.json has its pictures (410
files) decoded and read by the stage's readers (OCR with Tesseract, perceptual hashes, EXIF and
C2PA) exactly as a check reads them, one image at a time so the time per image is its own.
Printed: failures (no crash is the goal), per-image time p50/p95, peak resident memory, what was
found (images with text, with EXIF, with content credentials) and reuse clusters: the same
picture (within the hash threshold) carried by several posts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pipeline.errors import ImageError
from pipeline.image.hashing import PHASH_DISTANCE, HashIndex
from pipeline.image.intake import decode_image
from pipeline.image.stage import ImageDeps, read_one
from pipeline.records.image import ImageDescription, ImageOrigin, ImageSource

VMU = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "multimodal" / "vmu"


async def run(limit: int | None) -> dict[str, object]:
    """Return the benchmark's figures."""
    posts = json.loads((VMU / "posts_sample.json").read_text(encoding="utf-8"))[:limit]
    deps = ImageDeps(fetcher=None)
    seconds: list[float] = []
    failures: list[str] = []
    read: list[tuple[str, ImageDescription]] = []  # (post id, description)
    for post in posts:
        for relative in post["image_paths"]:
            path = VMU / relative
            started = time.perf_counter()
            try:
                image = decode_image(
                    path.read_bytes(),
                    source=ImageSource(relative, ImageOrigin.INLINE),
                    url=relative,
                )
                description = await read_one(image, deps=deps)
            except ImageError as exc:
                failures.append(f"{relative}: {exc.reason}")
                continue
            seconds.append(time.perf_counter() - started)
            read.append((post["post_id"], description))
    index = HashIndex([(str(n), d.hashes) for n, (_, d) in enumerate(read)])
    parent = list(range(len(read)))

    def root(n: int) -> int:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for n, (_, description) in enumerate(read):
        for m in np.flatnonzero(index.distances(description.hashes) <= PHASH_DISTANCE):
            parent[root(int(m))] = root(n)
    clusters: dict[int, set[str]] = {}
    for n, (post_id, _) in enumerate(read):
        clusters.setdefault(root(n), set()).add(post_id)
    shared = sorted((len(p) for p in clusters.values() if len(p) > 1), reverse=True)
    with_text = [d for _, d in read if d.ocr is not None and len(d.ocr.text.strip()) >= 10]
    return {
        "posts": len(posts),
        "images_read": len(read),
        "failures": failures,
        "seconds_per_image_p50": round(float(np.percentile(seconds, 50)), 3),
        "seconds_per_image_p95": round(float(np.percentile(seconds, 95)), 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "images_with_text": len(with_text),
        "text_examples": [" ".join(d.ocr.text.split())[:100] for d in with_text[:5] if d.ocr],
        "images_with_exif": sum(d.metadata.exif is not None for _, d in read),
        "exif_capture_dates": sum(
            d.metadata.exif is not None and d.metadata.exif.captured_at is not None for _, d in read
        ),
        "images_with_content_credentials": sum(d.metadata.credentials is not None for _, d in read),
        "animations": sum(d.frames > 1 for _, d in read),
        "reuse_clusters": len(shared),
        "posts_in_reuse_clusters": sum(shared),
        "largest_clusters": shared[:5],
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark and print its figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="Only the first N posts.")
    args = parser.parse_args(argv)
    print(json.dumps(asyncio.run(run(args.limit)), indent=2))


if __name__ == "__main__":
    main()
