"""The gallery of known public figures, and how a face gets a name from it.

The operator imports labelled photos (`factbot faces import DIR`); each photo's face embedding
is kept with the person's name (`storage.faces`). A face in a post's image is named only when
its nearest gallery embedding is closer than `threshold` AND the nearest photo of any other
name is at least `margin` farther: a face halfway between two people gets no name. Faces
that match nobody stay anonymous; nothing here groups or numbers unknown faces, so factbot
never tells private people apart, let alone names them.

The threshold is calibrated, not dlib's LFW figure: `python -m bench.faces` measures false
accepts and rejects on the VMU tweet photos (see `DEFAULT_THRESHOLD`).

Gallery layout on disk (what `gallery_photos` reads):
    DIR/Barack Obama/1.jpg, DIR/Barack Obama/speech.png   a folder per person, any file names
    DIR/Angela_Merkel.jpg, DIR/Angela_Merkel_2.jpg        or files named after the person
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from pipeline.records.image import Face, SeenFace

# Calibrated with `python -m bench.faces` on the VMU photos: the largest distance at which no
# calibration negative was accepted (lowest 0.4536); edited copies of a face stay under 0.44.
DEFAULT_THRESHOLD = 0.45
DEFAULT_MARGIN = 0.06
EMBEDDING_SIZE = 128  # dlib's ResNet face embedding
PHOTO_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".webp", ".bmp", ".gif", ".heic", ".heif"})
_COPY_MARK = re.compile(r"(?:[\s_-]*\(?\d+\)?)+$")  # "Name_2", "Name (3)", "Name-01"


@dataclass(frozen=True)
class GalleryPhoto:
    """A labelled photo to import: who it shows and where it is."""

    name: str
    path: Path


@dataclass(frozen=True)
class FaceMatching:
    """When a face gets a gallery name."""

    threshold: float = DEFAULT_THRESHOLD  # largest embedding distance that can name a face
    margin: float = DEFAULT_MARGIN  # how much closer than the second-best name it must be


class GalleryIndex:
    """Gallery embeddings as one matrix, for nearest-name look-ups."""

    def __init__(self, entries: Sequence[tuple[str, Sequence[float]]]) -> None:
        self.names = [name for name, _ in entries]
        vectors = [list(embedding) for _, embedding in entries]
        self.matrix = (
            np.asarray(vectors, dtype=np.float32)
            if vectors
            else np.zeros((0, EMBEDDING_SIZE), dtype=np.float32)
        )

    def __len__(self) -> int:
        return len(self.names)

    def nearest(self, embedding: Sequence[float], *, limit: int = 2) -> list[tuple[str, float]]:
        """Return the nearest names with their smallest distance to embedding, nearest first."""
        if not self.names:
            return []
        query = np.asarray(embedding, dtype=np.float32)
        distances = np.linalg.norm(self.matrix - query, axis=1)
        best: dict[str, float] = {}
        for index in np.argsort(distances):
            name = self.names[int(index)]
            if name not in best:
                best[name] = float(distances[int(index)])
                if len(best) >= limit:
                    break
        return list(best.items())


class FaceGallery(Protocol):
    """Where the gallery's embeddings are kept (the store)."""

    def index(self) -> GalleryIndex:
        """Return the current gallery as an index (blocking; called in the CPU pool)."""
        ...


def name_face(face: Face, index: GalleryIndex | None, *, matching: FaceMatching) -> SeenFace:
    """Return face as the description keeps it: named only on a clear gallery match."""
    anonymous = SeenFace(box=face.box, score=face.score)
    if index is None or not len(index):
        return anonymous
    found = index.nearest(face.embedding, limit=2)
    name, distance = found[0]
    second = found[1][1] if len(found) > 1 else float("inf")
    if distance >= matching.threshold or second - distance < matching.margin:
        return anonymous
    return SeenFace(box=face.box, score=face.score, name=name, distance=round(distance, 4))


def person_name(stem: str) -> str:
    """Return the person a photo file is named after: "Angela_Merkel_2" -> "Angela Merkel"."""
    cleaned = _COPY_MARK.sub("", stem.replace("_", " "))
    return " ".join(cleaned.split())


def gallery_photos(directory: Path) -> list[GalleryPhoto]:
    """Return the labelled photos under directory (a folder per person, or Name.jpg files)."""
    photos: list[GalleryPhoto] = []
    for entry in sorted(directory.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            name = " ".join(entry.name.replace("_", " ").split())
            photos += [
                GalleryPhoto(name=name, path=path)
                for path in sorted(entry.rglob("*"))
                if path.is_file() and _is_photo(path)
            ]
        elif entry.is_file() and _is_photo(entry):
            name = person_name(entry.stem)
            if name:
                photos.append(GalleryPhoto(name=name, path=entry))
    return photos


def _is_photo(path: Path) -> bool:
    return path.suffix.lower() in PHOTO_SUFFIXES and not path.name.startswith(".")
