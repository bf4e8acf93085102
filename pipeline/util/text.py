"""Text helpers: cleaning social-media text, splitting sentences, keywords."""

from __future__ import annotations

import html
import re
import unicodedata

URL_RE = re.compile(r"(?:https?://|www\.)[^\s<>\"')\]]+", re.IGNORECASE)
MENTION_RE = re.compile(r"(?<![\w@])@[A-Za-z0-9_.\-]+(?:@[A-Za-z0-9_.\-]+)?")
HASHTAG_RE = re.compile(r"(?<!\w)#(\w+)")
RT_RE = re.compile(r"^\s*RT\b(?:\s*@[A-Za-z0-9_]+)?\s*:?\s*", re.IGNORECASE)
SPACE_RE = re.compile(r"[ \t\r\f\v]+")
WORD_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9'’\-]*")

# A sentence ends at . ! ? (or a closing quote after them) followed by space and a capital,
# digit or quote; common abbreviations and initials are protected first.
_ABBREVIATIONS = (
    "Mr",
    "Mrs",
    "Ms",
    "Dr",
    "Prof",
    "Sr",
    "Jr",
    "St",
    "Gen",
    "Gov",
    "Sen",
    "Rep",
    "Pres",
    "Lt",
    "Col",
    "No",
    "vs",
    "etc",
    "Inc",
    "Ltd",
    "Co",
    "Corp",
    "Jan",
    "Feb",
    "Mar",
    "Apr",
    "Jun",
    "Jul",
    "Aug",
    "Sep",
    "Sept",
    "Oct",
    "Nov",
    "Dec",
    "approx",
    "e.g",
    "i.e",
)
_ABBREV_RE = re.compile(r"\b(" + "|".join(re.escape(a) for a in _ABBREVIATIONS) + r")\.", re.I)
_INITIALS_RE = re.compile(r"\b((?:[A-Z]\.){2,})")
_SENTENCE_END_RE = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])")
_PROTECT = "\u2024"  # one-dot leader stands in for a protected full stop

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them themselves
    then there these they this those through to too under until up very was we were what when where
    which while who whom why will with would you your yours yourself yourselves says said say
    new news via amp rt""".split()
)


def is_emoji_or_symbol(char: str) -> bool:
    """Return whether char is an emoji, pictograph or other symbol rather than text."""
    category = unicodedata.category(char)
    return category in ("So", "Sk", "Cs", "Co") or 0x1F000 <= ord(char) <= 0x1FAFF


def clean_post_text(text: str) -> str:
    """Remove URLs, mentions, emojis and retweet markers; keep hashtag words."""
    text = html.unescape(text)
    text = unicodedata.normalize("NFKC", text)
    text = RT_RE.sub("", text)
    text = URL_RE.sub(" ", text)
    text = MENTION_RE.sub(" ", text)
    text = HASHTAG_RE.sub(r"\1", text)
    text = "".join(
        " " if is_emoji_or_symbol(c) or c in "\u200b\u200c\u200d\ufe0f" else c for c in text
    )
    lines = [SPACE_RE.sub(" ", line).strip(" :;,|-–—") for line in text.split("\n")]
    return "\n".join(line for line in lines if line)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Return the (start, end) offsets in text of its sentences; lines are always boundaries.

    Each span is stripped of surrounding whitespace, so `text[start:end]` is the sentence
    exactly as it is written in text.
    """
    spans: list[tuple[int, int]] = []
    offset = 0
    for line in text.split("\n"):
        # protecting a full stop swaps one character for another, so offsets stay true
        protected = _ABBREV_RE.sub(lambda m: m.group(1) + _PROTECT, line)
        protected = _INITIALS_RE.sub(lambda m: m.group(1).replace(".", _PROTECT), protected)
        start = 0
        for gap in [*_SENTENCE_END_RE.finditer(protected), None]:
            end = gap.start() if gap else len(line)
            part = line[start:end]
            stripped = part.strip()
            if stripped:
                lead = len(part) - len(part.lstrip())
                spans.append((offset + start + lead, offset + start + lead + len(stripped)))
            if gap:
                start = gap.end()
        offset += len(line) + 1
    return spans


def split_sentences(text: str) -> list[str]:
    """Split text into sentences; lines are always sentence boundaries."""
    return [text[start:end] for start, end in sentence_spans(text)]


def words(text: str) -> list[str]:
    """Return the word tokens of text."""
    return WORD_RE.findall(text)


def keywords(text: str, *, limit: int = 16) -> list[str]:
    """Return distinct content words of text, in order, lower-cased."""
    seen: dict[str, None] = {}
    for word in words(text):
        token = word.lower().strip("'’-")
        if len(token) < 2 or token in STOPWORDS:
            continue
        seen.setdefault(token, None)
        if len(seen) >= limit:
            break
    return list(seen)
