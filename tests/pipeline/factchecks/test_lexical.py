"""BM25 over the reviews' text: ranks by shared rare words, in any script."""

from __future__ import annotations

import numpy as np

from pipeline.factchecks.lexical import LexicalIndex, tokens

TEXTS = [
    "McDonald's restaurants are offering $1 Any Size Fries between May 18 and 31.",
    "A viral video shows a 10-meter-long anaconda swimming across a river in Brazil.",
    "Drinking bleach protects you against COVID-19.",
    "El Gobierno aprobó una ley que prohíbe el dinero en efectivo.",
    "5G 基站 传播 新冠 病毒",
]


def test_the_review_sharing_the_rare_words_ranks_first() -> None:
    index = LexicalIndex(np.arange(len(TEXTS), dtype=np.int64), TEXTS)
    scores = index.scores("omg a huge anaconda in a Brazilian river, watch this video")
    assert int(np.argmax(scores)) == 1
    assert scores[1] > 2 * np.sort(scores)[-2]


def test_stems_and_other_scripts_match() -> None:
    index = LexicalIndex(np.arange(len(TEXTS), dtype=np.int64), TEXTS)
    assert int(np.argmax(index.scores("la ley prohibe efectivo"))) == 3
    assert int(np.argmax(index.scores("新冠 病毒 5G"))) == 4
    assert int(np.argmax(index.scores("bleach protecting against covid"))) == 2


def test_function_words_alone_score_nothing() -> None:
    index = LexicalIndex(np.arange(len(TEXTS), dtype=np.int64), TEXTS)
    assert not index.scores("the and of it is").any()
    assert tokens("The l'OMS and") == ["oms"]


def test_an_empty_index_scores_an_empty_array() -> None:
    index = LexicalIndex(np.zeros(0, dtype=np.int64), [])
    assert index.scores("anything").shape == (0,)
