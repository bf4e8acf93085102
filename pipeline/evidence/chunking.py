"""Passage chunking: paragraphs and sentences packed into passages of bounded length.

all-MiniLM-L6-v2 reads at most 256 word pieces, so passages stay under ~150 words; text with no
sentence punctuation (e.g. lower-cased corpora) falls back to word windows.

Failure policy: never raises; empty text gives no passages.
"""

from __future__ import annotations

from pipeline.util.text import split_sentences

MAX_WORDS = 150
MAX_PASSAGES = 200  # a huge page is truncated rather than flooding the index


def embedding_input(title: str, passage: str) -> str:
    """Return the text a passage is embedded as: its document's title, then the passage."""
    return f"{title}\n{passage}"


def _word_windows(text: str, size: int) -> list[str]:
    tokens = text.split()
    return [" ".join(tokens[i : i + size]) for i in range(0, len(tokens), size)]


def chunk_text(text: str, *, max_words: int = MAX_WORDS) -> list[str]:
    """Split text into passages of at most max_words words."""
    passages: list[str] = []
    current: list[str] = []
    count = 0

    def flush() -> None:
        nonlocal current, count
        if current:
            passages.append(" ".join(current))
        current, count = [], 0

    for paragraph in text.split("\n"):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        for sentence in split_sentences(paragraph):
            n = len(sentence.split())
            if n > max_words:
                flush()
                passages.extend(_word_windows(sentence, max_words))
                continue
            if count + n > max_words:
                flush()
            current.append(sentence)
            count += n
        if count >= max_words // 2:
            flush()
        if len(passages) >= MAX_PASSAGES:
            break
    flush()
    return passages[:MAX_PASSAGES]
