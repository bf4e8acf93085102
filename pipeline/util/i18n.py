"""Replies in the post's language: gettext catalogues through Babel, with plurals, lists, dates
and right-to-left text.

Every user-facing string of a reply is a gettext message: marked `N_("...")` where it is a
constant, looked up with `Translator.gettext`/`ngettext` where it is written. The catalogues
live in `pipeline/locales/<code>/LC_MESSAGES/factbot.po` beside the template `factbot.pot`;
the compiled `factbot.mo` files are checked in, so a fresh clone replies in every language
with no build step. `make catalogs` extracts the template, updates each `.po` and compiles
the `.mo`; a test fails when the template misses a string of the code, when a catalogue
misses a translation, or when a `.mo` is older than its `.po`.

`Catalogues.for_language` picks the reply's translator: the post's language when a catalogue
in use (`FACTBOT_LANGUAGES`) has it (`zh-Hans` and `zh-Hant` both read `zh`), else English
with a one-line notice (`Translator.notice`), `und` included. English needs no catalogue: the
messages are written in it.

Right-to-left replies (ar, fa, he, ur): every left-to-right run inside the text (a Latin name,
a number, "[2]") is wrapped in LEFT-TO-RIGHT ISOLATE … POP DIRECTIONAL ISOLATE (U+2066,
U+2069), so it cannot reorder the Arabic around it. URLs are left outside any isolate: they
always stand after a space at the end of a reference line, and platforms find links by
pattern, so an isolate character would become part of the link.

A name from elsewhere inside a sentence (an attachment's file name: `gettext_naming`) is
set apart whole, between FIRST STRONG ISOLATE and POP DIRECTIONAL ISOLATE (U+2068, U+2069), in
a right-to-left reply and wherever the name itself is right to left: its own first letter
decides its direction.

Why a reply is in its language (`reply_reason`) is read back from the post's language and the
reply's: in the post's language; English because the post's language was not told (`und`); or
English because no catalogue in use writes the post's language. The check's JSON says it.

The language of the person asking (a Discord or Slack client's locale, `locale_language`) reads
as a post language does: "es-ES" is `es`, "zh-CN" `zh-Hans`, "zh-TW" `zh-Hant`.

Failure policy: `Catalogues` raises ConfigError-worthy ValueError for a code with no
catalogue; a translator never raises for a message it lacks (it returns the English).
"""

from __future__ import annotations

import functools
import gettext
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from babel import Locale, UnknownLocaleError
from babel.dates import format_date
from babel.lists import format_list
from babel.numbers import format_decimal

DOMAIN = "factbot"
LOCALES = Path(__file__).resolve().parents[1] / "locales"
SOURCE_LANGUAGE = "en"
DEFAULT_LANGUAGES: tuple[str, ...] = (
    *("en", "es", "pt", "fr", "de", "ar", "hi", "zh"),
    *("ru", "ja", "ko", "it", "nl", "pl"),
    *("tr", "uk", "id", "vi", "fa", "bn"),
)
RTL_LANGUAGES = frozenset({"ar", "fa", "he", "ur"})
UNDETERMINED = "und"
LRI, RLI, FSI, PDI = "\u2066", "\u2067", "\u2068", "\u2069"
_ISOLATES = {ord(ch): None for ch in (LRI, RLI, FSI, PDI)}
_TOKEN_RE = re.compile(r"\S+")
_URL_RE = re.compile(r"^(?:https?://|www\.)", re.IGNORECASE)
_LTR = frozenset({"L", "EN"})
_NUMBER_RE = re.compile(r"\d[\d.,:/%\-]*[.,:/%\-][\d.,:/%\-]*\d|\d+%")
SPACELESS = frozenset({"zh", "ja", "th"})  # sentences follow one another with no space
# A date in a sentence is written in the medium format, except where that reads wrong: Polish
# medium dates put the month in the nominative ("3 maj 2012"); the long one declines it.
DATE_FORMATS = {"pl": "long"}
_RTL = frozenset({"R", "AL", "AN"})
_MARK_RE = re.compile("\x00(\\d+)\x00")


def N_(message: str) -> str:  # noqa: N802 - gettext's conventional name for a marker
    """Mark a constant for extraction; return it unchanged (translated where it is used)."""
    return message


# The verdict words, in Label order (pipeline.records.domain.Label's values).
VERDICTS = {
    "accurate": N_("accurate"),
    "partly accurate": N_("partly accurate"),
    "misleading": N_("misleading"),
    "false": N_("false"),
    "unverifiable": N_("unverifiable"),
}


def catalogue_code(language: str | None) -> str:
    """Return the catalogue a post language reads: its base code (`zh-Hant` reads `zh`)."""
    if not language:
        return UNDETERMINED
    return language.replace("_", "-").split("-", 1)[0].lower()


