"""Settings of face recognition in images: whether faces are looked for, and when a face is
named. Names come only from the operator's gallery of public figures (`factbot faces import`);
faces that match nobody stay anonymous, and a post's faces are never stored."""

from __future__ import annotations

from pydantic import BaseModel, Field

from pipeline.image.gallery import DEFAULT_MARGIN, DEFAULT_THRESHOLD


class FaceSettings(BaseModel):
    """Faces in a post's images, named from the gallery of known public figures."""

    enabled: bool = Field(
        default=True,
        description="look for faces in images and name those that match the gallery (dlib; "
        "with an empty gallery nothing is ever named)",
    )
    threshold: float = Field(
        default=DEFAULT_THRESHOLD,
        gt=0,
        le=1.0,
        description="largest embedding distance at which a face takes a gallery name "
        "(calibrated with `python -m bench.faces`; dlib's LFW figure is 0.6)",
    )
    margin: float = Field(
        default=DEFAULT_MARGIN,
        ge=0,
        le=1.0,
        description="how much nearer the best name must be than the second-best name",
    )
    max_faces: int = Field(default=8, ge=1, le=64, description="faces embedded per image")
    detect_side: int = Field(
        default=1024,
        ge=256,
        le=4096,
        description="longer side images are scaled to for detection (time grows with pixels)",
    )
