"""The lexical stage of matching: Okapi BM25 over the reviews' text, in memory.

Why in memory and not the database's full-text index: the same scores on SQLite and PostgreSQL
(FTS5's bm25 and PostgreSQL's ts_rank are different functions, and the re-ranker's weights are
chosen on one), and a query costs one sparse column sum (~1-5 ms for 200,000 reviews on one
core) instead of an OR query over every word of a post. The matrix holds each (review, term)
pair's BM25 weight, so a query is the sum of its terms' columns.

Tokens: lower-cased words of any script (`pipeline.util.text.words`: Han and kana one character
each), elisions and function words of the six Latin-script languages dropped, and each word cut
to its first `STEM` characters: a crude stemmer that works in every language that inflects at
the end ("vaccines", "vaccinated" and "vacunas" keep their stems apart from unrelated words in
practice; measured on CheckThat! 2A train, docs/results/2026-12-07-fact-check-matching.md).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from scipy import sparse

from pipeline.util.text import ALL_STOPWORDS, words

STEM = 6
K1 = 1.2
B = 0.75


def tokens(text: str) -> list[str]:
    """Return the lexical tokens of text (lower-cased, function words dropped, stemmed)."""
    out = []
    for word in words(text.lower()):
        token = word.strip("'’-")
        if "'" in token or "’" in token:  # l'OMS, dell'Italia: the word after the elision
            token = token.replace("’", "'").rsplit("'", 1)[-1]
        if len(token) < 2 and not token.isdigit() and token.isascii():
            continue
        if token in ALL_STOPWORDS:
            continue
        out.append(token[:STEM])
    return out


class LexicalIndex:
    """BM25 scores of a query against a fixed set of texts."""

    def __init__(self, ids: npt.NDArray[np.int64], texts: Sequence[str]) -> None:
        self.ids = ids
        vocabulary: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        counts: list[float] = []
        lengths = np.zeros(len(texts), dtype=np.float32)
        for row, text in enumerate(texts):
            bag: dict[int, int] = {}
            toks = tokens(text)
            lengths[row] = len(toks)
            for tok in toks:
                col = vocabulary.setdefault(tok, len(vocabulary))
                bag[col] = bag.get(col, 0) + 1
            rows.extend([row] * len(bag))
            cols.extend(bag)
            counts.extend(bag.values())
        self.vocabulary = vocabulary
        shape = (len(texts), max(len(vocabulary), 1))
        tf = sparse.csr_matrix(
            (np.asarray(counts, dtype=np.float32), (rows, cols)), shape=shape, dtype=np.float32
        )
        n = max(len(texts), 1)
        df = np.bincount(np.asarray(cols, dtype=np.int64), minlength=shape[1]).astype(np.float32)
        idf = np.log(1.0 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)
        avg = float(lengths.mean()) if len(texts) else 1.0
        norm = K1 * (1 - B + B * lengths / max(avg, 1e-6))
        # BM25 weight of each stored (review, term) pair: idf * tf (k1 + 1) / (tf + norm)
        tf_rows = np.repeat(norm, np.diff(tf.indptr))
        tf.data = idf[tf.indices] * tf.data * (K1 + 1) / (tf.data + tf_rows)
        self.matrix = tf.tocsc()
        self.idf = idf

    def __len__(self) -> int:
        return len(self.ids)

    def scores(self, text: str) -> npt.NDArray[np.float32]:
        """Return the BM25 score of text against every stored text (in stored order)."""
        cols = sorted({self.vocabulary[t] for t in tokens(text) if t in self.vocabulary})
        if not cols or not len(self.ids):
            return np.zeros(len(self.ids), dtype=np.float32)
        summed = self.matrix[:, cols].sum(axis=1)
        return np.asarray(summed, dtype=np.float32).ravel()

    def max_score(self, text: str) -> float:
        """Return the score a stored text holding every query term once could reach (idf sum)."""
        terms = {t for t in tokens(text) if t in self.vocabulary}
        return float(sum(self.idf[self.vocabulary[t]] for t in terms)) * (K1 + 1) / (K1 + 1)
