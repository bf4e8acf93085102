"""The image index in real SQLite, and provenance over it."""

from __future__ import annotations

from datetime import UTC, datetime

from bench.image_transforms import caption_bar, jpeg_30
from pipeline.image.describe import describe
from pipeline.image.hashing import hash_picture
from pipeline.image.intake import decode_image
from pipeline.image.provenance import appearances, older_than
from pipeline.records.image import ImageMetadata, ImageOrigin, ImageSource, IndexedImage
from storage import Store
from tests.pipeline.image.images import encode, photo


def indexed(seed: int, page: str, when: datetime | None) -> IndexedImage:
    return IndexedImage(
        image_id=f"sha-{seed}-{page}",
        image_url=f"https://news.example.org/{seed}.jpg",
        page_url=page,
        hashes=hash_picture(photo((400, 300), seed=seed)),
        publisher="news.example.org",
        published_at=when,
        caption=f"Storm over the coast, picture {seed}",
    )


def test_earliest_appearance_of_an_edited_copy(store: Store) -> None:
    old = indexed(5, "https://news.example.org/2012/storm", datetime(2012, 10, 29, tzinfo=UTC))
    assert store.images.add(old)
    assert not store.images.add(old)  # same image, same page: kept once
    store.images.add(indexed(5, "https://blog.example.net/copy", datetime(2020, 1, 2, tzinfo=UTC)))
    store.images.add(indexed(5, "https://undated.example.com/x", None))
    store.images.add(indexed(9, "https://news.example.org/other", datetime(2019, 1, 1, tzinfo=UTC)))
    assert store.images.count() == 4

    edited = caption_bar(jpeg_30(photo((400, 300), seed=5)))
    data = encode(edited, "JPEG")
    image = decode_image(data, source=ImageSource("post", ImageOrigin.ATTACHMENT), url="post")
    description = describe(
        image, hashes=hash_picture(image.image), ocr=None, metadata=ImageMetadata(), caption=None
    )
    found = appearances(description, store.images)
    assert [a.indexed.page_url for a in found] == [
        "https://news.example.org/2012/storm",
        "https://blog.example.net/copy",
        "https://undated.example.com/x",
    ]
    assert found[0].indexed.caption == "Storm over the coast, picture 5"
    earliest = older_than(found, datetime(2024, 9, 27, tzinfo=UTC))
    assert earliest is not None and earliest.indexed.published_at == datetime(
        2012, 10, 29, tzinfo=UTC
    )
    assert older_than(found, datetime(2012, 10, 30, tzinfo=UTC)) is None  # within the margin
    assert older_than(found, None) is None


def test_new_rows_are_seen_by_a_loaded_index(store: Store) -> None:
    assert store.images.similar(hash_picture(photo((400, 300), seed=3))) == []
    store.images.add(indexed(3, "https://a.example/p", None))
    ((hit, distance),) = store.images.similar(hash_picture(photo((400, 300), seed=3)))
    assert hit.page_url == "https://a.example/p" and distance == 0


def test_every_hash_is_kept_and_read_back(store: Store) -> None:
    kept = indexed(7, "https://news.example.org/2015/flood", datetime(2015, 5, 1, tzinfo=UTC))
    assert kept.hashes.phash_tight  # the tight-trim hash (screenshot frames around white edges)
    store.images.add(kept)
    [(found, distance)] = store.images.similar(kept.hashes, limit=1)
    assert distance == 0
    assert found.hashes == kept.hashes
