"""Language identification: which language a post or claim is written in, or `und`.

Script rules decide first: letters are counted by Unicode script after links, mentions,
hashtags, emojis and digits are removed. A script only one supported language writes (Hangul,
Thai, Greek, Hebrew, kana, ...) names it; Han without kana is Chinese, `zh-Hant` when its
traditional-only characters outnumber its simplified-only ones, else `zh-Hans`; a script no
supported language writes (Ethiopic, Tibetan, ...) is `und`. Latin, Cyrillic, Arabic and
Devanagari text goes to lingua (`lingua-language-detector`, its n-gram models in the wheel),
restricted to the supported languages of that script. Its best language is kept when its
confidence reaches `min_confidence`; the platform's own language field (`hint`: Mastodon's
`language`, Bluesky's `langs`) is kept instead when lingua finds it at least `HINT_SHARE` as
likely as its best, so a two-word post in a known language is not `und`. Romanised Hindi and
Arabizi (Arabic written with Latin letters and digits) are `und`: no supported model reads them.

Function words have the last say where lingua errs on short texts (`_by_words`): in Latin
script a claim full of names ("Michelle Obama ordered $400 worth of lobster and caviar at a New
York hotel.") can look German to the n-grams, and in Devanagari a short Hindi post Marathi. Each
script's main language (`PREFERRED`: English, Hindi) is taken instead of lingua's answer, `und`
included, when the text holds more of its function words than of any other language of that
script (`FUNCTION_WORDS`, the most frequent closed-class words, written for this): "of", "and",
"at" outvote nothing; a Spanish "la", "de", "que" outvote an English "in". Another language's
function words decide only a text lingua left `und`.

Codes are ISO 639-1, `zh-Hans`/`zh-Hant`, or `und` (undetermined).

Failure policy: never raises; text with no letters is `und`.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pipeline.util.text import URL_RE, is_emoji_or_symbol

if TYPE_CHECKING:
    from lingua import LanguageDetector

UNDETERMINED = "und"

# Languages lingua tells apart within their script. Kept short on purpose: every one preloads
# its n-gram models (about 20 MB each), and each one more is a near neighbour that short
# posts get mistaken for (Tagalog and Swahili took English and Spanish posts when present).
MODEL_LANGUAGES: dict[str, tuple[str, ...]] = {
    "latin": ("en", "es", "pt", "fr", "de", "it", "nl", "pl", "tr", "id", "vi"),
    "cyrillic": ("ru", "uk"),
    "arabic": ("ar", "fa", "ur"),
    "devanagari": ("hi", "mr"),
}
# Scripts that one supported language writes: the script alone names it.
SCRIPT_LANGUAGES: dict[str, str] = {
    "hangul": "ko",
    "kana": "ja",
    "thai": "th",
    "greek": "el",
    "hebrew": "he",
    "georgian": "ka",
    "armenian": "hy",
    "bengali": "bn",
    "gurmukhi": "pa",
    "gujarati": "gu",
    "tamil": "ta",
    "telugu": "te",
}
SUPPORTED: frozenset[str] = frozenset(
    {code for codes in MODEL_LANGUAGES.values() for code in codes}
    | set(SCRIPT_LANGUAGES.values())
    | {"zh-Hans", "zh-Hant"}
)
# From this many characters (links, mentions, digits and emojis removed), lingua's trigram-only
# models decide: on sentences that long they read the fixture's sentences as well as all five
# n-gram sizes do, with a third of the CPU time (p95 0.33 ms against 1.0). A call that short is
# rarely preempted on a loaded machine; the ~1 ms ones were, and waited ~8 ms for a core
# (docs/results, the languages page). Two-word posts and short claims keep every n-gram size.
LONG_TEXT = 60
# Each script's main language, taken over lingua's answer on the evidence of its function words.
PREFERRED: dict[str, str] = {"latin": "en", "devanagari": "hi"}
# From this many words, a text lingua leaves `und` but leans to the main language for is read
# as it (a claim); a two-word post ("Fake news") stays `und` unless the platform says more.
MIN_CLAIM_WORDS = 3
# The most frequent closed-class words of each language lingua tells apart in those scripts
# (lower case, as `_WORD` cuts them); a word two languages share counts for both.
FUNCTION_WORDS: dict[str, frozenset[str]] = {
    code: frozenset(words.split())
    for code, words in {
        "en": "the of and to in is was for that on with as by at from his her she it its they "
        "their them are were be been being has have had will would not this these those who "
        "whom which what when where an a or but than after about over into says said did does "
        "do can could should there our we you your my all more only also just out up no off "
        "because while during against between through shows",
        "es": "el la los las de del que y en un una unos unas es son fue por para con no se su "
        "sus al lo como más pero ya este esta esto ese esa hay muy sin sobre también me le les "
        "ha han a o ni entre cuando todo todos dijo según",
        "pt": "o os a as de do da dos das que e em no na nos nas um uma é são foi por para com "
        "não se seu sua ao à como mais mas já este esta isso isto esse essa há muito sem sobre "
        "também ele ela eles pelo pela vai diz disse segundo",
        "fr": "le la les de des du un une et est sont en que qui pour dans sur par avec pas ne "
        "ce cette ces il elle ils on au aux se son sa ses a à plus mais ou été être leur selon "
        "dit lui nous vous y",
        "de": "der die das den dem des und ist sind war ein eine einen einem einer nicht zu von "
        "mit auf für im in sich es auch als an was wird werden hat haben bei nach aus wie aber "
        "so noch er sie wir ihr dass oder nur um über",
        "it": "il lo la i gli le di del della dei delle che e è un una uno in per con non si da "
        "dal al alla sono ha hanno come più ma anche questo questa sul nel nella tra fra era "
        "stato dopo secondo",
        "nl": "de het een en van in is op te dat die niet met voor zijn er aan ook als bij om "
        "maar was heeft hebben wordt worden door naar uit dan of hij ze we over nog dit deze "
        "wel geen",
        "pl": "i w z na się nie to że do jest są o a jak po od za co ale by tak czy jego jej być "
        "było był oraz ze we dla przez już tylko ten ta te",
        "tr": "ve bir bu da de için ile olarak çok daha gibi en ne o ama her şu olan var yok mi "
        "mı değil kadar sonra diye ise oldu",
        "id": "yang dan di ke dari ini itu untuk dengan tidak akan ada pada adalah dalam oleh "
        "juga saya kami mereka sudah bisa karena atau telah bahwa jadi para kata",
        "vi": "của và là có không được những các một người trong cho đã với này sẽ đó khi từ "
        "theo tại về nhiều cũng rằng bị ra lại năm",
        "hi": "है हैं था थी थे का की के में से को ने नहीं यह वह ये वो और क्या भी पर हो रहा रही "
        "रहे गया गई गए कि लिए जो इस उस तो कर करता करती करते होता होती होते हुआ हुई दिया किया "
        "एक अब बहुत दोस्तों साथ बाद वाला वाली",
        "mr": "आहे आहेत नाही आणि मध्ये होते होता होती हे ते या व ला चा ची चे च्या आम्ही तुम्ही "
        "केले केली केला झाले झाला झाली नये सर्व पण म्हणून काय हा राहणार नसणार असा असे आता "
        "दिला गेला आला येते",
    }.items()
}
MIN_CONFIDENCE = 0.5  # lingua's share for its best language, among that script's languages
HINT_SHARE = 0.25  # the platform's language is kept when lingua finds it this likely vs best

# (first, last, script) code point ranges; letters outside them are in an unsupported script.
_RANGES: tuple[tuple[int, int, str], ...] = (
    (0x0041, 0x024F, "latin"),
    (0x0370, 0x03FF, "greek"),
    (0x0400, 0x052F, "cyrillic"),
    (0x0530, 0x058F, "armenian"),
    (0x0590, 0x05FF, "hebrew"),
    (0x0600, 0x06FF, "arabic"),
    (0x0750, 0x077F, "arabic"),
    (0x08A0, 0x08FF, "arabic"),
    (0x0900, 0x097F, "devanagari"),
    (0x0980, 0x09FF, "bengali"),
    (0x0A00, 0x0A7F, "gurmukhi"),
    (0x0A80, 0x0AFF, "gujarati"),
    (0x0B80, 0x0BFF, "tamil"),
    (0x0C00, 0x0C7F, "telugu"),
    (0x0E00, 0x0E7F, "thai"),
    (0x10A0, 0x10FF, "georgian"),
    (0x1100, 0x11FF, "hangul"),
    (0x1E00, 0x1EFF, "latin"),
    (0x1F00, 0x1FFF, "greek"),
    (0x3040, 0x30FF, "kana"),
    (0x3130, 0x318F, "hangul"),
    (0x31F0, 0x31FF, "kana"),
    (0x3400, 0x4DBF, "han"),
    (0x4E00, 0x9FFF, "han"),
    (0xAC00, 0xD7AF, "hangul"),
    (0xF900, 0xFAFF, "han"),
    (0xFB50, 0xFDFF, "arabic"),
    (0xFE70, 0xFEFF, "arabic"),
    (0xFF21, 0xFF5A, "latin"),
    (0xFF66, 0xFF9F, "kana"),
    (0x20000, 0x2FFFF, "han"),
)
_STARTS = [first for first, _, _ in _RANGES]

# Characters written differently in the two Chinese scripts, in pairs (simplified, traditional),
# among the most frequent in news and posts. Counting them tells zh-Hans from zh-Hant.
_HAN_PAIRS = (
    "这這国國说說时時们們会會为為个個来來对對发發学學后後过過经經现現没沒还還进進长長开開关關"
    "问問间間东東华華车車门門马馬书書气氣电電话話语語认認让讓给給线線药藥医醫种種统統总總选選"
    "举舉报報导導网網据據称稱实實该該将將与與万萬亿億岁歲并並从從动動无無样樣机機两兩头頭见見"
    "变變应應业業产產军軍战戰讯訊闻聞视視频頻区區县縣湾灣龙龍权權务務员員议議协協党黨体體际際"
    "测測试試验驗数數显顯确確诊診断斷护護卫衛组組织織类類级級纪紀录錄资資费費贵貴钱錢银銀铁鐵"
    "价價买買卖賣货貨币幣观觀众眾传傳转轉专專记記讲講读讀写寫听聽声聲乐樂爱愛亲親热熱温溫灾災"
    "难難险險园園图圖场場广廣边邊达達运運连連远遠邮郵乡鄉疗療压壓标標准準师師亚亞欧歐罗羅尔爾"
)
_SIMPLIFIED = frozenset(_HAN_PAIRS[0::2])
_TRADITIONAL = frozenset(_HAN_PAIRS[1::2])

# Romanised Hindi: function words of Hindi that no supported Latin-script language uses.
_HINGLISH = frozenset(
    "hai hain nahi nahin kya aur mein tha thi hoga hogi raha rahe rahi kaha kiya gaya gayi bhi "
    "kyun kyunki bahut yeh woh kuch abhi sarkar karo karna wala wali log ji matlab".split()
)
_HINGLISH_PARTICLES = frozenset("ka ki ke ko ne se ye wo".split())
# Arabizi: Arabic sounds written with digits inside Latin words ("7ekouma", "2alet", "3arab").
# A digit inside a word, or before two letters or more; not after them ("co2", "covid19", "g20")
_ARABIZI_WORD = re.compile(r"[a-z]+[235679][a-z]+|[235679][a-z]{2,}")
# ordinals, decades, times and units: "2nd", "1990s", "5pm", "3km"
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th|s|am|pm|km|kg|mg|ml|[mgt]b|mm|cm|ft|lbs?|mph|hrs?|yrs?)")
_TOKEN = re.compile(r"[a-z0-9]+")
_MENTION_OR_TAG = re.compile(r"(?<![\w@#])[@#][\w.\-]+(?:@[\w.\-]+)?")
_LATIN_WORD = re.compile(r"[^\W\d_]+")
# A word with its marks: combining accents and Devanagari's vowel signs (not its danda or digits)
_WORD = re.compile(r"(?:[^\W\d_]|[\u0300-\u036f\u0900-\u0963\u0971-\u097f])+")


@dataclass(frozen=True)
class Identified:
    """A text's language (ISO 639-1, `zh-Hans`, `zh-Hant` or `und`) and how it was decided."""

    code: str
    confidence: float
    method: str  # "script", "model", "hint", or why it is `und`

    @property
    def determined(self) -> bool:
        """Return whether a language was found."""
        return self.code != UNDETERMINED


