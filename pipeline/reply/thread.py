"""Corrections as a thread of short plain-text posts (X, Bluesky, Mastodon).

A correction rarely fits one post of 280, 300 or 500 characters. `render_thread` lays it out as
blocks — the headline, one block per claim, the note, one line per reference (`[1] <url>`), the
omission line, then the caller's extras (notes, a cost footer, the report link) — and packs the
blocks greedily into posts, each within the budget by the platform's own `measure`. A block too
long for a post is split between words; a reference line, a URL and a word are never split. With
more than one post, each ends with its number (" (2/3)"), counted in the budget.

When the thread would need more than `max_posts` posts, or cite more than `max_links` URLs (on X
every post with a URL costs more), the correction shrinks in the same order as `render.fit`:
the note first, then whole claims from the end with the references only they cited, and the
omission line says how many claims were left out. References keep their numbers, so the
markers match the full check.

Everything that came from a post, a page or a model is link-scrubbed (the only links are the
references) and has its @-mentions defused, so a quoted "@everyone" or "@someone" notifies
nobody. The measures here count as the platforms do: X weighs code points (most non-Latin
scripts and emoji count 2) and counts every URL as 23; Mastodon counts code points and every URL
as 23; Bluesky counts graphemes.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence

import regex

from pipeline.records.domain import Correction
from pipeline.reply.links import scrub_links
from pipeline.reply.render import Fitted, shrinking

URL_CHARS = 23  # what X and Mastodon count for any URL
MAX_POSTS = 9  # numbering is " (k/n)" with one digit
_URL_RE = re.compile(r"https?://\S+", re.IGNORECASE)
_MENTION_RE = re.compile(r"(?<![\w@])([@＠])(?=\w)")
_WORD_JOINER = "\u2060"
_GAP_RE = re.compile(r"\s+")
# twitter-text v3: code points in these ranges weigh 1, every other code point 2.
_X_LIGHT = ((0, 4351), (8192, 8205), (8208, 8223), (8242, 8247))
_EMOJI_RE = regex.compile(r"\p{Extended_Pictographic}")

Measure = Callable[[str], int]


def defuse_mentions(text: str) -> str:
    """Return text whose @handles mention nobody (a word joiner after each "@")."""
    return _MENTION_RE.sub(lambda m: m.group(1) + _WORD_JOINER, text)


def graphemes(text: str) -> int:
    """Return the number of user-perceived characters (extended grapheme clusters)."""
    return len(regex.findall(r"\X", text))


def url_weighted(text: str, *, url_chars: int = URL_CHARS) -> int:
    """Return text's length with every URL counted as url_chars code points (Mastodon)."""
    urls = _URL_RE.findall(text)
    return len(_URL_RE.sub("", text)) + url_chars * len(urls)


def x_weighted(text: str) -> int:
    """Return text's length as X counts it: weighted code points, emoji 2, URLs 23."""
    urls = _URL_RE.findall(text)
    total = URL_CHARS * len(urls)
    for cluster in regex.findall(r"\X", _URL_RE.sub("", text)):
        if _EMOJI_RE.search(cluster):
            total += 2
            continue
        total += sum(_x_weight(ord(ch)) for ch in cluster)
    return total


def _x_weight(point: int) -> int:
    if point <= 4351:
        return 1
    return 1 if any(lo <= point <= hi for lo, hi in _X_LIGHT) else 2


@functools.lru_cache(maxsize=4096)  # a block recurs in every shrunk part of a correction
def _clean(text: str) -> str:
    return defuse_mentions(" ".join(scrub_links(text).split()))


def _blocks(part: Fitted, extras: Sequence[str]) -> tuple[list[str], list[str]]:
    """Return the part's text blocks and its reference lines, in reading order."""
    blocks = [_clean(part.headline)]
    blocks += [_clean(item.text) for item in part.items]
    if part.note:
        blocks.append(_clean(part.note))
    refs = [f"[{r.number}] {r.url}" for r in part.references]
    tail = [part.omission] if part.omitted else []
    return blocks, refs + tail + [" ".join(e.split()) for e in extras if e.strip()]


def _greedy(units: Sequence[str], sep: str, room: int, measure: Measure) -> list[str] | None:
    """Return units joined by sep into the fewest groups within room, in order (None: a unit
    alone is too long).

    Lengths are summed (every measure here is additive across a space or a line break, which
    always end a URL and a grapheme); each group is then measured whole, and a measure that
    is not additive falls back to measuring every join.
    """
    sizes = [measure(u) for u in units]
    if any(size > room for size in sizes):
        return None
    gap = measure(sep)
    groups: list[list[str]] = []
    total = 0
    for unit, size in zip(units, sizes, strict=True):
        if groups and total + gap + size <= room:
            groups[-1].append(unit)
            total += gap + size
        else:
            groups.append([unit])
            total = size
    joined = [sep.join(group) for group in groups]
    if all(measure(text) <= room for text in joined):
        return joined
    return _greedy_exact(units, sep, room, measure)


