"""Images given to factbot directly (CLI files, API uploads and URLs, the dashboard's form).

They become what a platform attachment becomes, `Post.image_refs`: an http(s) URL is kept as
it is (the worker's image stage fetches it through the one SSRF-safe fetcher), and uploaded
bytes become a `data:` URI stored with the post (the image stage unpacks it). So the image
stage alone decides what an image is: the format allow-list, the pixel and decompression-bomb
limits and the refusal of HTML, SVG and PDF files all apply to an upload as to an attachment,
and a file that fails them is one of the check's image failures, with its reason.

What cannot reach the image stage is said here, as a note for the answer: a file over
FACTBOT_IMAGES__MAX_BYTES (its bytes are not kept), an empty file, a link that is not http(s),
and images beyond FACTBOT_IMAGES__MAX_IMAGES. The check goes on with what remains.

Uploaded bytes live in the post's row until the retention sweep removes them
(`storage.checks.CheckRepo.drop_uploads_before`, FACTBOT_PRIVACY__RETENTION_DAYS after).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath

NAME_CHARS = 20  # of an upload's name kept in its data: URI (the URI's start is its label)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
# Leading bytes of the raster formats the image stage reads, for the data: URI's type.
_MAGIC = (
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"BM", "image/bmp"),
)


@dataclass(frozen=True)
class Upload:
    """An image file given as bytes: its name as the user gave it, and its bytes.

    `data` is None when the file was larger than the limit (`size` says how large) and was
    not read any further.
    """

    name: str
    data: bytes | None
    size: int


@dataclass(frozen=True)
class GivenImages:
    """The image refs a post carries, and what was not taken, each with its reason."""

    refs: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def gather_images(
    uploads: Sequence[Upload], urls: Sequence[str], *, max_images: int, max_bytes: int
) -> GivenImages:
    """Return the refs of the uploads and URLs that can go to the image stage, and notes."""
    refs: list[str] = []
    notes: list[str] = []
    for upload in uploads:
        label = _shown(upload.name)
        if upload.data is None or upload.size > max_bytes:
            notes.append(
                f"The image {label} was not read: it is {upload.size:,} bytes, larger than the "
                f"{max_bytes:,} bytes factbot reads (FACTBOT_IMAGES__MAX_BYTES)."
            )
        elif not upload.data:
            notes.append(f"The image {label} was not read: the file is empty.")
        else:
            refs.append(upload_ref(upload.data, name=upload.name))
    for url in urls:
        url = url.strip()
        if not url:
            continue
        if not url.lower().startswith(("http://", "https://")):
            notes.append(
                f"The image {_shown(url)} was not read: only http(s) image links are fetched."
            )
            continue
        refs.append(url)
    refs = list(dict.fromkeys(refs))
    for extra in refs[max_images:]:
        notes.append(
            f"The image {_shown(_name_of(extra))} was not read: a check reads at most "
            f"{max_images} images (FACTBOT_IMAGES__MAX_IMAGES)."
        )
    return GivenImages(tuple(refs[:max_images]), tuple(notes))


def upload_ref(data: bytes, *, name: str) -> str:
    """Return the data: URI of uploaded bytes, labelled with the type its bytes show and name.

    The type is sniffed from the bytes, never taken from the file's name or the client's
    content type (a PDF named photo.jpg is an octet stream); the image stage decides anyway.
    """
    kind = next((k for magic, k in _MAGIC if data.startswith(magic)), "")
    if not kind and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        kind = "image/webp"
    if not kind and data[4:8] == b"ftyp":
        kind = "image/avif" if data[8:12] in (b"avif", b"avis") else "image/heic"
    label = _safe_name(name)
    param = f";name={label}" if label else ""
    payload = base64.b64encode(data).decode("ascii")
    return f"data:{kind or 'application/octet-stream'}{param};base64,{payload}"


def _safe_name(name: str) -> str:
    """Return name reduced to a short run of [A-Za-z0-9._-] (the extension kept)."""
    path = PurePath(name.replace("\\", "/")).name
    safe = _UNSAFE.sub("_", path).strip("._")
    if len(safe) <= NAME_CHARS:
        return safe
    suffix = PurePath(safe).suffix[:8]
    return safe[: NAME_CHARS - len(suffix)] + suffix


def upload_name(ref: str) -> str | None:
    """Return the name of an uploaded image from its data: URI (or its start), else None.

    An upload without a name is "uploaded image"; a ref that is not a data: URI has none.
    """
    if not ref.startswith("data:"):
        return None
    found = re.search(r";name=([A-Za-z0-9._-]+)", ref.partition(",")[0])
    return found.group(1) if found else "uploaded image"


def _name_of(ref: str) -> str:
    """Return the name a data: URI carries, or the ref itself."""
    return upload_name(ref) or ref


def _shown(name: str) -> str:
    """Return a name or URL as a note shows it: quoted, at most 120 characters."""
    name = name.strip() or "(no name)"
    return repr(name if len(name) <= 120 else name[:119] + "…")
