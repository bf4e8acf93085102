"""The rating vocabulary: a fact-checker's rating, in words or on a numeric scale, as a Label."""

from __future__ import annotations

import math
import re

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


def _normalise(text: str) -> str:
    # letters and digits of every script ("Falso", "错误", "زائف"), Arabic diacritics dropped
    text = re.sub("[\u064b-\u065f\u0670]", "", text.lower())
    return " ".join(re.sub(r"[\W_]+", " ", text).split())


_LABEL_BY_PHRASE = {
    _normalise(phrase): label
    for table in (_PHRASES, _FOREIGN_PHRASES)
    for label, phrases in table.items()
    for phrase in phrases
}


def rating_to_label(
    alternate_name: str | None,
    value: float | None = None,
    best: float | None = None,
    worst: float | None = None,
) -> Label | None:
    """Map a reviewer's rating to a Label: by its words first, then by its place on the scale.

    Words are matched case- and punctuation-insensitively, whole or up to the first sentence
    break. On the numeric scale (schema.org defaults best=5, worst=1) the position
    p = (value - worst) / (best - worst) maps p <= 0.25 to FALSE (so 2 of 5, "mostly false",
    agrees with the words), p < 0.45 to MISLEADING, p < 0.75 to PARTLY_ACCURATE and the rest to
    ACCURATE (4 of 5, "mostly true"). A value off its scale maps to None.
    """
    if alternate_name:
        for candidate in (alternate_name, _RATING_BREAK.split(alternate_name, maxsplit=1)[0]):
            label = _LABEL_BY_PHRASE.get(_normalise(candidate))
            if label is not None:
                return label
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
