"""Face detection and the gallery threshold on real tweet photos (`python -m bench.faces`).

There are no labelled face photos offline, so the figures come from the VMU images
(../shared/data/multimodal/vmu/images, 410 real tweet photos) with labels made as follows:
- every face the detector finds in an original is one identity;
- positives: the same face after an edit a repost makes (resize to 50 %, JPEG quality 30, a
  10 % crop, a 5 degree turn), found again at the same place in the edited picture;
- negatives: two faces of one photo (surely two people), and faces of photos of two different
  news stories (VMU's folders: Boston Marathon, Hurricane Sandy, Sochi, ...), almost surely
  different people. Faces of two photos of one story are NOT used: the same people recur
  there (the Boston photos repeat the suspects' and Sunil Tripathi's faces in collages); they
  are counted apart ("same_event_accepted", an upper bound that includes true matches) and
  `--show` lists the pairs under the threshold to look at.
The photos are split by near-duplicate group (pHash) into a calibration half and a report
half, alternating over the groups that hold faces. The threshold is the largest distance (in
0.01 steps, at most dlib's LFW figure 0.6) at which no calibration negative is accepted; its
false accept and reject rates are reported on the other half, with an open-set test there: the
report half's faces as the gallery (one name each), their edited copies as probes (named
right, named wrong, not named), the calibration half's faces as strangers (a name given to a
stranger of another story is a false identification).

Figures: detection (images with a face, faces, re-detection after each edit), time per image
and per face, FAR/FRR at the chosen threshold, identification with the margin.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps

from pipeline.image.faces import DlibFaces
from pipeline.image.gallery import DEFAULT_MARGIN, FaceMatching, GalleryIndex, name_face
from pipeline.image.hashing import PHASH_DISTANCE, HashIndex, hash_picture
from pipeline.records.image import Face

VMU = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "multimodal" / "vmu"
Point = tuple[float, float]
Edit = Callable[[Image.Image], tuple[Image.Image, Callable[[Point], Point]]]


def _resize(picture: Image.Image) -> tuple[Image.Image, Callable[[Point], Point]]:
    size = (max(1, picture.width // 2), max(1, picture.height // 2))
    return picture.resize(size, Image.Resampling.LANCZOS), lambda p: (p[0] / 2, p[1] / 2)


def _jpeg(picture: Image.Image) -> tuple[Image.Image, Callable[[Point], Point]]:
    out = io.BytesIO()
    picture.save(out, "JPEG", quality=30)
    return Image.open(io.BytesIO(out.getvalue())).convert("RGB"), lambda p: p


def _crop(picture: Image.Image) -> tuple[Image.Image, Callable[[Point], Point]]:
    dx, dy = picture.width // 20, picture.height // 20
    cropped = picture.crop((dx, dy, picture.width - dx, picture.height - dy))
    return cropped, lambda p: (p[0] - dx, p[1] - dy)


def _turn(picture: Image.Image) -> tuple[Image.Image, Callable[[Point], Point]]:
    angle = 5.0
    turned = picture.rotate(angle, resample=Image.Resampling.BICUBIC, fillcolor=(128, 128, 128))
    cx, cy, a = picture.width / 2, picture.height / 2, math.radians(angle)

    def move(p: Point) -> Point:  # PIL turns counter-clockwise on screen (y points down)
        x, y = p[0] - cx, p[1] - cy
        return cx + x * math.cos(a) + y * math.sin(a), cy - x * math.sin(a) + y * math.cos(a)

    return turned, move


EDITS: dict[str, Edit] = {"resize_50": _resize, "jpeg_30": _jpeg, "crop_10": _crop, "turn_5": _turn}


@dataclass(frozen=True)
class Found:
    """A face found in an original photo."""

    image: int  # index of the photo
    group: int  # near-duplicate group of the photo
    face: Face


def load(path: Path) -> Image.Image:
    """Return the first frame of a picture file as RGB, EXIF orientation applied."""
    with Image.open(path) as opened:
        opened.seek(0)
        return ImageOps.exif_transpose(opened).convert("RGB")


def groups(pictures: Sequence[Image.Image]) -> list[int]:
    """Return a near-duplicate group number per picture (pHash within the match threshold)."""
    hashes = [hash_picture(p) for p in pictures]
    index = HashIndex([(str(n), h) for n, h in enumerate(hashes)])
    parent = list(range(len(pictures)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, h in enumerate(hashes):
        for j in np.flatnonzero(index.distances(h) <= PHASH_DISTANCE):
            parent[root(int(j))] = root(i)
    return [root(i) for i in range(len(pictures))]


def centre(face: Face) -> Point:
    """Return the centre of a face's box."""
    b = face.box
    return (b.left + b.right) / 2, (b.top + b.bottom) / 2


