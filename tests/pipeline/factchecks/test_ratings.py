"""The rating vocabulary: ratings in words, in other languages and on numeric scales."""

from __future__ import annotations

import pytest

from pipeline.factchecks.ratings import rating_to_label
from pipeline.records.domain import Label


@pytest.mark.parametrize(
    ("words", "label"),
    [
        ("False", Label.FALSE),
        ("PANTS ON FIRE!", Label.FALSE),
        ("Pants on Fire", Label.FALSE),
        ("fake", Label.FALSE),
        ("Incorrect.", Label.FALSE),
        ("Mostly False", Label.FALSE),
        ("False. The video was filmed in 2015.", Label.FALSE),
        ("True", Label.ACCURATE),
        ("correct", Label.ACCURATE),
        ("Accurate", Label.ACCURATE),
        ("Mostly true", Label.ACCURATE),
        ("Half-True", Label.PARTLY_ACCURATE),
        ("Mixture", Label.PARTLY_ACCURATE),
        ("Partly false", Label.PARTLY_ACCURATE),
        ("partly TRUE", Label.PARTLY_ACCURATE),
        ("Misleading", Label.MISLEADING),
        ("Missing context", Label.MISLEADING),
        ("Out of context", Label.MISLEADING),
        ("Distorts the Facts", Label.MISLEADING),
        ("Exaggerated", Label.MISLEADING),
        ("Cherry-picked", Label.MISLEADING),
        ("Lacks context", Label.MISLEADING),
        ("Unproven", Label.UNVERIFIABLE),
        ("Unsupported", Label.UNVERIFIABLE),
        ("No evidence", Label.UNVERIFIABLE),
        ("Unverified", Label.UNVERIFIABLE),
        ("Research in progress", Label.UNVERIFIABLE),
    ],
)
def test_rating_words(words: str, label: Label) -> None:
    assert rating_to_label(words) is label


@pytest.mark.parametrize(
    ("value", "best", "worst", "label"),
    [
        (1, 5, 1, Label.FALSE),
        (2, 5, 1, Label.FALSE),
        (3, 5, 1, Label.PARTLY_ACCURATE),
        (4, 5, 1, Label.ACCURATE),
        (5, None, None, Label.ACCURATE),  # schema.org defaults: 1..5
        (0, 10, 0, Label.FALSE),
        (4, 10, 0, Label.MISLEADING),
        (6, 10, 0, Label.PARTLY_ACCURATE),
        (9, 10, 0, Label.ACCURATE),
        (7, 5, 1, None),  # off the scale
        (1, 1, 1, None),  # no scale
        (None, 5, 1, None),
    ],
)
def test_rating_scale(
    value: float | None, best: float | None, worst: float | None, label: Label | None
) -> None:
    assert rating_to_label(None, value, best, worst) is label


def test_unknown_words_fall_back_to_the_scale_or_none() -> None:
    assert rating_to_label("Four out of five stars", 1, 5, 1) is Label.FALSE
    assert rating_to_label("True but misleading") is None
    assert rating_to_label("Satire") is None
    assert rating_to_label("") is None


@pytest.mark.parametrize(
    ("words", "label"),
    [
        ("Falso", Label.FALSE),
        ("FALSO.", Label.FALSE),
        ("Faux", Label.FALSE),
        ("Falsch", Label.FALSE),
        ("错误", Label.FALSE),
        ("錯誤", Label.FALSE),
        ("زائف", Label.FALSE),
        ("زَائِف", Label.FALSE),  # with its vowel marks
        ("झूठ", Label.FALSE),
        ("Engañoso", Label.MISLEADING),
        ("Irreführend", Label.MISLEADING),
        ("مضلل", Label.MISLEADING),
        ("Partiellement faux", Label.PARTLY_ACCURATE),
        ("Verdadero: el dato es correcto", Label.ACCURATE),
        ("Unbelegt", Label.UNVERIFIABLE),
        ("Ni vrai ni faux mais autre chose", None),
    ],
)
def test_ratings_in_other_languages_map_to_labels(words: str, label: Label | None) -> None:
    assert rating_to_label(words) is label


