"""Reading an extraction prompt as a model stand-in must: its numbered sentences, per document.

The extraction stage shows every sentence of a batch on its own line after its number
(`[12] …`, `pipeline.judge.quotes`) and takes the numbers back. Stand-ins that answer it (the
scripted and gullible readers here, the fake endpoints of the tests) find those numbers with
these helpers, as a model reads them off the prompt.
"""

from __future__ import annotations

import re

_DOCUMENT = re.compile(r'<document n="(\d+)"[^>]*>\n(.*?)\n</document>', re.S)
_LINE = re.compile(r"^\[(\d+)\] (.*)$", re.M)
_SPACE = re.compile(r"\s+")


def numbered(body: str) -> list[tuple[int, str]]:
    """Return the (number, sentence) lines of one document block's body, in order."""
    return [(int(k), text) for k, text in _LINE.findall(body)]


def documents(user: str) -> list[tuple[int, list[tuple[int, str]]]]:
    """Return each document block's n and its (number, sentence) lines, in prompt order."""
    return [(int(n), numbered(body)) for n, body in _DOCUMENT.findall(user)]


def _squash(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


def quoting(lines: list[tuple[int, str]], text: str, *, most: int = 3) -> list[int]:
    """Return the numbers of the fewest consecutive lines (up to most) that hold text, or []."""
    needle = _squash(text)
    for size in range(1, most + 1):
        for start in range(len(lines) - size + 1):
            run = lines[start : start + size]
            if needle in _squash(" ".join(sentence for _, sentence in run)):
                return [number for number, _ in run]
    return []


def quotes_of(user: str, text: str, stance: str) -> list[dict[str, object]]:
    """Return the extraction answer's quotes that pick text, once from each document holding it."""
    picks = (quoting(lines, text) for _, lines in documents(user))
    return [{"sentences": numbers, "stance": stance} for numbers in picks if numbers]