def letters_by_script(text: str) -> Counter[str]:
    """Return how many letters of each script text has, links, mentions and hashtags aside."""
    text = _MENTION_OR_TAG.sub(" ", URL_RE.sub(" ", text))
    counts: Counter[str] = Counter()
    for ch in text:
        if not ch.isalpha() or is_emoji_or_symbol(ch):
            continue
        counts[_script(ord(ch))] += 1
    return counts


def script_language(text: str) -> str | None:
    """Return the language the script alone decides, `und`, or None when a model must decide."""
    counts = letters_by_script(text)
    if not counts:
        return UNDETERMINED
    return _by_script(text, counts, hint=None)


class LanguageIdentifier:
    """Script rules, then lingua over the supported languages of the text's script.

    lingua's models load once, on first use or in `warm()`, and stay for the process. Texts of
    `long_text` characters or more are read by the trigram-only models (0: never), shorter ones
    by all n-gram sizes unless `low_accuracy` puts every text on trigrams.
    """

    def __init__(
        self,
        *,
        min_confidence: float = MIN_CONFIDENCE,
        languages: dict[str, tuple[str, ...]] | None = None,
        preload: bool = True,
        low_accuracy: bool = False,
        long_text: int = LONG_TEXT,
    ) -> None:
        if long_text < 0:
            raise ValueError(
                f"long_text must be 0 (off) or a number of characters, not {long_text}"
            )
        self.min_confidence = min_confidence
        self.languages = languages if languages is not None else MODEL_LANGUAGES
        self.preload = preload
        self.low_accuracy = low_accuracy
        self.long_text = long_text
        self._detectors: dict[bool, LanguageDetector] = {}  # low accuracy? -> detector
        self._lock = threading.Lock()

    def warm(self) -> None:
        """Load lingua's models now (seconds), not on the first post."""
        self._model(low=self.low_accuracy)
        if self.long_text and not self.low_accuracy:
            self._model(low=True)

    def identify(self, text: str, *, hint: str | None = None) -> Identified:
        """Return the language of text; `hint` is the platform's own language field, if any."""
        counts = letters_by_script(text)
        if not counts:
            return Identified(UNDETERMINED, 1.0, "no letters")
        script = counts.most_common(1)[0][0]
        decided = _by_script(text, counts, hint=hint)
        if decided is not None:
            method = "script" if decided != UNDETERMINED else f"unsupported script ({script})"
            return Identified(decided, 1.0, method)
        if script == "latin":
            odd = _romanised(text)
            if odd:
                return Identified(UNDETERMINED, 1.0, odd)
        return self._by_model(text, script, _base(hint))

    def _by_model(self, text: str, script: str, hint: str | None) -> Identified:
        codes = self.languages.get(script, ())
        if not codes:
            return Identified(UNDETERMINED, 1.0, f"unsupported script ({script})")
        if len(codes) == 1:
            return Identified(codes[0], 1.0, "script")
        plain = _plain(text)
        low = self.low_accuracy or bool(self.long_text and len(plain) >= self.long_text)
        values = {
            c.language.iso_code_639_1.name.lower(): c.value
            for c in self._model(low=low).compute_language_confidence_values(plain)
        }
        scores = {code: values.get(code, 0.0) for code in codes}
        found = _by_scores(scores, hint, self.min_confidence)
        return _by_words(plain, script, scores, found)

    def _model(self, *, low: bool) -> LanguageDetector:

        with self._lock:
            detector = self._detectors.get(low)
            if detector is None:
                from lingua import IsoCode639_1, LanguageDetectorBuilder

                isos = [
                    getattr(IsoCode639_1, code.upper())
                    for codes in self.languages.values()
                    for code in codes
                ]
                builder = LanguageDetectorBuilder.from_iso_codes_639_1(*isos)
                if low:  # trigrams only: ~30 MB instead of ~430, worse when short
                    builder = builder.with_low_accuracy_mode()
                if self.preload:
                    builder = builder.with_preloaded_language_models()
                detector = self._detectors[low] = builder.build()
            return detector


