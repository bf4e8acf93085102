"""The describer (MUSE): one plain-text description per image from what the readers found.

The claims stage reads it like the post (inside an `<image>` data block): the caption when a
vision model wrote one, the text in the image, the people recognised in it (MUSE: faces that
matched the operator's gallery of public figures), and what the metadata says (capture date,
place, camera, editing software, content credentials). The names it holds (recognised people
first, then capitalised runs in the caption and the image text: people, places,
organisations) become extra query terms. Faces that match nobody are only counted: never
described, numbered or told apart.

Everything in a description comes from the image itself, so it is data, never instructions:
the claims stage's prompt treats it as such.

Failure policy: never raises.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pipeline.records.image import (
    Caption,
    ImageDescription,
    ImageHashes,
    ImageMetadata,
    LoadedImage,
    OcrText,
    SeenFace,
)

MAX_OCR_CHARS = 1200
MAX_TERMS = 8
# A run of capitalised words ("Hurricane Sandy", "New York", "Barack Obama"), apostrophes and
# hyphens inside words allowed.
_NAME_RUN = re.compile(r"\b(?:[A-Z][\w'’-]*[a-z][\w'’-]*)(?:\s+(?:[A-Z][\w'’-]*[a-z][\w'’-]*))*")
_NOT_NAMES = frozenset(
    "breaking news update live video photo image picture today yesterday tomorrow watch "
    "just follow like share retweet reply replies views".split()
)


# Capitalised words that open a run but name nothing ("The White House" keeps "White House").
_SKIP = _NOT_NAMES | frozenset(
    "the a an this that these those it its his her their our my your we they he she i "
    "in on at of and or but if when while as so".split()
)


def names_in(text: str, *, limit: int = MAX_TERMS) -> list[str]:
    """Return the names in text: capitalised runs that do not open a sentence alone."""
    found: dict[str, int] = {}
    for match in _NAME_RUN.finditer(text):
        words = match.group(0).split()
        while words and words[0].lower() in _SKIP:
            words.pop(0)
        while words and words[-1].lower() in _SKIP:
            words.pop()
        if not words:
            continue
        start = match.start()
        before = text[:start].rstrip()
        opens_sentence = not before or before[-1] in ".!?:\n\"'“"
        if len(words) == 1 and opens_sentence and len(match.group(0).split()) == 1:
            continue  # "The", "Scientists": a capital that only opens the sentence
        name = " ".join(words)
        if len(name) >= 3:
            found[name] = found.get(name, 0) + 1
    ranked = sorted(found, key=lambda n: (-found[n], -len(n.split())))
    return ranked[:limit]


def describe(
    image: LoadedImage,
    *,
    hashes: ImageHashes,
    ocr: OcrText | None,
    metadata: ImageMetadata,
    caption: Caption | None,
    faces: Sequence[SeenFace] = (),
) -> ImageDescription:
    """Return the merged description of one image."""
    kind = "animation" if image.frames > 1 else "image"
    lines = [f"An {kind} ({image.format}, {image.width} x {image.height} pixels)."]
    if caption is not None and caption.text:
        lines.append(f"It shows: {caption.text.strip()}")
    ocr_text = ocr.text.strip() if ocr is not None else ""
    if ocr_text:
        lines.append(f"Text in the image: {' '.join(ocr_text.split())[:MAX_OCR_CHARS]}")
    people = list(dict.fromkeys(f.name for f in faces if f.name is not None))
    lines += _face_lines(faces, people)
    lines += _metadata_lines(metadata)
    found = names_in("\n".join(filter(None, (caption.text if caption else "", ocr_text))))
    names = list(dict.fromkeys([*people, *found]))[:MAX_TERMS]
    return ImageDescription(
        image_id=image.id,
        url=image.url,
        origin=image.source.origin,
        width=image.width,
        height=image.height,
        frames=image.frames,
        hashes=hashes,
        ocr=ocr,
        metadata=metadata,
        caption=caption,
        terms=tuple(names),
        text="\n".join(lines),
        faces=tuple(faces),
    )


def _face_lines(faces: Sequence[SeenFace], people: list[str]) -> list[str]:
    if not faces:
        return []
    lines = []
    if people:
        lines.append(
            "Recognised people (faces matching the operator's gallery of public figures): "
            + ", ".join(people)
            + "."
        )
    others = sum(1 for f in faces if f.name is None)
    if others:
        noun, verb = ("face", "matches") if others == 1 else ("faces", "match")
        known = " other" if people else ""
        lines.append(f"{others}{known} {noun} in it {verb} no known public figure.")
    return lines


def _metadata_lines(metadata: ImageMetadata) -> list[str]:
    lines: list[str] = []
    exif = metadata.exif
    if exif is not None:
        parts = []
        if exif.captured_at is not None:
            parts.append(f"taken {exif.captured_at.isoformat(sep=' ')}")
        if exif.camera:
            parts.append(f"with {exif.camera}")
        if exif.latitude is not None and exif.longitude is not None:
            parts.append(f"at latitude {exif.latitude:.4f}, longitude {exif.longitude:.4f}")
        if exif.software:
            parts.append(f"processed with {exif.software}")
        if parts:
            lines.append("Its EXIF metadata says it was " + ", ".join(parts) + ".")
    credentials = metadata.credentials
    if credentials is not None:
        who = credentials.signer or "an unnamed signer"
        state = (
            "trusted"
            if credentials.trusted
            else "valid but from an untrusted certificate"
            if credentials.valid
            else "invalid (" + ", ".join(credentials.problems) + ")"
        )
        line = f"It carries C2PA content credentials signed by {who} ({state})"
        if credentials.actions:
            line += "; recorded actions: " + ", ".join(credentials.actions)
        lines.append(line + ".")
        if credentials.ai_generated:
            lines.append("Its content credentials say it was created by an AI model.")
    return lines
