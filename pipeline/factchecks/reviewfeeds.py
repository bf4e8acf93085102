"""ClaimReview feeds read as a stream: a feed file or response in, `FactCheck`s out, one at a time.

The shapes read, from the JSON's top level:
- a schema.org `DataFeed`: its `dataFeedElement` array holds `DataFeedItem`s whose `item` is a
  ClaimReview or a list of them (or ClaimReviews directly), as the Data Commons feed and the
  CheckThat! feeds are written;
- JSON-LD: a list of ClaimReviews, a single ClaimReview, or an object with a `@graph` of them;
- a Google Fact Check Tools `claims:search` answer (`claims`, each with its `claimReview`s).

Only the top-level array (`dataFeedElement`, `@graph`, `claims`, or the list itself) is walked
as a stream (ijson); each of its elements is built in memory alone and dropped once read, so a
feed of a gigabyte is read in the memory of one element. A gzip file is read through gzip.

Failure policy: an element that cannot be read is a `Skipped` (its position, the reason) and the
rest go on (pipeline/factchecks/reviewitems.py says which). A file that is not JSON, not one of
these shapes, or cut short raises `FeedError` naming the source and how many items were read
before, after yielding every item that came before the fault.
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import ijson

from pipeline.errors import FeedError
from pipeline.factchecks.reviewitems import (
    Identify,
    Parsed,
    Skipped,
    fact_check_from_node,
    fact_checks_from_google_claim,
)

__all__ = ["ChunkReader", "Parsed", "Skipped", "read_feed", "read_feed_file"]

# The top-level keys whose array is walked as a stream, and how its elements are read.
_STREAMED = ("dataFeedElement", "@graph", "claims", "itemListElement")
_MAX_DEPTH = 8  # DataFeedItem in a list in a feed: nesting deeper than this is no feed
_Events = Iterator[tuple[str, str, Any]]


def read_feed_file(path: Path | str, *, identify: Identify | None = None) -> Iterator[Parsed]:
    """Read a feed file (plain or gzip) as a stream of FactChecks and Skipped items."""
    with Path(path).open("rb") as raw:
        yield from read_feed(raw, source=str(path), identify=identify)


def read_feed(
    stream: IO[bytes], *, source: str = "<feed>", identify: Identify | None = None
) -> Iterator[Parsed]:
    """Read a feed from a binary stream as FactChecks and Skipped items, in the feed's order."""
    reader = _maybe_gzip(stream)
    if not reader.peek(1):
        raise FeedError(source, "the feed is empty")
    count = 0
    try:
        for parsed in _parse(ijson.parse(reader, use_float=True), identify):
            count += 1
            yield parsed
    except ijson.JSONError as exc:
        early = any(word in str(exc).lower() for word in ("incomplete", "premature eof"))
        reason = "the feed ends early" if early else "not valid JSON"
        raise FeedError(source, f"{reason}: {_short(exc)}", items=count) from exc
    except (OSError, EOFError) as exc:  # a gzip stream cut short or corrupt
        raise FeedError(source, f"unreadable: {exc}", items=count) from exc
    except _NotAFeedError as exc:
        raise FeedError(source, str(exc), items=count) from exc


class _NotAFeedError(Exception):
    """The JSON is well formed but holds no feed shape."""


def _parse(events: _Events, identify: Identify | None) -> Iterator[Parsed]:
    first = next(events, None)
    if first is None:
        raise _NotAFeedError("the feed is empty")
    _, event, value = first
    if event == "start_array":
        for position, element in enumerate(_elements(events)):
            yield from _expand(element, position, identify, depth=0)
        return
    if event != "start_map":
        raise _NotAFeedError(f"not a feed: the JSON is a single {event}")
    rest: dict[str, Any] = {}
    streamed = False
    position = 0
    for key, event, value in _members(events):
        if key in _STREAMED and event == "start_array":
            streamed = True
            for element in _elements(events):
                if key == "claims":
                    yield from fact_checks_from_google_claim(
                        element, position=position, identify=identify
                    )
                else:
                    yield from _expand(element, position, identify, depth=0)
                position += 1
        else:
            rest[key] = _build(event, value, events)
    if not streamed:
        if not _is_review(rest):
            raise _NotAFeedError("not a feed: no dataFeedElement, @graph, claims or ClaimReview")
        yield from _expand(rest, 0, identify, depth=0)


