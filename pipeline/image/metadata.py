"""Embedded metadata: EXIF (when and where a photo was taken, with what, edited by what) and
C2PA content credentials (who signed the image and what was done to it, such as "created by an
AI model").

Both are read from the image's original bytes: decoding for the other readers drops them, and
EXIF orientation has already been applied to the picture. Platforms usually strip EXIF on
upload, so its absence says nothing; its presence is a lead (a capture date years before the
event a post describes). A C2PA manifest is reported with its validation: a signature that
checks out with an untrusted certificate still says who claims to have made the image, not that
they did.

Failure policy: never raises; unreadable EXIF gives `exif=None`, a missing, unsupported or
broken manifest gives `credentials=None` (a broken one is logged).
"""

from __future__ import annotations

import io
import json
import logging
from datetime import datetime, timedelta, timezone
from typing import Any

from PIL import Image, UnidentifiedImageError

from pipeline.records.image import ContentCredentials, ExifInfo, ImageMetadata, LoadedImage
from pipeline.util.cpu import CpuPool, run_cpu

log = logging.getLogger(__name__)

_EXIF_IFD = 0x8769
_GPS_IFD = 0x8825
_MAKE, _MODEL, _SOFTWARE, _DATETIME = 0x010F, 0x0110, 0x0131, 0x0132
_ORIGINAL, _OFFSET_ORIGINAL = 0x9003, 0x9011
_LAT_REF, _LAT, _LON_REF, _LON = 1, 2, 3, 4
# IPTC digital source types that say a model made the picture (C2PA's "AI generated").
AI_SOURCE_TYPES = (
    "trainedAlgorithmicMedia",
    "compositeWithTrainedAlgorithmicMedia",
    "algorithmicallyEnhanced",
)
_MIME = {"JPEG": "image/jpeg", "MPO": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp"}
_MIME |= {"HEIF": "image/heif", "AVIF": "image/avif", "GIF": "image/gif"}


def read_exif(data: bytes) -> ExifInfo | None:
    """Return what the EXIF of image bytes says, or None when there is none (blocking)."""
    try:
        with Image.open(io.BytesIO(data)) as opened:
            exif = opened.getexif()
            if not exif:
                return None
            details = exif.get_ifd(_EXIF_IFD)
            gps = exif.get_ifd(_GPS_IFD)
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, EOFError) as exc:
        log.info("EXIF not read", extra={"reason": str(exc)})
        return None
    camera = " ".join(
        dict.fromkeys(_text(v) for v in (exif.get(_MAKE), exif.get(_MODEL)) if _text(v))
    )
    info = ExifInfo(
        captured_at=_when(
            details.get(_ORIGINAL) or exif.get(_DATETIME), details.get(_OFFSET_ORIGINAL)
        ),
        latitude=_degrees(gps.get(_LAT), gps.get(_LAT_REF), "S"),
        longitude=_degrees(gps.get(_LON), gps.get(_LON_REF), "W"),
        camera=camera or None,
        software=_text(exif.get(_SOFTWARE)) or None,
    )
    return None if info == ExifInfo() else info


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    return str(value).replace("\x00", "").strip() if value is not None else ""


def _when(value: Any, offset: Any) -> datetime | None:
    """Return an EXIF "YYYY:MM:DD HH:MM:SS" time, aware when an offset ("+02:00") is given."""
    raw = _text(value)
    try:
        moment = datetime.strptime(raw[:19], "%Y:%m:%d %H:%M:%S")
    except ValueError:
        return None
    shift = _text(offset)
    if len(shift) == 6 and shift[0] in "+-" and shift[3] == ":":
        try:
            minutes = int(shift[1:3]) * 60 + int(shift[4:6])
        except ValueError:
            return moment
        sign = -1 if shift[0] == "-" else 1
        return moment.replace(tzinfo=timezone(timedelta(minutes=sign * minutes)))
    return moment


def _degrees(value: Any, ref: Any, negative: str) -> float | None:
    """Return EXIF degrees/minutes/seconds as signed decimal degrees."""
    try:
        d, m, s = (float(part) for part in value)
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    degrees = d + m / 60 + s / 3600
    if not 0 <= degrees <= 180:
        return None
    return round(-degrees if _text(ref).upper() == negative else degrees, 6)


def read_credentials(data: bytes, fmt: str) -> ContentCredentials | None:
    """Return the active C2PA manifest of image bytes, or None when there is none (blocking)."""
    mime = _MIME.get(fmt)
    if mime is None:
        return None
    import c2pa

    try:
        with c2pa.Reader(mime, io.BytesIO(data)) as reader:
            store = json.loads(reader.json())
    except c2pa.C2paError as exc:
        if "ManifestNotFound" not in str(exc) and "not found" not in str(exc).lower():
            log.info("C2PA manifest not read", extra={"reason": str(exc)[:300]})
        return None
    except (ValueError, OSError) as exc:
        log.info("C2PA manifest not read", extra={"reason": str(exc)[:300]})
        return None
    return credentials_of(store)


def credentials_of(store: dict[str, Any]) -> ContentCredentials | None:
    """Return the credentials of the active manifest of a C2PA manifest store (as JSON)."""
    manifest = store.get("manifests", {}).get(store.get("active_manifest", ""))
    if not isinstance(manifest, dict):
        return None
    actions: list[str] = []
    ai = False
    for assertion in manifest.get("assertions", ()):
        if not str(assertion.get("label", "")).startswith("c2pa.actions"):
            continue
        for action in (assertion.get("data") or {}).get("actions", ()):
            actions.append(str(action.get("action", "")))
            source = str(action.get("digitalSourceType", ""))
            ai = ai or source.rsplit("/", 1)[-1] in AI_SOURCE_TYPES
    signature = manifest.get("signature_info") or {}
    signer = " / ".join(
        dict.fromkeys(str(signature[k]) for k in ("common_name", "issuer") if signature.get(k))
    )
    generators = manifest.get("claim_generator_info") or []
    generator = manifest.get("claim_generator") or (
        generators[0].get("name") if generators and isinstance(generators[0], dict) else None
    )
    # Only failures count against a manifest; an untrusted (self-made) certificate is its own note.
    problems = tuple(
        str(status.get("code", ""))
        for status in store.get("validation_status", ())
        if str(status.get("code", "")) != "signingCredential.untrusted"
    )
    untrusted = any(
        status.get("code") == "signingCredential.untrusted"
        for status in store.get("validation_status", ())
    )
    return ContentCredentials(
        signer=signer or None,
        claim_generator=str(generator) if generator else None,
        actions=tuple(a for a in actions if a),
        ai_generated=ai,
        valid=not problems,
        trusted=not problems and not untrusted,
        problems=problems,
    )


def read_metadata_bytes(data: bytes, fmt: str) -> ImageMetadata:
    """Return the EXIF and C2PA metadata of image bytes (blocking)."""
    return ImageMetadata(exif=read_exif(data), credentials=read_credentials(data, fmt))


async def read_metadata(image: LoadedImage, *, cpu: CpuPool | None) -> ImageMetadata:
    """Return the embedded metadata of an image, read off the event loop."""
    return await run_cpu(cpu, read_metadata_bytes, image.data, image.format)
