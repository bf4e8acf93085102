"""The face gallery: embeddings of known public figures the operator imported, by name.

One row per photo (several photos of a person make the match sturdier), keyed by name and the
file's sha256, so importing the same folder twice adds nothing. The embeddings are kept as
little-endian float32 blobs (512 bytes a face). Look-ups build one `GalleryIndex` and reuse it
until a photo is added or removed (the table's row count and highest id say so).

Only the operator's gallery is stored here: faces seen in posts are never kept.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from sqlite_utils import Database

from pipeline.image.gallery import GalleryIndex
from pipeline.records.image import Face
from pipeline.util.clock import SYSTEM, Clock
from storage.codec import dt_in, dt_out

_INSERT = (
    "INSERT OR IGNORE INTO face_gallery (name, source_file, file_sha256, box, embedding, "
    "imported_at) VALUES (?, ?, ?, ?, ?, ?)"
)


@dataclass(frozen=True)
class GalleryPerson:
    """A name in the gallery, how many photos it has and when the last was imported."""

    name: str
    photos: int
    imported_at: datetime | None


class FaceGalleryRepo:
    """Keep the gallery's photos and hand out its index."""

    def __init__(self, db: Database, *, clock: Clock = SYSTEM) -> None:
        self.db = db
        self.clock = clock
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._index = GalleryIndex([])

    def add(self, name: str, face: Face, *, source_file: str, file_sha256: str) -> bool:
        """Keep a photo's face under name; return False when that photo was already kept."""
        box = face.box
        row = (
            name,
            source_file,
            file_sha256,
            json.dumps([box.left, box.top, box.right, box.bottom]),
            np.asarray(face.embedding, dtype="<f4").tobytes(),
            dt_out(self.clock.now()),
        )
        return bool(self.db.execute(_INSERT, row).rowcount)

    def has(self, name: str, file_sha256: str) -> bool:
        """Return whether that photo is already kept under name."""
        found = self.db.execute(
            "SELECT 1 FROM face_gallery WHERE name = ? AND file_sha256 = ?", [name, file_sha256]
        ).fetchone()
        return found is not None

    def count(self) -> int:
        """Return how many photos the gallery holds."""
        return int(self.db.execute("SELECT count(*) FROM face_gallery").fetchone()[0])

    def people(self) -> list[GalleryPerson]:
        """Return every name in the gallery, alphabetically."""
        rows = self.db.execute(
            "SELECT name, count(*), max(imported_at) FROM face_gallery GROUP BY name "
            "ORDER BY name COLLATE NOCASE"
        ).fetchall()
        return [GalleryPerson(name=n, photos=int(c), imported_at=dt_in(at)) for n, c, at in rows]

    def remove(self, name: str) -> int:
        """Forget every photo of name; return how many were removed."""
        return int(self.db.execute("DELETE FROM face_gallery WHERE name = ?", [name]).rowcount)

    def index(self) -> GalleryIndex:
        """Return the gallery as an index, rebuilt only when it changed."""
        with self._lock:
            count, top = self.db.execute(
                "SELECT count(*), coalesce(max(id), 0) FROM face_gallery"
            ).fetchone()
            stamp = (int(count), int(top))
            if stamp != self._stamp:
                rows = self.db.execute("SELECT name, embedding FROM face_gallery ORDER BY id")
                entries = [(n, np.frombuffer(blob, dtype="<f4").tolist()) for n, blob in rows]
                self._index = GalleryIndex(entries)
                self._stamp = stamp
            return self._index
