"""Faces in images: detection and 128-d embeddings, offline, named only from the gallery.

Why dlib: the design card names facenet-pytorch, but it pins torch<2.3 and imports torchvision,
whose CPU operators do not load beside the project's torch 2.13 (torchvision 0.28.0, the build
for torch 2.13, fails with "operator torchvision::nms does not exist"), and its embedding
weights download from GitHub at run time, which fails here. dlib (the `dlib-bin` wheel) with
the models `face-recognition-models` ships detects and embeds fully offline: the HOG frontal
face detector, the 5-point landmark model (the 68-point one has a non-commercial training-data
restriction) and the ResNet face embedding (99.38 % on LFW at distance 0.6). The model files
are read from that package's folder without importing it (its `__init__` needs
`pkg_resources`, gone from setuptools 81) and without `face_recognition` (a thin wrapper).

The picture is scaled so its longer side is at most `detect_side` for detection (HOG time grows
with the pixels); boxes are given in the picture's own pixels. At most `max_faces` faces per
image are embedded, the detector's surest first.

Privacy: a post's face embeddings never leave this module's answer; the description keeps only
boxes, scores and gallery names (`pipeline.image.gallery` says when a face gets one).

Failure policy: `DlibFaces.read` raises `ImageError` (models missing, dlib failing);
`read_faces` never raises: a failing reader leaves the image without faces and is logged.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from PIL import Image

from pipeline.errors import FactbotError, ImageError
from pipeline.image.gallery import FaceGallery, FaceMatching, name_face
from pipeline.records.image import Face, FaceBox, LoadedImage, SeenFace
from pipeline.util.cpu import CpuPool, run_cpu

log = logging.getLogger(__name__)

LANDMARKS_FILE = "shape_predictor_5_face_landmarks.dat"
EMBEDDING_FILE = "dlib_face_recognition_resnet_model_v1.dat"
DEFAULT_MAX_FACES = 8
INSTALL_HINT = "pip install 'factbot[faces]'"


class FaceReader(Protocol):
    """Finds faces in a picture and embeds them."""

    name: str

    def read(self, picture: Image.Image, *, max_faces: int) -> tuple[Face, ...]:
        """Return the faces in picture, surest first (blocking; called in the CPU pool)."""
        ...


def models_dir() -> Path:
    """Return the folder of the dlib model files `face-recognition-models` ships."""
    spec = importlib.util.find_spec("face_recognition_models")
    if spec is None or not spec.submodule_search_locations:
        raise ImageError("faces", f"face-recognition-models is not installed ({INSTALL_HINT})")
    return Path(next(iter(spec.submodule_search_locations))) / "models"


class DlibFaces:
    """dlib's HOG detector, 5-point landmarks and ResNet embedding, loaded on first use."""

    name = "dlib"

    def __init__(
        self,
        *,
        detect_side: int = 1024,
        upsample: int = 1,
        min_score: float = 0.0,
        models: Path | None = None,
    ) -> None:
        self.detect_side = detect_side
        self.upsample = upsample
        self.min_score = min_score
        self.models = models
        self._lock = threading.Lock()  # dlib's models are not safe to share across threads
        self._loaded: tuple[Any, Any, Any] | None = None

    def _load(self) -> tuple[Any, Any, Any]:
        if self._loaded is None:
            try:
                import dlib
            except ImportError as exc:
                raise ImageError("faces", f"dlib is not installed ({INSTALL_HINT})") from exc
            folder = self.models or models_dir()
            for file in (LANDMARKS_FILE, EMBEDDING_FILE):
                if not (folder / file).is_file():
                    raise ImageError("faces", f"the face model {folder / file} is missing")
            self._loaded = (
                dlib.get_frontal_face_detector(),
                dlib.shape_predictor(str(folder / LANDMARKS_FILE)),
                dlib.face_recognition_model_v1(str(folder / EMBEDDING_FILE)),
            )
        return self._loaded

    def warm_up(self) -> None:
        """Load the models now rather than on the first image."""
        with self._lock:
            self._load()

    def read(self, picture: Image.Image, *, max_faces: int = DEFAULT_MAX_FACES) -> tuple[Face, ...]:
        """Return up to max_faces faces of picture with their embeddings, surest first."""
        import numpy as np

        small = picture.convert("RGB")
        scale = 1.0
        if max(small.size) > self.detect_side:
            scale = max(small.size) / self.detect_side
            small = small.copy()
            small.thumbnail((self.detect_side, self.detect_side), Image.Resampling.LANCZOS)
        pixels = np.ascontiguousarray(np.asarray(small, dtype=np.uint8))
        with self._lock:
            detector, landmarks, embedder = self._load()
            try:
                rects, scores, _ = detector.run(pixels, self.upsample, self.min_score)
                ranked = sorted(zip(scores, rects, strict=True), key=lambda p: -p[0])[:max_faces]
                if not ranked:
                    return ()
                import dlib

                shapes = dlib.full_object_detections()
                for _, rect in ranked:
                    shapes.append(landmarks(pixels, rect))
                vectors = embedder.compute_face_descriptor(pixels, shapes)
            except RuntimeError as exc:  # dlib reports its failures as RuntimeError
                raise ImageError("faces", f"dlib failed: {exc}") from exc
        width, height = picture.size
        return tuple(
            Face(
                box=FaceBox(
                    left=max(0, round(rect.left() * scale)),
                    top=max(0, round(rect.top() * scale)),
                    right=min(width, round((rect.right() + 1) * scale)),
                    bottom=min(height, round((rect.bottom() + 1) * scale)),
                ),
                score=round(float(score), 4),
                embedding=tuple(float(x) for x in vector),
            )
            for (score, rect), vector in zip(ranked, vectors, strict=True)
        )


