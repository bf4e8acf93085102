"""Perceptual hashes on generated pictures and their edited copies."""

from __future__ import annotations

import dataclasses

import pytest
from PIL import Image

from bench.image_transforms import TRANSFORMS
from pipeline.image.hashing import HashIndex, compare, hash_picture, trim_borders
from tests.pipeline.image.images import photo


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


def bright_sky(seed: int) -> Image.Image:
    """Return a photo whose top third is a sky within a few grey levels of white."""
    picture = scene(seed)
    picture.paste((238, 240, 242), (0, 0, picture.width, picture.height // 3))
    return picture


def test_a_screenshot_of_a_picture_with_a_white_sky_matches_it() -> None:
    # the loose trim takes the sky for border and gives up; the tight one stops at its edge
    picture = bright_sky(5)
    shot = TRANSFORMS["screenshot_border"](picture)
    assert trim_borders(shot).height > picture.height * 1.2  # the post's header is left
    tight = trim_borders(shot, tolerance=3)
    assert abs(tight.height - picture.height) <= 2 and abs(tight.width - picture.width) <= 2
    match = compare(hash_picture(picture), hash_picture(shot))
    assert match.same and match.phash_distance <= 4, match


def test_hashes_made_before_the_tight_trim_still_index_with_new_ones() -> None:
    new = hash_picture(scene(4))
    old = dataclasses.replace(hash_picture(scene(5)), phash_tight="", windows=new.windows[:4])
    bare = dataclasses.replace(hash_picture(scene(6)), phash_tight="", windows=())
    index = HashIndex([("new", new), ("old", old), ("bare", bare)])
    assert index.nearest(hash_picture(TRANSFORMS["jpeg_q30"](scene(5))))[0][0] == "old"
    assert index.nearest(hash_picture(scene(6)))[0] == ("bare", 0)
    assert compare(old, hash_picture(scene(5))).same
