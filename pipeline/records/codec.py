"""Records as JSON and back: one codec, pydantic's `TypeAdapter`, for every stored record.

A record is written as the JSON of its dataclass (field names as keys, tuples as lists, enums as
their values, datetimes as `datetime.isoformat()`, which keeps an offset or its absence) and
read back against the record's own type hints. Records grow fields at the end with defaults, so
a key a stored object lacks takes the field's default (an older row) and a key the record no
longer has is ignored (a newer row read by older code). What does not fit raises
`pydantic.ValidationError`, a `ValueError`. A field whose type is imported for type checks only
(PIL's `Image` in `LoadedImage`) cannot be resolved at run time: it reads as its default.
"""

from __future__ import annotations

import builtins
import dataclasses
import json
import sys
import typing
from collections.abc import Callable, Collection
from datetime import datetime
from typing import Any, TypeVar

from pydantic import TypeAdapter

T = TypeVar("T")


class _Dotted(type):
    def __getattr__(cls, name: str) -> Any:
        return cls  # `Image.Image` of an unresolved `Image` is unresolved too


class _Unresolved(metaclass=_Dotted):
    """What a name that exists only for type checkers reads as when hints are resolved."""


class _Names(dict[str, Any]):
    """A module's names, and `_Unresolved` for any name it does not have."""

    def __init__(self, space: dict[str, Any]) -> None:
        super().__init__()
        self.space = space

    def __missing__(self, key: str) -> Any:
        if key in self.space:
            return self.space[key]
        return getattr(builtins, key, _Unresolved)


@dataclasses.dataclass(frozen=True)
class _Codec:
    reader: TypeAdapter[Any]
    writer: TypeAdapter[Any]
    finish: Callable[[Any], Any]  # the reader's result as the type asked for


_CODECS: dict[Any, _Codec] = {}


def _standin(cls: type) -> _Codec:
    """Return a codec for a dataclass with fields of unresolvable types (they take defaults)."""
    hints = typing.get_type_hints(cls, localns=_Names(vars(sys.modules[cls.__module__])))
    kept: list[tuple[str, Any, Any]] = []
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        unresolved = _Unresolved in (hint, *typing.get_args(hint))
        has_default = f.default is not dataclasses.MISSING or (
            f.default_factory is not dataclasses.MISSING
        )
        if not f.init or (unresolved and has_default):
            continue
        default = dataclasses.field(default=f.default, default_factory=f.default_factory)
        kept.append((f.name, Any if unresolved else hint, default))
    standin = dataclasses.make_dataclass(cls.__name__, kept)
    names = [name for name, _, _ in kept]
    return _Codec(
        TypeAdapter(standin), TypeAdapter(Any), lambda v: cls(**{n: getattr(v, n) for n in names})
    )


def _codec(kind: Any) -> _Codec:
    """Return the codec of a type, made once."""
    codec = _CODECS.get(kind)
    if codec is None:
        adapter: TypeAdapter[Any] = TypeAdapter(kind)
        if adapter.pydantic_complete or not (
            isinstance(kind, type) and dataclasses.is_dataclass(kind)
        ):
            codec = _Codec(adapter, adapter, lambda v: v)
        else:
            codec = _standin(kind)
        _CODECS[kind] = codec
    return codec


def _iso(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not stored as JSON")


def dump(value: Any, *, kind: Any = None, exclude: Collection[str] = ()) -> str:
    """Return the JSON of a record (or a tuple of them: pass `kind`, e.g. `tuple[Quote, ...]`).

    `exclude` leaves out top-level fields stored elsewhere.
    """
    writer = _codec(type(value) if kind is None else kind).writer
    plain = writer.dump_python(value, exclude=set(exclude) or None)
    return json.dumps(plain, default=_iso, ensure_ascii=False)


def to_plain(value: Any, *, kind: Any = None, exclude: Collection[str] = ()) -> Any:
    """Return the JSON-ready form of a record (dicts, lists, strings, numbers), as `dump` writes."""
    return json.loads(dump(value, kind=kind, exclude=exclude))


def load(kind: type[T], text: str | bytes) -> T:
    """Read a value of type `kind` from the JSON `dump` wrote."""
    codec = _codec(kind)
    result: T = codec.finish(codec.reader.validate_json(text))
    return result


def from_plain(kind: type[T], data: Any) -> T:
    """Rebuild a value of type `kind` from its parsed JSON form (as `to_plain` returns)."""
    codec = _codec(kind)
    result: T = codec.finish(codec.reader.validate_python(data))
    return result