def _by_scores(scores: dict[str, float], hint: str | None, min_confidence: float) -> Identified:
    """Return lingua's answer from its scores over one script's languages, and the hint."""
    total = sum(scores.values())
    if total <= 0.0:
        return Identified(UNDETERMINED, 0.0, "no model reading")
    best = max(scores, key=lambda code: scores[code])
    share = scores[best] / total
    if hint in scores and hint != best and scores[hint] >= HINT_SHARE * scores[best]:
        return Identified(hint, round(scores[hint] / total, 3), "hint")
    if share >= min_confidence:
        return Identified(best, round(share, 3), "model")
    if hint == best:
        return Identified(best, round(share, 3), "hint")
    return Identified(UNDETERMINED, round(share, 3), "below the confidence bar")


def function_words(text: str, codes: tuple[str, ...]) -> dict[str, int]:
    """Return how many of text's words are function words of each language in codes."""
    words = [w.lower() for w in _WORD.findall(text)]
    return {code: sum(w in FUNCTION_WORDS.get(code, ()) for w in words) for code in codes}


def _by_words(text: str, script: str, scores: dict[str, float], found: Identified) -> Identified:
    """Return the language whose function words outvote every other's, where lingua erred.

    lingua's n-grams misread short texts full of names (an English claim as German or `und`)
    and short Hindi as Marathi; a language's own function words do not. The script's main
    language (`PREFERRED`) is taken over any answer of lingua's, and over `und` where it is
    lingua's best guess and no other language's words outvote it; another language only over
    `und`, and only where it is lingua's best guess too. Otherwise a tie, or a text with none
    of these words, keeps lingua's answer.
    """
    preferred = PREFERRED.get(script)
    codes = tuple(scores)
    if found.code == preferred or not any(code in FUNCTION_WORDS for code in codes):
        return found
    counts = function_words(text, codes)
    top = max(counts.values())
    winners = [code for code, n in counts.items() if n == top]
    best = max(scores, key=lambda code: scores[code])
    if top == 0 or len(winners) > 1:
        if (
            found.code == UNDETERMINED
            and best == preferred
            and counts.get(preferred, 0) == top
            and len(_WORD.findall(text)) >= MIN_CLAIM_WORDS
        ):
            # a claim lingua leans to the main language for, only short of its bar ("Vaccines
            # cause autism."), with no other language's words outvoting it: not `und`
            return Identified(preferred, found.confidence, "model's best, words agree")
        return found
    if winners[0] == preferred or (found.code == UNDETERMINED and winners[0] == best):
        return Identified(winners[0], found.confidence, "function words")
    return found


