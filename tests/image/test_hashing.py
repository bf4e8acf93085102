"""Perceptual hashes on generated pictures and their edited copies."""

from __future__ import annotations

import pytest
from PIL import Image

from bench.image_transforms import TRANSFORMS
from pipeline.image.hashing import HashIndex, compare, hash_picture, trim_borders
from tests.image.images import photo


def scene(seed: int) -> Image.Image:
    return photo((480, 360), seed=seed)


@pytest.mark.parametrize(
    "edit", ["resize_50", "jpeg_q30", "crop_10", "caption_bar", "screenshot_border"]
)
def test_edited_copies_match_their_original(edit: str) -> None:
    original = hash_picture(scene(3))
    edited = hash_picture(TRANSFORMS[edit](scene(3)))
    assert compare(original, edited).same, compare(original, edited)


def test_distinct_pictures_do_not_match() -> None:
    hashes = [hash_picture(scene(seed)) for seed in range(1, 7)]
    for n, one in enumerate(hashes):
        for other in hashes[n + 1 :]:
            assert not compare(one, other).same


def test_trim_removes_a_caption_bar_and_keeps_the_picture() -> None:
    picture = scene(2)
    core = trim_borders(TRANSFORMS["caption_bar"](picture))
    assert abs(core.height - picture.height) <= picture.height * 0.08
    assert trim_borders(picture).size == picture.size


def test_index_finds_the_nearest_original() -> None:
    index = HashIndex([(f"p{seed}", hash_picture(scene(seed))) for seed in range(1, 6)])
    found = index.nearest(hash_picture(TRANSFORMS["jpeg_q30"](scene(4))))
    assert found[0][0] == "p4"
    assert HashIndex([]).nearest(hash_picture(scene(1))) == []


def test_crop_resistant_segments_are_optional() -> None:
    assert hash_picture(scene(1)).segments == ()
    with_segments = hash_picture(scene(1), segments=True)
    assert len(with_segments.segments) >= 1
    assert compare(with_segments, hash_picture(scene(1), segments=True)).segments >= 1
