"""Text helpers: cleaning social-media text, splitting sentences, words and keywords.

Every script is text. A word is a run of letters, marks and digits (marks matter: Devanagari's
vowel signs are not letters); Han and kana have no spaces, so each character is a token, and a
run of Thai (no spaces between words either) is one token. `word_count` measures length in
English-like words: 1.5 Han or kana characters or 4 Thai characters make a word, the usual
lengths of a word in those languages. Sentences end at . ! ? followed by a space and a capital,
a digit or a letter of a script without case, and at 。！？ (no space needed), । ॥ ؟ ۔; after
Han or kana an ASCII ! or ? ends one too ("震惊!央行…"), and so does a " | " between Devanagari
words (typed for । on keyboards that lack it).
"""

from __future__ import annotations

import html
import math
import re
import unicodedata

import regex

URL_RE = re.compile(r"(?:https?://|www\.)[^\s<>\"')\]]+", re.IGNORECASE)
MENTION_RE = re.compile(r"(?<![\w@])@[A-Za-z0-9_.\-]+(?:@[A-Za-z0-9_.\-]+)?")
HASHTAG_RE = re.compile(r"(?<!\w)#(\w+)")
RT_RE = re.compile(r"^\s*RT\b(?:\s*@[A-Za-z0-9_]+)?\s*:?\s*", re.IGNORECASE)
SPACE_RE = re.compile(r"[ \t\r\f\v]+")
_UNSPACED = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}ー"
WORD_RE = regex.compile(
    r"[\p{Han}\p{Hiragana}\p{Katakana}ー]|\p{Thai}+"
    rf"|(?:(?![{_UNSPACED}])[\p{{L}}\p{{N}}])(?:(?![{_UNSPACED}])[\p{{L}}\p{{M}}\p{{N}}'’\-])*"
)
_CJK_RE = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}ー]")
_THAI_RE = regex.compile(r"\p{Thai}+")
CJK_CHARS_PER_WORD = 1.5
THAI_CHARS_PER_WORD = 4.0

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
_SENTENCE_END_RE = regex.compile(
    r"(?<=[.!?…])[\"'”’»)\]]*\s+(?=[\"'“‘«¿¡(\[]?[\p{Lu}\p{Lo}\p{N}])"
    r"|(?<=[。！？｡])[\"'”’」』）)\]]*\s*(?=\S)"
    r"|(?<=[\p{Han}\p{Hiragana}\p{Katakana}ー][!?]+)[\"'”’」』）)\]]*\s*(?=\S)"
    r"|(?<=[।॥؟۔])\s*(?=\S)"
    r"|(?<=\p{Devanagari}[\p{M}]*)\s+\|\s+(?=\p{Devanagari})"
)
# What ends a question, in the scripts that have their own question mark.
QUESTION_MARKS = ("?", "？", "؟")
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
# Function words of the other Latin-script languages, so their keywords are content words too;
# those that are English content words ("die", "war", "son", "con") are left in.
STOPWORDS_BY_LANGUAGE: dict[str, frozenset[str]] = {
    "es": frozenset(
        """el la los las un una unos unas de del al en y o que es fue ser ha han se su sus
        por para sobre como más pero este esta estos estas ese esa lo le les no ya muy
        también según""".split()
    ),
    "pt": frozenset(
        """o os as um uma de do da dos das em no na nos nas e ou que é são foi ser se seu sua
        por para com sem sobre como mais mas este esta isso não já muito também segundo
        ao""".split()
    ),
    "fr": frozenset(
        """le la les un une des de du au aux et ou que qui est sont été être a ont se sa ses
        pour par avec sans sur dans comme mais ce cette ces ne pas il elle ils en y selon
        l d qu""".split()
    ),
    "de": frozenset(
        """der das den dem des ein eine einen einem einer und oder dass ist sind wird
        werden haben sich für ohne auf in im an am zu zum zur von vom wie
        mehr aber nicht auch nur laut es er sie""".split()
    ),
    "it": frozenset(
        """il lo la i gli le un una di del della dei delle e o che è sono stato ha hanno si suo
        sua per senza su in nel nella più ma non anche secondo""".split()
    ),
}
ALL_STOPWORDS = STOPWORDS.union(*STOPWORDS_BY_LANGUAGE.values())
_ELISION_RE = regex.compile(
    r"^(?:[cdjlmnst]|qu|jusqu|lorsqu|puisqu|dell|nell|all|sull)['’](?=\p{L})"
)


def is_emoji_or_symbol(char: str) -> bool:
    """Return whether char is an emoji, pictograph or other symbol rather than text."""
    category = unicodedata.category(char)
    return category in ("So", "Sk", "Cs", "Co") or 0x1F000 <= ord(char) <= 0x1FAFF


# A zero-width (non-)joiner between two letters of the Arabic script or of an Indic script is
# spelling (Persian "می‌گویند", Bengali "র‍্যাব"); anywhere else it becomes a space, as ZWSP does.
_SPELT = "\u0600-\u08ff\u0900-\u0dff"
_LOOSE_JOINER_RE = re.compile(rf"(?<![{_SPELT}])[\u200c\u200d]|[\u200c\u200d](?![{_SPELT}])")


def clean_post_text(text: str) -> str:
    """Remove URLs, mentions, emojis and retweet markers; keep hashtag words.

    Zero-width spaces and joiners become spaces, except a joiner inside an Arabic-script or
    Indic word, which is part of its spelling.
    """
    text = html.unescape(text)
    text = unicodedata.normalize("NFKC", text)
    text = RT_RE.sub("", text)
    text = URL_RE.sub(" ", text)
    text = MENTION_RE.sub(" ", text)
    text = HASHTAG_RE.sub(r"\1", text)
    text = "".join(" " if is_emoji_or_symbol(c) or c in "\u200b\ufe0f" else c for c in text)
    text = _LOOSE_JOINER_RE.sub(" ", text)
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
    """Return the word tokens of text: words, each Han or kana character, runs of Thai."""
    return [str(w) for w in WORD_RE.findall(text)]


def word_count(text: str) -> int:
    """Return the length of text in English-like words (Han, kana and Thai by characters)."""
    cjk = len(_CJK_RE.findall(text))
    thai = sum(len(run) for run in _THAI_RE.findall(text))
    spaced = sum(1 for w in WORD_RE.findall(text) if not _CJK_RE.match(w) and not _THAI_RE.match(w))
    return spaced + math.ceil(cjk / CJK_CHARS_PER_WORD) + math.ceil(thai / THAI_CHARS_PER_WORD)


def _search_tokens(text: str) -> list[str]:
    """Return word tokens with runs of Han and kana kept whole (what a word index holds)."""
    return [str(t) for t in regex.findall(rf"[{_UNSPACED}]+|{WORD_RE.pattern}", text)]


def keywords(text: str, *, limit: int = 16) -> list[str]:
    """Return distinct content words of text, in order, lower-cased.

    Letters with accents stay ("anunció", "bestätigt"), French and Italian elisions go
    ("l'OMS" -> "oms"), and the function words of English, Spanish, Portuguese, French, German
    and Italian are left out; a run of Han, kana or Thai is one keyword.
    """
    seen: dict[str, None] = {}
    for word in _search_tokens(text):
        token = _ELISION_RE.sub("", word.lower()).strip("'’-")
        if len(token) < 2 or token in ALL_STOPWORDS:
            continue
        seen.setdefault(token, None)
        if len(seen) >= limit:
            break
    return list(seen)