def _script(point: int) -> str:
    for first, last, script in _RANGES:
        if point < first:
            return "other"
        if point <= last:
            return script
    return "other"


def _by_script(text: str, counts: Counter[str], *, hint: str | None) -> str | None:
    """Return what the scripts decide: a language, `und`, or None (a model must read it)."""
    cjk = counts["han"] + counts["kana"]
    script = counts.most_common(1)[0][0]
    if cjk and cjk >= max(counts.values()):
        # Any kana makes it Japanese; Han alone is Chinese, whatever a short text looks like.
        return "ja" if counts["kana"] else chinese_variant(text, hint=hint)
    if script in SCRIPT_LANGUAGES:
        return SCRIPT_LANGUAGES[script]
    if script in MODEL_LANGUAGES:
        return None
    return UNDETERMINED


def chinese_variant(text: str, *, hint: str | None = None) -> str:
    """Return `zh-Hant` when text's traditional-only characters outnumber its simplified ones."""
    simplified = sum(ch in _SIMPLIFIED for ch in text)
    traditional = sum(ch in _TRADITIONAL for ch in text)
    if traditional != simplified:
        return "zh-Hant" if traditional > simplified else "zh-Hans"
    lowered = (hint or "").lower()
    traditional_hint = lowered.startswith(("zh-hant", "zh-tw", "zh-hk", "zh-mo"))
    return "zh-Hant" if traditional_hint else "zh-Hans"