@dataclass(frozen=True)
class Translator:
    """The messages, plurals, lists, dates and text direction of one reply language."""

    language: str  # the catalogue's code: "es", "zh", or "en" for the English fallback
    translations: gettext.NullTranslations = field(repr=False)
    notice: str = ""  # the one-line notice of an English reply to a post in another language

    @property
    def locale(self) -> Locale:
        """Return the Babel locale of the reply language."""
        return Locale.parse(self.language)

    @property
    def space(self) -> str:
        """Return what separates two sentences: a space, or nothing (Chinese, Japanese, Thai)."""
        return "" if self.language in SPACELESS else " "

    @property
    def rtl(self) -> bool:
        """Return whether the language is written right to left."""
        return self.language in RTL_LANGUAGES

    def gettext(self, message: str, **values: object) -> str:
        """Return message in the reply language, its {placeholders} filled in."""
        text = self.translations.gettext(message)
        return self.isolate(text.format(**values) if values else text)

    def gettext_naming(self, message: str, names: Mapping[str, str], **values: object) -> str:
        """Return message in the reply language with names (a file's) set apart as they are.

        A name is text from elsewhere in any script: in a right-to-left reply, or where the
        name itself holds right-to-left letters, it stands between FIRST STRONG ISOLATE and
        POP DIRECTIONAL ISOLATE (U+2068, U+2069), so neither reorders the other; the words
        around it are isolated as `gettext` isolates them.
        """
        marks = {key: f"\x00{index}\x00" for index, key in enumerate(names)}
        text = self.translations.gettext(message).format(**values, **marks)
        shown = [name.translate(_ISOLATES) for name in names.values()]
        parts = _MARK_RE.split(text)  # words, index, words, index, ... words
        out = []
        for index, part in enumerate(parts):
            if index % 2 == 0:
                out.append(self.isolate(part))
                continue
            name = shown[int(part)]
            fenced = self.rtl or any(unicodedata.bidirectional(ch) in _RTL for ch in name)
            out.append(f"{FSI}{name}{PDI}" if fenced else name)
        return "".join(out)

    def decimal(self, value: float) -> str:
        """Return value with at most one decimal, written as the locale writes numbers."""
        return format_decimal(round(value, 1), format="#,##0.#", locale=self.locale)

    def ngettext(self, singular: str, plural: str, n: int, **values: object) -> str:
        """Return the plural form for n in the reply language; {n} is n written per locale."""
        text = self.translations.ngettext(singular, plural, n)
        return self.isolate(text.format(n=self.number(n), **values))

    def verdict(self, label: str) -> str:
        """Return a verdict word ("false", "unverifiable") in the reply language."""
        return self.gettext(VERDICTS.get(label, label))

    def number(self, n: int) -> str:
        """Return n written as the locale writes numbers."""
        return format_decimal(n, locale=self.locale)

    def join(self, items: Sequence[str]) -> str:
        """Return items as the locale lists them ("[1], [2] and [3]")."""
        return self.isolate(format_list(list(items), locale=self.locale))

    def date(self, day: date) -> str:
        """Return a date as the locale writes it (medium format: "5 Dec 2026"; Polish: long)."""
        shape = DATE_FORMATS.get(self.language, "medium")
        return self.isolate(format_date(day, format=shape, locale=self.locale))

    def isolate(self, text: str) -> str:
        """Return text with its left-to-right runs isolated when the language is right to left."""
        return isolate_ltr(text) if self.rtl else text


def isolate_ltr(text: str) -> str:
    """Return text with each left-to-right run (Latin words, numbers) between LRI and PDI.

    A run is a sequence of whitespace-separated tokens with a left-to-right letter or a
    European digit and no right-to-left letter; leading and trailing punctuation stays
    outside it, and so does a URL. Isolates already in the text are replaced, so applying it
    twice changes nothing.
    """
    text = text.translate(_ISOLATES)
    tokens = [(m.start(), m.group(0)) for m in _TOKEN_RE.finditer(text)]
    kinds = [_kind(token) for _, token in tokens]
    spans: list[tuple[int, int]] = []
    run: list[int] = []  # indexes of the tokens of the run being built
    for index in range(len(tokens) + 1):
        if index < len(tokens) and kinds[index] != "none" and (not run or run[-1] == index - 1):
            run.append(index)
            continue
        while run and kinds[run[-1]] == "digits":  # a plain number ends no run
            run.pop()
        while run and kinds[run[0]] == "digits":
            run.pop(0)
        if run:
            first, last = tokens[run[0]], tokens[run[-1]]
            head, tail = _ltr_span(first[1]), _ltr_span(last[1])
            assert head is not None and tail is not None  # kinds say so
            spans.append((first[0] + head[0], last[0] + tail[1]))
        run = [index] if index < len(tokens) and kinds[index] != "none" else []
    out, last_end = [], 0
    for start, end in spans:
        out += [text[last_end:start], LRI, text[start:end], PDI]
        last_end = end
    out.append(text[last_end:])
    return "".join(out)


def _kind(token: str) -> str:
    """Return "ltr" for a token to isolate, "digits" for a plain number, else "none"."""
    if _ltr_span(token) is not None:
        return "ltr"
    classes = {unicodedata.bidirectional(ch) for ch in token}
    return "digits" if "EN" in classes and not classes & (_RTL | {"L"}) else "none"