def _members(events: _Events) -> Iterator[tuple[str, str, Any]]:
    """Yield (key, first event of its value, value) of the object just opened."""
    for _, event, value in events:
        if event == "end_map":
            return
        _, first, first_value = next(events)
        yield value, first, first_value
    raise ijson.IncompleteJSONError("incomplete JSON: the object is not closed")


def _elements(events: _Events) -> Iterator[Any]:
    """Yield each element, built, of the array just opened."""
    for _, event, value in events:
        if event == "end_array":
            return
        yield _build(event, value, events)
    raise ijson.IncompleteJSONError("incomplete JSON: the array is not closed")


def _build(event: str, value: Any, events: _Events) -> Any:
    """Return the value that starts with this event, read to its end."""
    if event not in ("start_map", "start_array"):
        return value
    builder = ijson.ObjectBuilder()
    builder.event(event, value)
    depth = 1
    for _, event, value in events:
        builder.event(event, value)
        if event in ("start_map", "start_array"):
            depth += 1
        elif event in ("end_map", "end_array"):
            depth -= 1
            if depth == 0:
                return builder.value
    raise ijson.IncompleteJSONError("incomplete JSON: a value is not closed")


def _expand(node: Any, position: int, identify: Identify | None, *, depth: int) -> Iterator[Parsed]:
    """Yield the reviews in one element: a ClaimReview, a DataFeedItem, a list, a feed."""
    if depth > _MAX_DEPTH:
        yield Skipped(position, "nested too deep")
        return
    if isinstance(node, list):
        if not node:
            yield Skipped(position, "an empty list")
        for child in node:
            yield from _expand(child, position, identify, depth=depth + 1)
        return
    if not isinstance(node, Mapping) or _is_review(node):
        yield fact_check_from_node(node, position=position, identify=identify)
        return
    for key in ("item", "dataFeedElement", "@graph"):
        if key in node:
            yield from _expand(node[key], position, identify, depth=depth + 1)
            return
    if isinstance(node.get("claimReview"), list):
        yield from fact_checks_from_google_claim(node, position=position, identify=identify)
        return
    kinds = ", ".join(_types(node)) or "no @type"
    yield Skipped(position, f"not a ClaimReview ({kinds})")


def _is_review(node: Mapping[str, Any]) -> bool:
    return "ClaimReview" in _types(node) or ("claimReviewed" in node and "item" not in node)


def _types(node: Mapping[str, Any]) -> list[str]:
    kinds = node.get("@type")
    found = kinds if isinstance(kinds, list) else [kinds]
    return [k.rsplit("/", 1)[-1] for k in found if isinstance(k, str)]


def _maybe_gzip(stream: IO[bytes]) -> io.BufferedReader | gzip.GzipFile:
    buffered = stream if isinstance(stream, io.BufferedReader) else io.BufferedReader(_Raw(stream))
    if buffered.peek(2)[:2] == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=buffered)
    return buffered


class ChunkReader(io.RawIOBase):
    """A binary stream over chunks of bytes (an HTTP response's `iter_bytes()`), for `read_feed`."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        self._chunks = iter(chunks)
        self._left = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._left:
            self._left = next(self._chunks, b"")
            if not self._left:
                return 0
        size = min(len(buffer), len(self._left))
        buffer[:size] = self._left[:size]
        self._left = self._left[size:]
        return size


class _Raw(io.RawIOBase):
    """A file-like object's read, as a raw stream a BufferedReader can peek into."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._stream.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _short(exc: Exception) -> str:
    # yajl's message is a line, then the input around the fault and a caret: the line is kept
    lines = str(exc).strip().splitlines() or [type(exc).__name__]
    return " ".join(lines[0].split())[:200]
