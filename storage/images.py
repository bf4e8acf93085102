"""The local image index: images seen on pages, with their perceptual hashes, for provenance.

One row per image and page (the same photo on two pages is two appearances). The hashes are
kept as hex text; look-ups load every row's hashes once into a `HashIndex` (bit matrices) and
then only rows added since, so a search over tens of thousands of images is a few numpy
operations.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from sqlite_utils import Database

from pipeline.image.hashing import HashIndex
from pipeline.records.domain import utcnow
from pipeline.records.image import ImageHashes, IndexedImage
from storage.codec import dt_in, dt_out

_INSERT = (
    "INSERT OR IGNORE INTO image_index (image_id, image_url, page_url, publisher, published_at, "
    "caption, phash, phash_core, windows, phash_tight, created_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class ImageIndexRepo:
    """Keep images of pages and find earlier appearances of a picture."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._lock = threading.Lock()
        self._seen = 0  # highest rowid loaded into the hash index
        self._rows: list[int] = []
        self._entries: list[tuple[str, ImageHashes]] = []
        self._index = HashIndex([])

    def add(self, image: IndexedImage) -> bool:
        """Keep image; return False when that image was already kept for that page."""
        h = image.hashes
        row = (
            image.image_id,
            image.image_url,
            image.page_url,
            image.publisher,
            dt_out(image.published_at),
            image.caption,
            h.phash,
            h.phash_core,
            json.dumps(list(h.windows)),
            h.phash_tight,
            dt_out(utcnow()),
        )
        return bool(self.db.execute(_INSERT, row).rowcount)

    def count(self) -> int:
        """Return how many appearances are kept."""
        return int(self.db.execute("SELECT count(*) FROM image_index").fetchone()[0])

    def similar(self, hashes: ImageHashes, *, limit: int = 10) -> list[tuple[IndexedImage, int]]:
        """Return kept images that match hashes, with their distances, nearest first."""
        with self._lock:
            self._refresh()
            found = self._index.nearest(hashes, limit=limit)
        if not found:
            return []
        ids = [int(key) for key, _ in found]
        marks = ",".join("?" * len(ids))
        rows = {
            r["rowid"]: r
            for r in self.db.query(
                f"SELECT rowid, * FROM image_index WHERE rowid IN ({marks})",
                ids,
            )
        }
        return [(_image(rows[i]), distance) for i, (_, distance) in zip(ids, found, strict=True)]

    def _refresh(self) -> None:
        new = list(
            self.db.query(
                "SELECT rowid, phash, phash_core, windows, phash_tight FROM image_index "
                "WHERE rowid > ? "
                "ORDER BY rowid",
                [self._seen],
            )
        )
        if not new:
            return
        for r in new:
            self._entries.append((str(r["rowid"]), _hashes(r)))
        self._seen = int(new[-1]["rowid"])
        self._index = HashIndex(self._entries)


def _hashes(row: dict[str, Any]) -> ImageHashes:
    return ImageHashes(
        phash=row["phash"],
        phash_core=row["phash_core"],
        windows=tuple(json.loads(row["windows"])),
        phash_tight=row["phash_tight"] or "",  # '' for rows kept before m022
    )


def _image(row: dict[str, Any]) -> IndexedImage:
    return IndexedImage(
        image_id=row["image_id"],
        image_url=row["image_url"],
        page_url=row["page_url"],
        hashes=_hashes(row),
        publisher=row["publisher"],
        published_at=dt_in(row["published_at"]),
        caption=row["caption"],
    )
