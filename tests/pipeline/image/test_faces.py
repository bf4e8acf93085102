"""Faces: real dlib on real tweet photos (VMU), the gallery in a real SQLite store, the CLI.

The photos were picked by running the detector over the 410 VMU images once (HOG, upsample 1):
boston_fake_11.jpg shows one clear face (score 2.43, 156 px), boston_real_27.jpg one (1.81,
224 px), columbianChemicals_fake_01.jpg one (1.57, 130 px), boston_real_09.jpg two (3.22 and
1.47), boston_real_01.jpg none.
"""

from __future__ import annotations

import base64
import io
import logging
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from PIL import Image

from bots.cli.main import main
from pipeline.image.faces import DlibFaces, FaceDeps, read_faces
from pipeline.image.gallery import FaceMatching, GalleryIndex, gallery_photos, name_face
from pipeline.image.intake import decode_image
from pipeline.image.stage import ImageDeps, read_images
from pipeline.records.domain import Post
from pipeline.records.image import Face, FaceBox, ImageOrigin, ImageSource, LoadedImage
from storage import Store

ONE_FACE = "BostonMarathon/fakes/boston_fake_11.jpg"
OTHER_FACE = "BostonMarathon/reals/boston_real_27.jpg"
THIRD_FACE = "Columbian Chemicals/fakes/columbianChemicals_fake_01.jpg"
TWO_FACES = "BostonMarathon/reals/boston_real_09.jpg"
NO_FACE = "BostonMarathon/reals/boston_real_01.jpg"


@pytest.fixture(scope="module")
def reader() -> DlibFaces:
    faces = DlibFaces()
    faces.warm_up()
    return faces


@pytest.fixture
def vmu(shared_data: Path) -> Path:
    folder = shared_data / "multimodal" / "vmu" / "images"
    if not folder.is_dir():
        pytest.skip(f"VMU images not found at {folder}")
    return folder


def load(data: bytes, name: str = "inline") -> LoadedImage:
    return decode_image(data, source=ImageSource(ref=name, origin=ImageOrigin.INLINE), url=name)


