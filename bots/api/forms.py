"""Multipart forms with image files, read within bounds (the API's and the dashboard's uploads).

Starlette spools a form's files to disk whatever their size: `bounded_form` reads the body
first, refusing one larger than the images a check reads could need (`BodyTooLargeError`,
413) before a byte of it is parsed, and then lets Starlette parse what it read (at most
`max_files` files). `read_upload` keeps a file's bytes only when they are within the size of
one image (`bots.runtime.checking.uploads` says why the others were not read).
"""

from __future__ import annotations

from fastapi import Request
from starlette.datastructures import FormData, UploadFile
from starlette.exceptions import HTTPException

from bots.runtime.checking.uploads import Upload
from bots.settings import ImageSettings
from pipeline.errors import InputError

FORM_SLACK = 1_000_000  # bytes a form may hold besides its images: text, fields, part headers


class BodyTooLargeError(InputError):
    """A request body larger than its limit (answered with 413)."""


def form_cap(images: ImageSettings) -> int:
    """Return the largest form body accepted: every image a check reads, and the text."""
    return images.max_images * images.max_bytes + FORM_SLACK


async def bounded_form(request: Request, *, cap: int, max_files: int) -> FormData:
    """Return the request's multipart (or urlencoded) form, its body at most cap bytes.

    Raises BodyTooLargeError for a larger body (by its Content-Length, or as it arrives) and
    InputError for a form that cannot be parsed or holds more than max_files files.
    """
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise _too_large(int(declared), cap)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > cap:
            raise _too_large(size, cap, more=True)
        chunks.append(chunk)
    request._body = b"".join(chunks)  # Starlette parses the form from what was read
    try:
        return await request.form(max_files=max_files, max_fields=64)
    except HTTPException as exc:  # Starlette's answer to a malformed or oversized form
        raise InputError(f"the form could not be read: {exc.detail}") from exc


async def read_upload(file: UploadFile, *, max_bytes: int) -> Upload:
    """Return an uploaded file as an Upload; its bytes are kept only within max_bytes."""
    name = file.filename or "uploaded image"
    size = file.size or 0
    if size > max_bytes:
        return Upload(name, None, size)
    data = await file.read(max_bytes + 1)
    return Upload(name, None if len(data) > max_bytes else data, max(size, len(data)))


def _too_large(size: int, cap: int, *, more: bool = False) -> BodyTooLargeError:
    at_least = "over " if more else ""
    return BodyTooLargeError(
        f"the request is {at_least}{size:,} bytes; the limit is {cap:,} "
        "(FACTBOT_IMAGES__MAX_IMAGES images of FACTBOT_IMAGES__MAX_BYTES, and the text)"
    )