def refind(face: Face, edited: Sequence[Face], move: Callable[[Point], Point]) -> Face | None:
    """Return the face of the edited picture at the place the original face moved to."""
    x, y = move(centre(face))
    best = min(edited, key=lambda f: math.dist(centre(f), (x, y)), default=None)
    scale = math.dist(move((0.0, 0.0)), move((1.0, 0.0)))  # how the edit sized the picture
    tolerance = max(4.0, 0.5 * (face.box.right - face.box.left) * scale)
    if best is None or math.dist(centre(best), (x, y)) > tolerance:
        return None
    return best


def distance(a: Face, b: Face) -> float:
    """Return the Euclidean distance of two face embeddings."""
    return float(np.linalg.norm(np.asarray(a.embedding) - np.asarray(b.embedding)))


def rates(pos: Sequence[float], neg: Sequence[float], threshold: float) -> dict[str, float]:
    """Return the false accept and false reject rates at threshold."""
    return {
        "far": round(sum(d < threshold for d in neg) / len(neg), 5) if neg else 0.0,
        "frr": round(sum(d >= threshold for d in pos) / len(pos), 5) if pos else 0.0,
    }


def run(images: Path, limit: int | None, show: bool) -> dict[str, object]:
    """Return the benchmark's figures."""
    reader = DlibFaces()
    reader.warm_up()
    seen: set[str] = set()
    paths: list[Path] = []
    for path in sorted(p for p in images.rglob("*") if p.is_file())[:limit]:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest not in seen:  # byte-identical copies count once
            seen.add(digest)
            paths.append(path)
    pictures = [load(p) for p in paths]
    group = groups(pictures)
    found: list[Found] = []
    times: list[float] = []
    embed_ms: list[float] = []
    for n, picture in enumerate(pictures):
        started = time.perf_counter()
        faces = reader.read(picture, max_faces=8)
        times.append(time.perf_counter() - started)
        if faces:  # the same picture read without embedding: detection alone
            started = time.perf_counter()
            reader.read(picture, max_faces=0)
            detect = time.perf_counter() - started
            embed_ms.append(max(0.0, times[-1] - detect) * 1000 / len(faces))
        found += [Found(image=n, group=group[n], face=f) for f in faces]
    # Halves by near-duplicate group, alternating over the groups that hold faces (by file name),
    # so both halves get about as many faces and no photo is in both.
    face_groups = sorted({f.group for f in found}, key=lambda g: str(paths[g]))
    half = {g: 1 for g in set(group)} | {g: k % 2 for k, g in enumerate(face_groups)}
    positives: dict[int, list[float]] = {0: [], 1: []}
    probes: list[tuple[int, Face]] = []  # (index in found, edited face)
    redetected: dict[str, float] = {}
    for name, edit in EDITS.items():
        hits = 0
        for n, picture in enumerate(pictures):
            mine = [(k, f) for k, f in enumerate(found) if f.image == n]
            if not mine:
                continue
            edited, move = edit(picture)
            faces = reader.read(edited, max_faces=8)
            for k, f in mine:
                again = refind(f.face, faces, move)
                if again is None:
                    continue
                hits += 1
                positives[half[f.group]].append(distance(f.face, again))
                probes.append((k, again))
        redetected[name] = round(hits / len(found), 4) if found else 0.0
    event = [p.relative_to(images).parts[0] for p in paths]  # the VMU folder: one news story
    clean: dict[int, list[float]] = {0: [], 1: []}
    noisy: dict[int, list[float]] = {0: [], 1: []}
    under: list[tuple[float, int, int]] = []
    for i, a in enumerate(found):
        for j in range(i + 1, len(found)):
            b = found[j]
            if half[a.group] != half[b.group] or (a.group == b.group and a.image != b.image):
                continue  # across halves, or one photo twice (near-duplicates)
            d = distance(a.face, b.face)
            sure = a.image == b.image or event[a.image] != event[b.image]
            (clean if sure else noisy)[half[a.group]].append(d)
            under.append((d, i, j))
    threshold = calibrate(clean[0])
    figures: dict[str, object] = {
        "images": len(paths),
        "images_with_a_face": len({f.image for f in found}),
        "faces": len(found),
        "near_duplicate_groups": len(set(group)),
        "redetected_after_edit": redetected,
        "read_ms_per_image_p50": round(float(np.percentile(times, 50)) * 1000, 1),
        "read_ms_per_image_p95": round(float(np.percentile(times, 95)) * 1000, 1),
        "embed_ms_per_face": round(float(np.mean(embed_ms)), 1) if embed_ms else None,
        "threshold": threshold,
        "calibration": _half(positives[0], clean[0], noisy[0], threshold),
        "report": _half(positives[1], clean[1], noisy[1], threshold),
    }
    named = identify(found, probes, half, event, threshold)
    figures["identification"] = {k: v for k, v in named.items() if k != "named_strangers"}
    if show:
        strangers = named["named_strangers"]
        assert isinstance(strangers, list)
        figures["strangers_named_as"] = [
            [_file(paths, found, k, images), _file(paths, found, g, images), d]
            for k, g, d in strangers
        ]
        figures["pairs_under_threshold"] = [
            [_file(paths, found, i, images), _file(paths, found, j, images), round(d, 4)]
            for d, i, j in sorted(under)
            if d < threshold
        ]
    return figures


