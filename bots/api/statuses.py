"""The HTTP status of each factbot error, raised now or recorded by a job that died."""

from __future__ import annotations

from bots.api.forms import BodyTooLargeError
from pipeline import errors
from pipeline.errors import (
    ExtractionError,
    FactbotError,
    FetchError,
    InputError,
    NotFoundError,
    UnsafeURLError,
)


def status_for(kind: type[BaseException]) -> int:
    """Return the HTTP status for an error of this kind, raised now or by a job that died."""
    if issubclass(kind, BodyTooLargeError):
        return 413
    if issubclass(kind, NotFoundError):
        return 404
    if issubclass(kind, (UnsafeURLError, InputError)):
        return 422
    if issubclass(kind, (FetchError, ExtractionError)):
        return 502
    return 500


def error_kind(error: str | None) -> type[BaseException]:
    """Return the factbot error class a job's `last_error` ("Name: message") names."""
    kind = getattr(errors, (error or "").split(":", 1)[0], None)
    return kind if isinstance(kind, type) and issubclass(kind, FactbotError) else Exception
