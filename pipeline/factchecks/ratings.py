"""The rating vocabulary: a fact-checker's rating, in words or on a numeric scale, as a Label."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from pipeline.records.domain import Label

# Where a rating's own words stop: "False. The video shows..." is rated "False".
_RATING_BREAK = re.compile(r"[.:;!?()\u2013\u2014]")

_PHRASES: dict[Label, tuple[str, ...]] = {
    Label.FALSE: (
        "false", "pants on fire", "fake", "incorrect", "mostly false", "not true", "untrue",
        "wrong", "inaccurate", "mostly inaccurate", "fabricated", "hoax", "misattributed",
        "four pinocchios", "three pinocchios",
    ),
    # "Mostly true" counts as accurate: the reviewer found the claim's substance right.
    Label.ACCURATE: (
        "true", "correct", "accurate", "mostly true", "mostly correct", "mostly accurate",
        "one pinocchio", "geppetto checkmark",
    ),
    Label.PARTLY_ACCURATE: (
        "half true", "half truth", "mixture", "mixed", "partly false", "partly true",
        "partially false", "partially true", "partly accurate", "partially accurate",
        "partly correct", "partially correct", "two pinocchios",
    ),
    Label.MISLEADING: (
        "misleading", "missing context", "out of context", "distorts the facts", "exaggerated",
        "exaggeration", "cherry picked", "lacks context", "needs context", "miscaptioned",
        "spins the facts", "false context", "manipulated",
    ),
    Label.UNVERIFIABLE: (
        "unproven", "unsupported", "no evidence", "unverified", "research in progress",
        "unsubstantiated", "unverifiable", "insufficient evidence", "not proven", "undetermined",
    ),
}  # fmt: skip
# The same ratings as fact-checkers in the other supported languages write them (their own
# rating scales: Maldita, Newtral, Chequeado, Lupa, Aos Fatos, AFP Factuel, Les Décodeurs,
# CORRECTIV, dpa, Pagella Politica, 台灣事實查核中心, 有据, Misbar, Fatabyyano, BOOM, Vishvas).
_FOREIGN_PHRASES: dict[Label, tuple[str, ...]] = {
    Label.FALSE: (
        "falso", "falsa", "bulo", "engañoso total", "mentira", "fake", "totalmente falso",
        "faux", "fausse", "infox", "intox", "falsch", "frei erfunden", "fälschung", "unwahr",
        "sbagliato", "bufala", "pinocchio andante", "fals", "onwaar", "nepnieuws", "fałsz",
        "nieprawda", "yanlış", "sahte", "salah", "hoaks", "ложь", "фейк", "неправда",
        "错误", "錯誤", "谣言", "謠言", "假", "虚假", "虛假", "不实", "不實",
        "زائف", "كاذب", "خطأ", "مضلل كليا", "ملفق", "غير صحيح",
        "झूठ", "फर्जी", "फ़र्ज़ी", "गलत", "ग़लत", "भ्रामक दावा झूठा",
    ),
    Label.ACCURATE: (
        "verdadero", "verdadera", "cierto", "verdadeiro", "verdadeira", "verdade", "correto",
        "vrai", "vraie", "exact", "wahr", "richtig", "korrekt", "stimmt", "vero", "corretto",
        "waar", "prawda", "doğru", "benar", "правда", "верно",
        "正确", "正確", "属实", "屬實", "真实", "真實", "صحيح", "حقيقي", "सच", "सही",
    ),
    Label.PARTLY_ACCURATE: (
        "parcialmente falso", "parcialmente verdadero", "parcialmente cierto", "medio falso",
        "verdad a medias", "en parte falso", "parcialmente verdadeiro", "exagerado parcialmente",
        "partiellement faux", "en partie faux", "plutôt vrai", "teilweise falsch",
        "halb wahr", "teilweise richtig", "mezza verità", "c'eri quasi", "部分错误", "部分錯誤",
        "部分正确", "部分正確", "صحيح جزئيا", "صحيح جزئياً", "زائف جزئيا", "زائف جزئياً",
        "आंशिक रूप से सही", "आंशिक रूप से गलत",
    ),
    Label.MISLEADING: (
        "engañoso", "engañosa", "sin contexto", "fuera de contexto", "exagerado", "enganoso",
        "distorcido", "fora de contexto", "sem contexto", "trompeur", "trompeuse",
        "sorti de son contexte", "manque de contexte", "exagéré", "irreführend",
        "fehlender kontext", "aus dem kontext gerissen", "übertrieben", "fuorviante",
        "misleidend", "misleading", "вводит в заблуждение", "误导", "誤導", "缺乏背景",
        "断章取义", "斷章取義", "مضلل", "مضللة", "خارج السياق", "भ्रामक", "संदर्भ से बाहर",
    ),
    Label.UNVERIFIABLE: (
        "no verificable", "sin evidencia", "inverificable", "insustentável", "sem provas",
        "invérifiable", "non prouvé", "unbelegt", "nicht belegt", "unbewiesen",
        "non verificabile", "无法证实", "無法證實", "证据不足", "證據不足", "غير مؤكد",
        "لا دليل", "अपुष्ट",
    ),
}  # fmt: skip


_Scale = dict[Label | None, tuple[str, ...]]
# Each fact-checker's own scale as it writes it (its methodology page), beside the tables
# above; a phrase may appear in both with the same label. None marks a rating that is no
# verdict on the claim's truth (satire, a flip-flop, a promise tracker): such a rating maps to
# None without falling back to its number, which some feeds set to -1 or 0 for it.
_SCALES: dict[str, _Scale] = {
    "PolitiFact": {
        Label.ACCURATE: ("true", "mostly true"),
        Label.PARTLY_ACCURATE: ("half true",),
        Label.FALSE: ("mostly false", "false", "pants on fire"),
        None: (
            "full flop", "half flip", "no flip", "promise kept", "promise broken",
            "compromise", "in the works", "stalled", "not yet rated",
        ),
    },
    "The Washington Post": {
        Label.ACCURATE: ("geppetto checkmark", "one pinocchio"),
        Label.PARTLY_ACCURATE: ("two pinocchios",),
        Label.FALSE: ("three pinocchios", "four pinocchios", "bottomless pinocchio"),
        None: ("upside down pinocchio", "upside-down pinocchio"),
    },
    "Snopes": {
        Label.ACCURATE: ("true", "mostly true", "correct attribution"),
        Label.PARTLY_ACCURATE: ("mixture",),
        Label.MISLEADING: ("miscaptioned", "outdated"),
        Label.FALSE: ("mostly false", "false", "misattributed", "scam", "fake"),
        Label.UNVERIFIABLE: ("unproven", "unfounded", "legend", "research in progress"),
        None: ("satire", "labeled satire", "originated as satire", "recall"),
    },
    "Full Fact, AFP, Reuters, Lead Stories, FactCheck.org, AP": {
        Label.ACCURATE: ("correct", "true", "accurate"),
        Label.PARTLY_ACCURATE: ("partly false", "partly true", "half true"),
        Label.MISLEADING: (
            "misleading", "missing context", "needs context", "lacks context", "false context",
            "not the whole story", "cherry picks", "spins the facts", "distorts the facts",
            "exaggerates", "mislabeled", "out of context", "partly misleading",
        ),
        Label.FALSE: (
            "false", "altered", "altered photo", "altered video", "altered image", "doctored",
            "fake", "not true", "no basis", "debunked", "imposter", "impostor", "fabricated",
            "hoax", "incorrect", "wrong", "mostly false", "false headline", "fake news",
        ),
        Label.UNVERIFIABLE: (
            "unsubstantiated", "no evidence", "unproven", "baseless", "unverified",
            "unsupported", "insufficient evidence", "not proven",
        ),
        None: ("satire", "opinion", "parody", "humor", "humour", "explainer"),
    },
    "Maldita, Newtral, Chequeado, Colombiacheck, EFE Verifica (es)": {
        Label.ACCURATE: ("verdadero", "verdadera", "verdadero pero", "cierto"),
        Label.PARTLY_ACCURATE: ("cuestionable", "parcialmente falso", "verdad a medias"),
        Label.MISLEADING: (
            "engañoso", "engañosa", "exagerado", "exagerada", "apresurado", "sin contexto",
            "fuera de contexto", "falta contexto", "contexto faltante", "bulo parcial",
        ),
        Label.FALSE: ("falso", "falsa", "bulo", "mentira", "montaje", "manipulado", "fake"),
        Label.UNVERIFIABLE: (
            "sin evidencia", "sin pruebas", "inchequeable", "insostenible", "discutible",
            "no verificable", "no se puede probar",
        ),
        None: ("sátira", "satira", "opinión"),
    },
    "Lupa, Aos Fatos, Estadão Verifica, Comprova (pt)": {
        Label.ACCURATE: ("verdadeiro", "verdadeira", "verdadeiro mas", "verdade"),
        Label.PARTLY_ACCURATE: ("impreciso", "parcialmente falso", "parcialmente verdadeiro"),
        Label.MISLEADING: (
            "enganoso", "enganosa", "exagerado", "distorcido", "sem contexto", "contraditório",
            "subestimado", "fora de contexto",
        ),
        Label.FALSE: ("falso", "falsa", "montagem", "fake"),
        Label.UNVERIFIABLE: (
            "insustentável", "sem provas", "ainda é cedo para dizer", "não comprovado",
            "sem evidências",
        ),
        None: ("sátira", "de olho"),
    },
    "AFP Factuel, Les Décodeurs, Libération CheckNews (fr)": {
        Label.ACCURATE: ("vrai", "vraie", "exact"),
        Label.PARTLY_ACCURATE: (
            "plutôt vrai", "partiellement faux", "en partie faux", "à nuancer",
        ),
        Label.MISLEADING: (
            "trompeur", "trompeuse", "manque de contexte", "c'est plus compliqué", "détourné",
            "exagéré", "sorti de son contexte", "hors contexte",
        ),
        Label.FALSE: ("faux", "fausse", "plutôt faux", "inexact", "montage", "infox", "intox"),
        Label.UNVERIFIABLE: ("infondé", "non prouvé", "invérifiable", "sans preuve"),
        None: ("satire", "parodie"),
    },
    "CORRECTIV, dpa, BR24 Faktenfuchs, AFP Faktencheck (de)": {
        Label.ACCURATE: ("richtig", "größtenteils richtig", "wahr", "stimmt"),
        Label.PARTLY_ACCURATE: ("teilweise falsch", "teilweise richtig", "halb wahr"),
        Label.MISLEADING: (
            "irreführend", "fehlender kontext", "falscher kontext", "missverständlich",
            "aus dem kontext gerissen", "übertrieben",
        ),
        Label.FALSE: ("falsch", "größtenteils falsch", "frei erfunden", "manipuliert", "fälschung"),
        Label.UNVERIFIABLE: ("unbelegt", "nicht belegt", "unbewiesen"),
        None: ("satire",),
    },
    "Pagella Politica, Facta, Open (it)": {
        Label.ACCURATE: ("vero", "notizia vera"),
        Label.PARTLY_ACCURATE: ("c'eri quasi", "nì", "parzialmente falso"),
        Label.MISLEADING: ("fuorviante", "senza contesto", "contesto mancante"),
        Label.FALSE: ("falso", "pinocchio andante", "panzana pazzesca", "notizia falsa", "bufala"),
        Label.UNVERIFIABLE: ("non provato", "non dimostrato", "non verificabile"),
        None: ("satira",),
    },
    "Nieuwscheckers, Knack, AFP (nl)": {
        Label.ACCURATE: ("waar", "grotendeels waar"),
        Label.PARTLY_ACCURATE: ("half waar", "deels waar", "gedeeltelijk waar"),
        Label.MISLEADING: ("misleidend", "ontbrekende context", "gebrek aan context"),
        Label.FALSE: ("onwaar", "grotendeels onwaar", "niet waar", "fout"),
        Label.UNVERIFIABLE: ("niet bewezen", "onbewezen", "onvoldoende bewijs"),
        None: ("satire",),
    },
    "Demagog, Konkret24 (pl)": {
        Label.ACCURATE: ("prawda",),
        Label.PARTLY_ACCURATE: ("częściowa prawda",),
        Label.MISLEADING: ("manipulacja", "brak kontekstu"),
        Label.FALSE: ("fałsz", "nieprawda"),
        Label.UNVERIFIABLE: ("nieweryfikowalne",),
        None: ("satyra",),
    },
    "Teyit, Doğruluk Payı (tr)": {
        Label.ACCURATE: ("doğru", "çoğunlukla doğru"),
        Label.PARTLY_ACCURATE: ("karışık", "kısmen doğru", "yarı doğru", "kısmen yanlış"),
        Label.MISLEADING: ("yanıltıcı", "bağlamından koparılmış"),
        Label.FALSE: ("yanlış", "çoğunlukla yanlış", "sahte"),
        Label.UNVERIFIABLE: ("doğrulanamadı", "kanıtlanmadı", "belirsiz"),
        None: ("hiciv",),
    },
    "Cek Fakta, Turnbackhoax, Tempo (id)": {
        Label.ACCURATE: ("benar", "fakta"),
        Label.PARTLY_ACCURATE: ("sebagian benar", "sebagian besar benar"),
        Label.MISLEADING: (
            "menyesatkan", "konten yang menyesatkan", "konteks yang salah", "kurang konteks",
        ),
        Label.FALSE: (
            "salah", "hoaks", "keliru", "konten palsu", "konten yang dimanipulasi",
            "konten tiruan", "konten yang dibuat buat", "disinformasi",
        ),
        Label.UNVERIFIABLE: ("belum terbukti", "tidak terbukti"),
        None: ("satir", "satire"),
    },
    "BOOM, Vishvas News, Factly, Alt News (hi)": {
        Label.ACCURATE: ("सच", "सही", "सही दावा"),
        Label.PARTLY_ACCURATE: ("आंशिक रूप से सही", "आंशिक रूप से गलत", "आधा सच"),
        Label.MISLEADING: ("भ्रामक", "गुमराह करने वाला", "संदर्भ से बाहर", "भ्रामक दावा"),
        Label.FALSE: ("झूठ", "फर्जी", "फ़र्ज़ी", "गलत", "ग़लत", "फेक", "गलत दावा", "झूठा"),
        Label.UNVERIFIABLE: ("असत्यापित", "अपुष्ट"),
        None: ("व्यंग्य",),
    },
}  # fmt: skip


def _normalise(text: str) -> str:
    # letters and digits of every script ("Falso", "错误", "زائف"), Arabic diacritics dropped
    text = re.sub("[\u064b-\u065f\u0670]", "", text.lower())
    return " ".join(re.sub(r"[\W_]+", " ", text).split())


def _vocabulary() -> dict[str, Label | None]:
    """Build the phrase table, refusing a phrase that two scales read differently."""
    found: dict[str, Label | None] = {}
    tables: list[Mapping[Label, tuple[str, ...]] | _Scale] = [
        _PHRASES, _FOREIGN_PHRASES, *_SCALES.values(),
    ]  # fmt: skip
    for table in tables:
        for label, phrases in table.items():
            for phrase in phrases:
                key = _normalise(phrase)
                if found.setdefault(key, label) is not label:
                    raise ValueError(f"{phrase!r} is both {found[key]} and {label}")
    return found


_LABEL_BY_PHRASE = _vocabulary()


def rating_to_label(
    alternate_name: str | None,
    value: float | None = None,
    best: float | None = None,
    worst: float | None = None,
) -> Label | None:
    """Map a reviewer's rating to a Label: by its words first, then by its place on the scale.

    Words are matched case- and punctuation-insensitively, whole or up to the first sentence
    break; a rating that is no verdict on truth (satire, a flip-flop) maps to None. On the numeric
    scale (schema.org defaults best=5, worst=1) the position
    p = (value - worst) / (best - worst) maps p <= 0.25 to FALSE (so 2 of 5, "mostly false",
    agrees with the words), p < 0.45 to MISLEADING, p < 0.75 to PARTLY_ACCURATE and the rest to
    ACCURATE (4 of 5, "mostly true"). A value off its scale maps to None.
    """
    if alternate_name:
        for candidate in (alternate_name, _RATING_BREAK.split(alternate_name, maxsplit=1)[0]):
            key = _normalise(candidate)
            if key in _LABEL_BY_PHRASE:
                return _LABEL_BY_PHRASE[key]
    if value is None or not math.isfinite(value):
        return None
    top = 5.0 if best is None else best
    bottom = 1.0 if worst is None else worst
    if top <= bottom or not bottom <= value <= top:
        return None
    position = (value - bottom) / (top - bottom)
    if position <= 0.25:
        return Label.FALSE
    if position < 0.45:
        return Label.MISLEADING
    if position < 0.75:
        return Label.PARTLY_ACCURATE
    return Label.ACCURATE