def transformed(path: Path) -> bytes:
    """The same photo as a repost makes it: cropped, turned a little, smaller, recompressed."""
    picture = Image.open(path).convert("RGB")
    w, h = picture.size
    picture = picture.crop((w // 20, h // 20, w - w // 20, h - h // 20))
    picture = picture.rotate(4, resample=Image.Resampling.BICUBIC, fillcolor=(255, 255, 255))
    picture = picture.resize((round(picture.width * 0.8), round(picture.height * 0.8)))
    out = io.BytesIO()
    picture.save(out, "JPEG", quality=40)
    return out.getvalue()


def test_faces_are_found_with_boxes_scores_and_embeddings(reader: DlibFaces, vmu: Path) -> None:
    image = load((vmu / TWO_FACES).read_bytes())
    faces = reader.read(image.image, max_faces=8)
    assert len(faces) == 2
    assert faces[0].score >= faces[1].score > 0
    for face in faces:
        assert len(face.embedding) == 128
        assert 0 <= face.box.left < face.box.right <= image.width
        assert 0 <= face.box.top < face.box.bottom <= image.height
    assert len(reader.read(image.image, max_faces=1)) == 1  # the bound holds
    assert reader.read(load((vmu / NO_FACE).read_bytes()).image, max_faces=8) == ()


def test_boxes_are_in_the_pictures_own_pixels_when_detection_scales_it(vmu: Path) -> None:
    small = DlibFaces(detect_side=256)
    big = Image.open(vmu / OTHER_FACE).convert("RGB")
    big = big.resize((big.width * 2, big.height * 2))
    faces = small.read(big, max_faces=8)
    assert len(faces) == 1
    full = DlibFaces().read(big, max_faces=8)
    assert len(full) == 1
    # The same face, located in the enlarged picture's coordinates both times.
    assert abs(faces[0].box.left - full[0].box.left) < big.width * 0.08
    assert faces[0].box.right > big.width * 0.25


@pytest.fixture
def run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("FACTBOT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)

    return invoke


def make_gallery(vmu: Path, folder: Path) -> Path:
    (folder / "Person A").mkdir(parents=True)
    shutil.copy(vmu / ONE_FACE, folder / "Person A" / "portrait.jpg")
    shutil.copy(vmu / OTHER_FACE, folder / "Person_B_2.jpg")
    (folder / "Person C.jpg").write_bytes((vmu / THIRD_FACE).read_bytes()[:900])  # truncated
    shutil.copy(vmu / NO_FACE, folder / "Person D.jpg")
    (folder / "notes.txt").write_text("not a photo")
    return folder


def test_import_list_remove_and_matching(  # type: ignore[no-untyped-def]
    run, vmu: Path, tmp_path: Path, reader: DlibFaces
) -> None:
    gallery = make_gallery(vmu, tmp_path / "gallery")
    assert sorted((p.name, p.path.name) for p in gallery_photos(gallery)) == [
        ("Person A", "portrait.jpg"),
        ("Person B", "Person_B_2.jpg"),
        ("Person C", "Person C.jpg"),
        ("Person D", "Person D.jpg"),
    ]
    first = run("faces", "import", str(gallery))
    assert first.exit_code == 0, first.output
    assert "2 photos added, 0 already in the gallery, 2 skipped; 2 people" in first.output
    assert "Person C.jpg: the image is truncated or corrupt" in first.output
    assert "Person D.jpg: no face was found in the photo" in first.output
    again = run("faces", "import", str(gallery))
    assert "0 photos added, 2 already in the gallery, 2 skipped" in again.output
    listed = run("faces", "list")
    assert "Person A" in listed.output and "Person B" in listed.output
    assert "2 people, 2 photos" in listed.output

    with Store.open(tmp_path / "data" / "factbot.db") as store:
        deps = FaceDeps(reader=reader, gallery=store.faces)
        copy = load(transformed(vmu / ONE_FACE), "repost.jpg")
        (seen,) = run_faces(copy, deps)
        assert seen.name == "Person A" and seen.distance is not None
        assert seen.distance < FaceMatching().threshold
        (stranger,) = run_faces(load((vmu / THIRD_FACE).read_bytes()), deps)
        assert stranger.name is None and stranger.distance is None

    removed = run("faces", "remove", "Person A")
    assert removed.exit_code == 0 and "removed Person A: 1 photos" in removed.output
    assert run("faces", "remove", "Person A").exit_code == 1
    with Store.open(tmp_path / "data" / "factbot.db") as store:
        deps = FaceDeps(reader=reader, gallery=store.faces)
        (unnamed,) = run_faces(load(transformed(vmu / ONE_FACE)), deps)
        assert unnamed.name is None


def run_faces(image: LoadedImage, deps: FaceDeps) -> tuple:  # type: ignore[type-arg]
    import asyncio

    return asyncio.run(read_faces(image, deps=deps, cpu=None))


def test_an_empty_folder_is_an_error(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(main, ["faces", "import", str(tmp_path / "empty")])
    assert result.exit_code == 1 and "no usable photo" in result.output


async def test_the_stage_names_a_gallery_face_in_the_description(
    vmu: Path, store: Store, reader: DlibFaces
) -> None:
    gallery_image = load((vmu / ONE_FACE).read_bytes())
    (face,) = reader.read(gallery_image.image, max_faces=1)
    store.faces.add("Person A", face, source_file="a.jpg", file_sha256=gallery_image.id)
    uri = "data:image/jpeg;base64," + base64.b64encode(transformed(vmu / ONE_FACE)).decode()
    stranger = "data:image/jpeg;base64," + base64.b64encode((vmu / TWO_FACES).read_bytes()).decode()
    post = Post(id="p", platform="test", platform_id="p", text="who?", image_refs=(uri, stranger))
    deps = ImageDeps(fetcher=None, ocr=None, faces=FaceDeps(reader=reader, gallery=store.faces))
    report = await read_images(post, deps=deps)
    named, others = report.descriptions
    assert [f.name for f in named.faces] == ["Person A"]
    assert "Recognised people (faces matching the operator's gallery" in named.text
    assert "Person A" in named.text and named.terms[0] == "Person A"
    assert [f.name for f in others.faces] == [None, None]
    assert "2 faces in it match no known public figure." in others.text
    assert "Person A" not in others.text and report.terms == ("Person A",)


async def test_a_failing_face_reader_leaves_faces_empty_and_is_logged(
    vmu: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    broken = DlibFaces(models=tmp_path)  # no model files there
    uri = "data:image/jpeg;base64," + base64.b64encode((vmu / ONE_FACE).read_bytes()).decode()
    post = Post(id="p", platform="test", platform_id="p", text="x", image_refs=(uri,))
    deps = ImageDeps(fetcher=None, ocr=None, faces=FaceDeps(reader=broken))
    with caplog.at_level(logging.WARNING, logger="pipeline.image.faces"):
        report = await read_images(post, deps=deps)
    (description,) = report.descriptions
    assert description.faces == () and not report.failures
    assert any("face reading failed" in r.message for r in caplog.records)


def face(*values: float) -> Face:
    return Face(box=FaceBox(0, 0, 10, 10), score=1.0, embedding=(*values, *[0.0] * 126))


def test_a_name_needs_the_threshold_and_a_margin_over_the_second_name() -> None:
    index = GalleryIndex([("A", face(0.0, 0.0).embedding), ("B", face(0.5, 0.0).embedding)])
    matching = FaceMatching(threshold=0.4, margin=0.1)
    assert name_face(face(0.1, 0.0), index, matching=matching).name == "A"  # 0.1 vs 0.4
    assert name_face(face(0.24, 0.0), index, matching=matching).name is None  # 0.24 vs 0.26
    assert name_face(face(0.0, 0.45), index, matching=matching).name is None  # over threshold
    assert name_face(face(0.1, 0.0), GalleryIndex([]), matching=matching).name is None
    assert name_face(face(0.1, 0.0), None, matching=matching).name is None
    # Several photos of one name: the nearest counts, and they are not a "second name".
    index = GalleryIndex([("A", face(0.0).embedding), ("A", face(0.05).embedding)])
    assert name_face(face(0.03), index, matching=matching).name == "A"


def test_the_app_looks_for_faces_only_with_a_gallery_and_as_settings_say(tmp_path: Path) -> None:
    from bots.app.root import App
    from bots.settings import FaceSettings, Settings

    settings = Settings(data_dir=tmp_path / "d", faces=FaceSettings(threshold=0.42, margin=0.1))
    app = App(settings)
    try:
        assert app.checks.face_deps() is None  # an empty gallery names nobody: faces are not read
        box = FaceBox(0, 0, 10, 10)
        app.store.faces.add("A", Face(box, 1.0, (0.0,) * 128), source_file="a", file_sha256="1")
        deps = app.checks.face_deps()
        assert deps is not None and deps.gallery is app.store.faces
        assert deps.matching == FaceMatching(threshold=0.42, margin=0.1)
        assert deps.reader is app.resources.face_reader() and deps.max_faces == 8
    finally:
        app.close()
    off = App(Settings(data_dir=tmp_path / "d", faces=FaceSettings(enabled=False)))
    try:
        assert off.checks.face_deps() is None
    finally:
        off.close()