def _half(
    positives: Sequence[float], clean: Sequence[float], noisy: Sequence[float], threshold: float
) -> dict[str, object]:
    at = rates(positives, clean, threshold)
    return {
        "positives": len(positives),
        "negatives": len(clean),
        "same_event_pairs": len(noisy),
        "highest_positive": round(max(positives), 4) if positives else None,
        "lowest_negative": round(min(clean), 4) if clean else None,
        "far": at["far"],
        "frr": at["frr"],
        "same_event_accepted": rates([], noisy, threshold)["far"],
        "at_dlib_0.6": rates(positives, clean, 0.6),
    }


def _file(paths: Sequence[Path], found: Sequence[Found], k: int, root: Path) -> str:
    return str(paths[found[k].image].relative_to(root))


def calibrate(negatives: Sequence[float], *, ceiling: float = 0.6) -> float:
    """Return the largest threshold (0.01 steps, at most 0.6) that accepts no negative."""
    if not negatives:
        return ceiling
    return min(ceiling, math.floor(min(negatives) * 100 - 1e-9) / 100)


def identify(
    found: Sequence[Found],
    probes: Sequence[tuple[int, Face]],
    half: dict[int, int],
    event: Sequence[str],
    threshold: float,
) -> dict[str, object]:
    """Return open-set identification on the report half: gallery, edited probes, strangers."""
    gallery = [(str(k), f.face.embedding) for k, f in enumerate(found) if half[f.group] == 1]
    index = GalleryIndex(gallery)
    matching = FaceMatching(threshold=threshold, margin=DEFAULT_MARGIN)
    right = wrong = unnamed = 0
    for k, face in probes:
        if half[found[k].group] != 1:
            continue
        name = name_face(face, index, matching=matching).name
        right += name == str(k)
        wrong += name is not None and name != str(k)
        unnamed += name is None
    strangers = [k for k, f in enumerate(found) if half[f.group] == 0]
    named = [
        (k, int(seen.name), seen.distance)
        for k in strangers
        if (seen := name_face(found[k].face, index, matching=matching)).name is not None
    ]
    other_event = [n for n in named if event[found[n[0]].image] != event[found[n[1]].image]]
    return {
        "gallery_faces": len(gallery),
        "margin": DEFAULT_MARGIN,
        "probes": right + wrong + unnamed,
        "named_right": right,
        "named_wrong": wrong,
        "not_named": unnamed,
        "strangers": len(strangers),
        "strangers_named": len(named),
        "strangers_of_another_event_named": len(other_event),
        "named_strangers": named,
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark and print its figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--images", type=Path, default=VMU / "images")
    parser.add_argument("--limit", type=int, default=None, help="Only the first N pictures.")
    parser.add_argument(
        "--show",
        action="store_true",
        help="List negatives under the threshold and named strangers.",
    )
    args = parser.parse_args(argv)
    print(json.dumps(run(args.images, args.limit, args.show), indent=2))


if __name__ == "__main__":
    main()