@pytest.mark.parametrize(
    ("words", "label"),
    [
        # PolitiFact, its Flip-O-Meter and promise tracker (no truth verdict)
        ("Mostly True", Label.ACCURATE),
        ("Half True", Label.PARTLY_ACCURATE),
        ("Pants on Fire!", Label.FALSE),
        ("Full Flop", None),
        ("Half Flip", None),
        ("No Flip", None),
        ("Promise Broken", None),
        # The Washington Post
        ("One Pinocchio", Label.ACCURATE),
        ("Two Pinocchios", Label.PARTLY_ACCURATE),
        ("Three Pinocchios", Label.FALSE),
        ("Four Pinocchios", Label.FALSE),
        ("Bottomless Pinocchio", Label.FALSE),
        ("Geppetto Checkmark", Label.ACCURATE),
        ("Upside-Down Pinocchio", None),
        # Snopes
        ("Mixture", Label.PARTLY_ACCURATE),
        ("Unproven", Label.UNVERIFIABLE),
        ("Unfounded", Label.UNVERIFIABLE),
        ("Miscaptioned", Label.MISLEADING),
        ("Misattributed", Label.FALSE),
        ("Correct Attribution", Label.ACCURATE),
        ("Outdated", Label.MISLEADING),
        ("Scam", Label.FALSE),
        ("Legend", Label.UNVERIFIABLE),
        ("Satire", None),
        ("Labeled Satire", None),
        ("Research In Progress", Label.UNVERIFIABLE),
        # AFP, Reuters, Lead Stories, FactCheck.org, Full Fact
        ("Altered", Label.FALSE),
        ("Partly false", Label.PARTLY_ACCURATE),
        ("Missing context", Label.MISLEADING),
        ("Not the whole story", Label.MISLEADING),
        ("No Basis", Label.FALSE),
        ("Unsubstantiated", Label.UNVERIFIABLE),
        ("Incorrect", Label.FALSE),
        # Spanish: Maldita, Newtral, Chequeado
        ("Falso", Label.FALSE),
        ("Engañoso", Label.MISLEADING),
        ("Sin evidencia", Label.UNVERIFIABLE),
        ("Verdadero", Label.ACCURATE),
        ("Verdadero, pero...", Label.ACCURATE),
        ("Exagerado", Label.MISLEADING),
        ("Inchequeable", Label.UNVERIFIABLE),
        ("Cuestionable", Label.PARTLY_ACCURATE),
        # Portuguese: Lupa, Aos Fatos
        ("Enganoso", Label.MISLEADING),
        ("Verdadeiro", Label.ACCURATE),
        ("Distorcido", Label.MISLEADING),
        ("Insustentável", Label.UNVERIFIABLE),
        ("Sem contexto", Label.MISLEADING),
        ("Impreciso", Label.PARTLY_ACCURATE),
        # French
        ("Faux", Label.FALSE),
        ("Trompeur", Label.MISLEADING),
        ("Vrai", Label.ACCURATE),
        ("Plutôt vrai", Label.PARTLY_ACCURATE),
        ("Manque de contexte", Label.MISLEADING),
        ("Infondé", Label.UNVERIFIABLE),
        # German: CORRECTIV, dpa
        ("Falsch", Label.FALSE),
        ("Irreführend", Label.MISLEADING),
        ("Größtenteils falsch", Label.FALSE),
        ("Teilweise falsch", Label.PARTLY_ACCURATE),
        ("Fehlender Kontext", Label.MISLEADING),
        ("Richtig", Label.ACCURATE),
        ("Unbelegt", Label.UNVERIFIABLE),
        ("Frei erfunden", Label.FALSE),
        # Italian: Pagella Politica, Facta
        ("Pinocchio andante", Label.FALSE),
        ("Panzana pazzesca", Label.FALSE),
        ("Vero", Label.ACCURATE),
        ("C'eri quasi", Label.PARTLY_ACCURATE),
        ("Nì", Label.PARTLY_ACCURATE),
        ("Satira", None),
        # Dutch, Polish, Turkish, Indonesian, Hindi
        ("Grotendeels onwaar", Label.FALSE),
        ("Half waar", Label.PARTLY_ACCURATE),
        ("Częściowa prawda", Label.PARTLY_ACCURATE),
        ("Manipulacja", Label.MISLEADING),
        ("Yanıltıcı", Label.MISLEADING),
        ("Çoğunlukla doğru", Label.ACCURATE),
        ("Menyesatkan", Label.MISLEADING),
        ("Konten yang dimanipulasi", Label.FALSE),
        ("गुमराह करने वाला", Label.MISLEADING),
        ("व्यंग्य", None),
        # Unknown words
        ("Needs more cowbell", None),
        ("Zweifelhaft vielleicht", None),
    ],
)
def test_fact_checkers_scales_map_to_labels(words: str, label: Label | None) -> None:
    assert rating_to_label(words) is label


def test_a_rating_that_is_no_truth_verdict_ignores_its_number() -> None:
    assert rating_to_label("Satire", -1, 5, -1) is None
    assert rating_to_label("Full Flop", 1, 5, 1) is None
    assert rating_to_label("Needs more cowbell", 1, 5, 1) is Label.FALSE  # unknown: the scale
