"""Perceptual hashes, to find the same picture again after it was resized, recompressed,
cropped, captioned or screenshotted.

- pHash (imagehash's 64-bit DCT hash) of the whole picture and of its "core": the picture with
  flat borders and added bars (a caption strip, a screenshot's frame) trimmed off first.
  Resizing and recompression barely move it; a frame or a caption bar moves the whole-picture
  hash a lot, and the core hash undoes that.
- the core is trimmed twice: with a loose border tolerance (a recompressed screenshot's border
  is noisy) and a tight one. A picture whose own edge is nearly the border's colour (a white sky
  in a white frame) reads as border under the loose one, so the loose trim runs into the picture
  and gives up; the tight one stops at the picture's edge (`python -m bench.image_dupes`:
  screenshot-frame recall 0.937 -> 0.976 with it).
- crop tolerance by windows: pHashes of ten crops of the core (90 % windows at nine offsets:
  centre, sides and corners; and a centred 80 % one). A picture cropped by about 10 % is close
  to one of the original's windows, and the original to one of the crop's. They cost ~10 ms.
- optionally imagehash's crop-resistant hash (segmentation into regions, one hash each), which
  tolerates heavier crops but takes ~0.3 s a picture in pure Python: off by default.

Two pictures are the same when a whole/core pHash of one is within `PHASH_DISTANCE` bits of any
pHash of the other, or when at least `MIN_SEGMENTS` of their region hashes match within
`SEGMENT_DISTANCE` bits. The thresholds come from `python -m bench.image_dupes` on the 410 VMU
pictures (recall per transformation against false matches between distinct pictures).

Failure policy: never raises on a decoded picture.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import imagehash
import numpy as np
from PIL import Image, ImageOps

from pipeline.records.image import ImageHashes, LoadedImage
from pipeline.util.cpu import CpuPool, run_cpu

log = logging.getLogger(__name__)

PHASH_DISTANCE = 12  # bits of 64
SEGMENT_DISTANCE = 8
MIN_SEGMENTS = 2
# A border row or column has this share of its pixels within TOLERANCE of the edge colour (a
# bar's text covers less than half of a row); its first row must be flat.
FLAT_SHARE = 0.5
TEXT_LINE = 0.06  # the tallest run of text rows in a border, as a share of the side
TOLERANCE = 28
TIGHT_TOLERANCE = 3  # the second trim: a border drawn in one exact colour (PNG, good JPEG)
MAX_TRIM = 0.35  # never trim more than this share of a side's length
WINDOW_KEEP = 0.9  # share of each side the crop windows keep
SEGMENT_LIMIT = 12  # largest regions kept by the crop-resistant hash
WINDOWS = 10  # crop windows per picture (`_windows`)
_WORK_SIDE = 512  # pictures are hashed at this size at most: the hashes are low-frequency


@dataclass(frozen=True)
class Match:
    """How close two pictures' hashes are."""

    same: bool
    phash_distance: int  # the smallest distance over whole/core pairs
    segments: int  # region hashes that matched


def hash_picture(picture: Image.Image, *, segments: bool = False) -> ImageHashes:
    """Return the perceptual hashes of picture (blocking).

    `segments` adds the crop-resistant region hashes (about 0.3 s a picture, pure Python).
    """
    small = picture.copy()
    small.thumbnail((_WORK_SIDE, _WORK_SIDE), Image.Resampling.LANCZOS)
    core = trim_borders(small)
    tight = trim_borders(small, tolerance=TIGHT_TOLERANCE)
    regions: tuple[str, ...] = ()
    if segments:
        found = imagehash.crop_resistant_hash(
            small, hash_func=imagehash.phash, limit_segments=SEGMENT_LIMIT, min_segment_size=200
        )
        regions = tuple(str(h) for h in found.segment_hashes)
    return ImageHashes(
        phash=str(imagehash.phash(small)),
        phash_core=str(imagehash.phash(core)),
        windows=tuple(str(imagehash.phash(core.crop(box))) for box in _windows(core.size)),
        segments=regions,
        phash_tight=str(imagehash.phash(tight)),
    )


def _windows(size: tuple[int, int]) -> list[tuple[int, int, int, int]]:
    """Return the crop boxes hashed for crop tolerance: 90 % windows on a 3 x 3 grid of
    offsets (centre, sides, corners) and a centred 80 % one."""
    width, height = size
    boxes = []
    kw, kh = round(width * WINDOW_KEEP), round(height * WINDOW_KEEP)
    for fx in (0.0, 0.5, 1.0):
        for fy in (0.0, 0.5, 1.0):
            x, y = round((width - kw) * fx), round((height - kh) * fy)
            boxes.append((x, y, x + kw, y + kh))
    dx, dy = round(width * 0.1), round(height * 0.1)
    boxes.append((dx, dy, width - dx, height - dy))
    return boxes


def trim_borders(picture: Image.Image, *, tolerance: int = TOLERANCE) -> Image.Image:
    """Return picture without the flat borders and bars along its edges.

    `tolerance` is how far (of 255 grey levels) a border pixel may be from the edge colour.
    """
    grey = np.asarray(ImageOps.grayscale(picture), dtype=np.int16)
    height, width = grey.shape
    if height < 16 or width < 16:
        return picture
    top = _flat_run(grey, height, tolerance)
    bottom = _flat_run(grey[::-1], height, tolerance)
    left = _flat_run(grey.T, width, tolerance)
    right = _flat_run(grey.T[::-1], width, tolerance)
    box = (left, top, width - right, height - bottom)
    if box[2] - box[0] < width * 0.3 or box[3] - box[1] < height * 0.3:
        return picture
    return picture.crop(box) if box != (0, 0, width, height) else picture