def _romanised(text: str) -> str | None:
    """Return why Latin text is a romanised language no model reads, or None."""
    plain = _MENTION_OR_TAG.sub(" ", URL_RE.sub(" ", text))
    arabizi = [
        t
        for t in _TOKEN.findall(plain.lower())
        if _ARABIZI_WORD.fullmatch(t) and not _ORDINAL.fullmatch(t)
    ]
    if len(arabizi) >= 2:
        return "arabizi"
    tokens = [w.lower() for w in _LATIN_WORD.findall(plain)]
    hindi = sum(t in _HINGLISH for t in tokens)
    particles = sum(t in _HINGLISH_PARTICLES for t in tokens)
    if (
        tokens
        and hindi >= 1
        and hindi + particles >= 3
        and (hindi + particles) / len(tokens) >= 0.3
    ):
        return "romanised hindi"
    return None


def _plain(text: str) -> str:
    """Return text without links, mentions, hashtags, emojis and digits (what lingua reads)."""
    text = _MENTION_OR_TAG.sub(" ", URL_RE.sub(" ", text))
    return " ".join(
        "".join(" " if ch.isdigit() or is_emoji_or_symbol(ch) else ch for ch in text).split()
    )


def _base(hint: str | None) -> str | None:
    """Return the ISO 639-1 part of a platform's language tag ("pt-BR" -> "pt")."""
    if not hint:
        return None
    return re.split(r"[-_]", hint.strip(), maxsplit=1)[0].lower() or None
