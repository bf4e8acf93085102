"""The pieces of `python -m bench.faces`: each edit's point mapping re-finds the face it moved."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.faces import EDITS, calibrate, distance, load, refind
from pipeline.image.faces import DlibFaces
from pipeline.image.gallery import DEFAULT_THRESHOLD

ONE_FACE = "BostonMarathon/reals/boston_real_27.jpg"  # one face, 224 px (see test_faces.py)


def test_every_edit_moves_the_face_where_the_bench_looks_for_it(shared_data: Path) -> None:
    path = shared_data / "multimodal" / "vmu" / "images" / ONE_FACE
    if not path.is_file():
        pytest.skip(f"{path} not found")
    reader = DlibFaces()
    picture = load(path)
    (face,) = reader.read(picture, max_faces=8)
    for name, edit in EDITS.items():
        edited, move = edit(picture)
        again = refind(face, reader.read(edited, max_faces=8), move)
        assert again is not None, name
        assert distance(face, again) < DEFAULT_THRESHOLD, name
        assert refind(face, [], move) is None


def test_the_threshold_is_the_largest_step_that_accepts_no_negative() -> None:
    assert calibrate([0.4536, 0.7, 0.9]) == 0.45
    assert calibrate([0.45, 0.8]) == 0.44
    assert calibrate([0.9]) == 0.6  # never above dlib's LFW figure
    assert calibrate([]) == 0.6