def _greedy_exact(units: Sequence[str], sep: str, room: int, measure: Measure) -> list[str]:
    out: list[str] = []
    current = ""
    for unit in units:
        joined = f"{current}{sep}{unit}" if current else unit
        if measure(joined) <= room:
            current = joined
        else:
            out.append(current)
            current = unit
    if current:
        out.append(current)
    return out


def _pack(
    texts: Sequence[str],
    whole: Sequence[str],
    room: int,
    measure: Measure,
    limit: int,
) -> list[str] | None:
    """Return the blocks packed into at most limit posts within room, or None."""
    units: list[str] = []
    for block in texts:  # a block too long for a post is split between words
        pieces = (
            [block] if measure(block) <= room else _greedy(_GAP_RE.split(block), " ", room, measure)
        )
        if pieces is None:
            return None
        units += pieces
    units += whole  # reference lines and extras are never split
    posts = _greedy(units, "\n", room, measure)
    if posts is None or len(posts) > limit:
        return None  # a line cannot fit, or too many posts: the caller shrinks the correction
    return posts


def _numbered(posts: list[str]) -> tuple[str, ...]:
    if len(posts) == 1:
        return (posts[0],)
    n = len(posts)
    return tuple(f"{post} ({k}/{n})" for k, post in enumerate(posts, start=1))


def _layout(
    texts: Sequence[str], whole: Sequence[str], budget: int, measure: Measure, max_posts: int
) -> tuple[str, ...] | None:
    single = _pack(texts, whole, budget, measure, 1)
    if single is not None:
        return (single[0],)
    if max_posts == 1:
        return None
    reserve = measure(f" ({MAX_POSTS}/{MAX_POSTS})")
    posts = _pack(texts, whole, budget - reserve, measure, max_posts)
    return None if posts is None else _numbered(posts)


def layout(
    part: Fitted,
    *,
    budget: int,
    measure: Measure,
    extras: Sequence[str] = (),
    max_posts: int = MAX_POSTS,
) -> tuple[str, ...] | None:
    """Return one fitted part as numbered posts within budget, or None when it cannot fit."""
    texts, whole = _blocks(part, extras)
    return _layout(texts, whole, budget, measure, max_posts)


def thread_text(
    text: str, *, budget: int, measure: Measure = len, max_posts: int = MAX_POSTS
) -> tuple[str, ...]:
    """Return a written text (a reviewer's edited reply, a notice) as numbered posts.

    Lines stay lines; a line too long for a post is split between words, never inside a URL
    or a word; @-mentions are defused. Links are kept (the caller audits them). Raise
    ValueError when the text needs more than max_posts posts.
    """
    if not 1 <= max_posts <= MAX_POSTS:
        raise ValueError(f"max_posts must be between 1 and {MAX_POSTS}, not {max_posts}")
    lines = [defuse_mentions(" ".join(line.split())) for line in text.splitlines()]
    posts = _layout([line for line in lines if line], (), budget, measure, max_posts)
    if not posts:
        raise ValueError(f"the text does not fit {max_posts} posts of {budget} characters")
    return posts


def render_thread(
    correction: Correction,
    *,
    budget: int,
    measure: Measure = len,
    max_posts: int = 4,
    max_links: int | None = None,
    extras: Iterable[str] = (),
) -> tuple[str, ...]:
    """Return the correction as at most max_posts posts of at most budget each (by measure).

    Raise ValueError when not even the headline, the omission line and the extras fit.
    """
    if not 1 <= max_posts <= MAX_POSTS:
        raise ValueError(f"max_posts must be between 1 and {MAX_POSTS}, not {max_posts}")
    if max_links is not None and max_links < 0:
        raise ValueError(f"max_links must be 0 or more, not {max_links}")
    lines = tuple(extras)
    measure = functools.lru_cache(maxsize=8192)(measure)  # blocks recur as the part shrinks
    for part in shrinking(correction):
        if max_links is not None and len(part.references) > max_links:
            continue
        posts = layout(part, budget=budget, measure=measure, extras=lines, max_posts=max_posts)
        if posts is not None:
            return posts
    raise ValueError(
        f"not even the verdict of the correction fits {max_posts} posts of {budget} characters"
    )