def _ltr_span(token: str) -> tuple[int, int] | None:
    """Return the left-to-right part of a token (punctuation around it trimmed), or None.

    A combining mark after the last left-to-right letter (Devanagari's "े", a decomposed
    accent) stays inside, with its letter. A token of digits alone is isolated only with a
    separator inside it ("1,234", "12:30", "2024-05-01", "5%"), which the bidi algorithm could
    reorder; "[2]" or "2024" stay as they are, so reference markers keep their plain form.
    """
    if _URL_RE.match(token):
        return None
    classes = [unicodedata.bidirectional(ch) for ch in token]
    if any(c in _RTL for c in classes) or not any(c in _LTR for c in classes):
        return None
    first = next(i for i, c in enumerate(classes) if c in _LTR)
    last = max(i for i, c in enumerate(classes) if c in _LTR)
    while last + 1 < len(token) and classes[last + 1] == "NSM":  # a vowel sign, an accent
        last += 1
    if "L" not in classes:
        number = _NUMBER_RE.search(token)
        return None if number is None else number.span()
    return first, last + 1


_HANT_REGIONS = frozenset({"tw", "hk", "mo", "hant"})


def locale_language(tag: object) -> str | None:
    """Return the language of an app's locale tag ("es-ES" → "es", "zh-TW" → "zh-Hant").

    What Discord (`interaction.locale`) and Slack (`users.info`'s `user.locale`) say of the
    person asking; None for no tag. Chinese keeps its script, as the post languages do.
    """
    text = str(getattr(tag, "value", tag) or "").strip().replace("_", "-")
    if not text:
        return None
    base, _, rest = text.partition("-")
    base = base.lower()
    if base == "zh":
        return "zh-Hant" if rest.lower().split("-")[0] in _HANT_REGIONS else "zh-Hans"
    return base


def display_name(code: str, *, in_language: str = SOURCE_LANGUAGE) -> str:
    """Return a language's name ("Swahili") in another language, or the code itself."""
    try:
        name = Locale.parse(in_language).languages.get(catalogue_code(code))
    except (ValueError, UnknownLocaleError):
        name = None
    return name or code


# Why a reply is in its language: a code for programs and its sentence for people.
REPLY_REASONS = {
    "post language": "the reply is in the post's language",
    "undetermined": "the post's language could not be told, so the reply is in English",
    "no catalogue": "no reply catalogue in use writes the post's language, so it is in English",
}


def reply_reason(post_language: str | None, reply_language: str) -> str:
    """Return why a reply to a post in `post_language` is in `reply_language` (a REPLY_REASONS key).

    `Catalogues.for_language` chose it: the post's own catalogue when one is in use (English
    for an English post), else English, for a post whose language is `und` (or not identified)
    or one with no catalogue in use.
    """
    if catalogue_code(post_language) == catalogue_code(reply_language):
        return "post language"
    if catalogue_code(post_language) == UNDETERMINED:
        return "undetermined"
    return "no catalogue"


@functools.lru_cache(maxsize=64)
def translator(language: str, directory: Path = LOCALES) -> Translator:
    """Return the translator of a catalogue (English, the source language, needs none)."""
    code = catalogue_code(language)
    if code == SOURCE_LANGUAGE:
        return Translator(SOURCE_LANGUAGE, gettext.NullTranslations())
    path = directory / code / "LC_MESSAGES" / f"{DOMAIN}.mo"
    if not path.is_file():
        raise ValueError(f"no reply catalogue for {language!r}: {path} does not exist")
    with path.open("rb") as handle:
        return Translator(code, gettext.GNUTranslations(handle))


def available(directory: Path = LOCALES) -> list[str]:
    """Return the codes of every compiled catalogue, English (the source) first."""
    found = sorted(p.parent.parent.name for p in directory.glob(f"*/LC_MESSAGES/{DOMAIN}.mo"))
    return [SOURCE_LANGUAGE, *found]


class Catalogues:
    """The reply catalogues in use (`FACTBOT_LANGUAGES`), each loaded once."""

    def __init__(self, languages: Iterable[str] = DEFAULT_LANGUAGES, *, directory: Path = LOCALES):
        codes = [catalogue_code(code) for code in languages]
        have = set(available(directory))
        missing = [code for code in codes if code not in have]
        if missing:
            raise ValueError(
                f"no reply catalogue for {', '.join(missing)}; the catalogues are "
                f"{', '.join(sorted(have))} (pipeline/locales)"
            )
        self.languages = tuple(dict.fromkeys([*codes]))
        self._directory = directory

    def for_language(self, language: str | None) -> Translator:
        """Return the reply's translator for a post language, English with a notice if none."""
        code = catalogue_code(language)
        if code in self.languages or code == SOURCE_LANGUAGE:
            return translator(code, self._directory)
        english = translator(SOURCE_LANGUAGE, self._directory)
        if code == UNDETERMINED:
            notice = english.gettext(
                "(factbot could not tell which language this post is in, so it replies in English.)"
            )
        else:
            notice = english.gettext(
                "(factbot does not reply in {language} yet, so this reply is in English.)",
                language=display_name(code),
            )
        return Translator(SOURCE_LANGUAGE, english.translations, notice=notice)