def _flat_run(rows: np.ndarray, length: int, tolerance: int) -> int:
    """Return how many leading rows are border: rows mostly of the first row's colour (a bar
    with its text, a frame with its avatar and counts), up to the first run of picture rows."""
    limit = int(length * MAX_TRIM)
    head = rows[:limit]
    if not head.size or np.ptp(head[0]) > 2 * tolerance:
        return 0  # the first row is not flat: no border on this side
    edge = int(np.median(head[0]))
    flat = (np.abs(head - edge) <= tolerance).mean(axis=1) >= FLAT_SHARE
    # The border ends where the picture starts: the first run of rows that are not flat and
    # longer than a line of text in a bar.
    need = max(3, round(length * TEXT_LINE))
    run = 0
    for n, is_flat in enumerate(flat):
        run = 0 if is_flat else run + 1
        if run >= need:
            return n - need + 1
    # Flat as far as a border may go: a dark or plain picture, not a border.
    return 0


def compare(one: ImageHashes, other: ImageHashes) -> Match:
    """Return whether two pictures are the same by their hashes, and how close they are."""
    distance = int(_distances(_bits(whole(one)), _bits(variants(other))).min())
    distance = min(distance, int(_distances(_bits(variants(one)), _bits(whole(other))).min()))
    segments = matching_segments(one, other)
    return Match(
        same=distance <= PHASH_DISTANCE or segments >= MIN_SEGMENTS,
        phash_distance=distance,
        segments=segments,
    )


def whole(hashes: ImageHashes) -> tuple[str, ...]:
    """Return the hashes of the whole picture: as given and with its borders trimmed (twice).

    Hashes made before the tight trim existed repeat the core in its place, so that every
    picture has as many whole hashes (a repeated hash changes no distance).
    """
    return (hashes.phash, hashes.phash_core, hashes.phash_tight or hashes.phash_core)


def variants(hashes: ImageHashes) -> tuple[str, ...]:
    """Return every pHash of a picture: whole, trimmed and cropped windows."""
    return (*whole(hashes), *_padded(hashes))


def _padded(hashes: ImageHashes) -> tuple[str, ...]:
    """Return the crop windows as exactly WINDOWS hashes, so that every picture's bit matrix
    has one shape (a short or missing list is filled with its last hash or the core's)."""
    windows = hashes.windows or (hashes.phash_core,)
    return (windows + (windows[-1],) * WINDOWS)[:WINDOWS]


def matching_segments(one: ImageHashes, other: ImageHashes) -> int:
    """Return how many of one's region hashes are within SEGMENT_DISTANCE of one of other's."""
    if not one.segments or not other.segments:
        return 0
    distances = _distances(_bits(one.segments), _bits(other.segments))
    return int((distances.min(axis=1) <= SEGMENT_DISTANCE).sum())


def _distances(mine: np.ndarray, theirs: np.ndarray) -> np.ndarray:
    """Return the Hamming distances between every row of mine and every row of theirs."""
    distances: np.ndarray = (mine[:, None, :] != theirs[None, :, :]).sum(axis=2)
    return distances


def _bits(hashes: tuple[str, ...]) -> np.ndarray:
    """Return hex hashes as rows of bits."""
    return np.array([imagehash.hex_to_hash(h).hash.flatten() for h in hashes], dtype=bool)


async def hash_image(image: LoadedImage, *, cpu: CpuPool | None) -> ImageHashes:
    """Return the perceptual hashes of a decoded image, computed off the event loop."""
    return await run_cpu(cpu, hash_picture, image.image)


class HashIndex:
    """Pictures' hashes in bit matrices, for nearest-picture look-ups without a Python loop."""

    def __init__(self, entries: list[tuple[str, ImageHashes]]) -> None:
        self.keys = [key for key, _ in entries]
        self._whole = np.stack([_bits(whole(h)) for _, h in entries]) if entries else None
        self._variants = np.stack([_bits(variants(h)) for _, h in entries]) if entries else None

    def __len__(self) -> int:
        return len(self.keys)

    def distances(self, hashes: ImageHashes) -> np.ndarray:
        """Return the pHash distance (as `compare` measures it) from hashes to every entry."""
        if self._whole is None or self._variants is None:
            return np.zeros(0, dtype=np.int64)
        mine_whole, mine_variants = _bits(whole(hashes)), _bits(variants(hashes))
        # entries x mine x theirs
        one = (mine_whole[None, :, None, :] != self._variants[:, None, :, :]).sum(axis=3)
        two = (mine_variants[None, :, None, :] != self._whole[:, None, :, :]).sum(axis=3)
        nearest: np.ndarray = np.minimum(one.min(axis=(1, 2)), two.min(axis=(1, 2)))
        return nearest

    def nearest(self, hashes: ImageHashes, *, limit: int = 5) -> list[tuple[str, int]]:
        """Return up to limit (key, distance) pairs within PHASH_DISTANCE, nearest first."""
        found = self.distances(hashes)
        order = np.argsort(found, kind="stable")[:limit]
        return [(self.keys[i], int(found[i])) for i in order if found[i] <= PHASH_DISTANCE]