@dataclass(frozen=True)
class FaceDeps:
    """What the face part of the image stage needs, built once by the composition root."""

    reader: FaceReader
    gallery: FaceGallery | None = None  # None: faces are found but never named
    matching: FaceMatching = field(default_factory=FaceMatching)
    max_faces: int = DEFAULT_MAX_FACES


def find_and_name(picture: Image.Image, deps: FaceDeps) -> tuple[SeenFace, ...]:
    """Return the faces of picture, each named when it clearly matches the gallery (blocking)."""
    faces = deps.reader.read(picture, max_faces=deps.max_faces)
    if not faces:
        return ()
    index = deps.gallery.index() if deps.gallery is not None else None
    return tuple(name_face(face, index, matching=deps.matching) for face in faces)


async def read_faces(
    image: LoadedImage, *, deps: FaceDeps, cpu: CpuPool | None
) -> tuple[SeenFace, ...]:
    """Return the faces of an image, named from the gallery, read off the event loop."""
    try:
        faces = await run_cpu(cpu, find_and_name, image.image, deps)
    except FactbotError as exc:
        log.warning("face reading failed", extra={"image_id": image.id, "reason": str(exc)})
        return ()
    log.info(
        "faces read",
        extra={
            "image_id": image.id,
            "faces": len(faces),
            "named": sum(1 for f in faces if f.name is not None),
        },
    )
    return faces


def gallery_face(image: LoadedImage, *, reader: FaceReader) -> Face:
    """Return the one face of a gallery photo; raise ImageError when it has none or no clear one.

    A photo with several faces is kept when its largest face is at least twice the area of the
    next (the person in front); otherwise nobody can say which face the name belongs to.
    """
    faces = sorted(reader.read(image.image, max_faces=4), key=lambda f: -f.box.area)
    if not faces:
        raise ImageError(image.url, "no face was found in the photo")
    if len(faces) > 1 and faces[0].box.area < 2 * faces[1].box.area:
        raise ImageError(
            image.url,
            f"{len(faces)} faces of similar size: crop the photo to the one person it is named for",
        )
    return faces[0]
