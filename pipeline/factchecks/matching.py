"""Matching a claim to the published fact-checks: candidates, re-ranking, the match decision.

1. Candidates, a stage that scales: the best `candidates` reviews by BM25
   (`pipeline.factchecks.lexical`) and by each embedding model's cosine over the whole index
   (one matrix product a model). The models are the English MiniLM and the multilingual e5, so
   a Spanish post finds an English fact-check and the reverse.
2. Re-ranking: a weighted sum of the lexical score (normalised by the query's best) and each
   model's cosine; weights and the e5 offset were chosen on CheckThat! 2A train
   (docs/results/2026-12-07-fact-check-matching.md). MiniLM reads English only: where the claim
   or the review is in another language, that review is ranked on e5 (and BM25 within one
   language), each term's weight moved to e5.
3. The decision, per claim: the best candidate is accepted as "the same claim" only when its
   re-ranker score reaches `accept` (or `clear_accept` with a lead of `clear_margin` over the
   next review: a clear best), its embedding cosine reaches the model's floor, and
   `pipeline.factchecks.agreement` finds nothing against it (direction, numbers, years, and a
   negation the stance model confirms: "don't want them to get" words what "prevent them from
   obtaining" says, so a negation word alone does not refuse an English match that a `reader`
   does not read as contradicting the review). A wrong match cites a fact-check of a different
   claim, which is worse than none.

Partial vectors (e5's pass, `pipeline.factchecks.loading.embed_missing`, has not reached every
review): each candidate is scored by the vectors it has; the reviews without e5's vector are
scanned with MiniLM's, ranked and accepted on the English rule (BM25 + MiniLM from
`minilm_accept`), and a pair not both English is refused for them: no model read both texts.

Failure policy: the index's snapshot (lexical matrix and vectors) is rebuilt when its key
changes; an empty index matches nothing; an embedder that fails raises to the caller (the
check's stage turns that into "no match" and says so).
"""

from __future__ import annotations

import dataclasses
import html
import re
import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from pipeline.embedding.e5 import E5_MODEL_NAME
from pipeline.embedding.embedder import Embedder
from pipeline.embedding.onnx import ONNX_MODEL_NAME
from pipeline.factchecks.agreement import NEGATION, disagreements
from pipeline.factchecks.lexical import LexicalIndex
from pipeline.ports import FactCheckIndex
from pipeline.records.factchecks import FactCheck, FactCheckMatch
from pipeline.util.cpu import CpuPool, run_cpu
from pipeline.util.text import RT_RE, URL_RE

ENGLISH_MODEL = ONNX_MODEL_NAME
MULTILINGUAL_MODEL = E5_MODEL_NAME

# An embedded tweet's signature: "— Name (@handle) February 25, 2016".
_SIGNATURE_RE = re.compile(r"\s*[—–-]{1,2}\s*[^—–\n]{0,80}\(@\w+\)\s*\w+ \d{1,2}, \d{4}\s*$")
_PIC_RE = re.compile(r"\bpic\.twitter\.com/\S+")


@dataclass(frozen=True)
class MatchConfig:
    """The matcher's weights and thresholds, chosen on CheckThat! 2A train (997 tweets).

    Two English texts: `lexical_weight * bm25 + english_weight * MiniLM + e5_weight * (e5 -
    e5_offset)`, accepted from `accept` (the lowest score whose false matches, with the gold
    reviews left out of the index, stay at or under 2 % of train's posts). Without e5 vectors:
    `lexical_weight * bm25 + MiniLM`, accepted from `minilm_accept`. Another language on either
    side: the same sum with MiniLM's cosine estimated from e5's (`minilm_from_e5`) ranks it, and
    e5 alone decides, from `e5_accept` (chosen on translated posts held apart from those
    reported on).
    """

    candidates: int = 50  # per first-stage channel (BM25 and each model)
    lexical_weight: float = 0.25
    english_weight: float = 0.75
    e5_weight: float = 1.0
    e5_offset: float = 0.7  # e5's cosines are compressed: unrelated texts score ~0.7
    accept: float = 0.90
    # a clear best: from this score, accepted when it leads the next review by clear_margin
    clear_accept: float = 0.78
    clear_margin: float = 0.24
    # "negation differs" stands for two English texts only where the reader's refutation of
    # the review by the claim reaches this (without a reader, a negation word alone refuses)
    contradiction: float = 0.5
    minilm_accept: float = 0.87
    # across languages: chosen on bench/data/factchecks_crosslingual_calibration.jsonl (80 posts
    # in 8 languages, none reported on): no false match there with the gold reviews left out
    e5_accept: float = 0.89
    # Where MiniLM cannot read one side, its cosine is estimated from e5's (least squares over
    # the top 50 candidates of train's posts: MiniLM ~ -1.573 + 2.302 e5), so one ranking
    # holds English and other-language reviews on the same scale.
    minilm_from_e5: tuple[float, float] = (-1.573, 2.302)


class PairReader(Protocol):
    """Reads (claim, passage) pairs: probabilities of (supports, refutes, not enough info)."""

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> npt.NDArray[np.float32]: ...


def matching_query(text: str) -> str:
    """Return the text of a post or claim as the matcher reads it: no links, no sign-off.

    Handles stay, without their @: "@HillaryClinton" names the person the claim is about.
    """
    text = _SIGNATURE_RE.sub("", html.unescape(text))
    text = _PIC_RE.sub(" ", text)
    text = RT_RE.sub("", URL_RE.sub(" ", text))
    return " ".join(text.replace("@", " ").replace("#", " ").split())


@dataclass(frozen=True)
class _Ranked:
    row: int
    score: float
    lexical: float
    cosine: float  # the deciding model's: MiniLM for two English texts, else e5
    across: bool  # the claim and the review are not both English: e5 decides
    unread: bool = False  # not both English, and no e5 vector of the review: nothing decides


@dataclass(frozen=True)
class _Scan:
    """One model's vectors, scanned whole for each query: the rows (snapshot positions, in
    order) that have one, and their vectors."""

    model: str
    rows: npt.NDArray[np.int64]
    matrix: npt.NDArray[np.float32]


@dataclass
class _Snapshot:
    key: tuple[int, ...]
    ids: npt.NDArray[np.int64]
    lexical: LexicalIndex
    # e5's vectors where stored, and for the rows without one another model's (MiniLM): so
    # while e5's pass is filling in the index, every review is still found by a model
    scans: list[_Scan]
    english: npt.NDArray[np.bool_]  # the review is in English (or of unknown language)


class FactCheckMatcher:
    """Ranks published fact-checks for a claim and decides whether the best is the same claim."""

    def __init__(
        self,
        index: FactCheckIndex,
        embedders: Sequence[Embedder],
        *,
        config: MatchConfig | None = None,
        cpu: CpuPool | None = None,
        reader: PairReader | None = None,
    ) -> None:
        self.index = index
        self.reader = reader
        self.embedders = {e.name: e for e in embedders}
        self.config = config or MatchConfig()
        self.cpu = cpu
        self._snapshot: _Snapshot | None = None
        self._lock = threading.Lock()

    async def match(
        self, texts: Sequence[str], *, languages: Sequence[str | None] | None = None, limit: int = 5
    ) -> list[list[FactCheckMatch]]:
        """Return, per text, the best `limit` reviews (the first accepted or not)."""
        return await run_cpu(self.cpu, self.match_sync, texts, languages=languages, limit=limit)

    def match_sync(
        self,
        texts: Sequence[str],
        *,
        languages: Sequence[str | None] | None = None,
        limit: int = 5,
        exclude: Collection[str] = (),
    ) -> list[list[FactCheckMatch]]:
        """Match in the calling thread (see `match`); reviews whose URL is in exclude are
        left out (the evaluation's gold reviews, to measure false matches)."""
        snapshot = self._current()
        if snapshot is None or not texts:
            return [[] for _ in texts]
        queries = [matching_query(t) for t in texts]
        langs = list(languages) if languages is not None else [None] * len(texts)
        vectors = {
            name: embedder.embed_sync(queries, role="query")
            for name, embedder in self.embedders.items()
        }
        extra = min(len(exclude), 20)
        ranked = [
            self._rank(snapshot, q, {n: v[i] for n, v in vectors.items()}, langs[i], limit + extra)
            for i, q in enumerate(queries)
        ]
        wanted = sorted({int(snapshot.ids[r.row]) for rows in ranked for r in rows})
        reviews = self.index.get_fact_checks(wanted)
        out: list[list[FactCheckMatch]] = []
        english: list[bool] = []  # the best candidate and the claim are both English
        for query, rows in zip(queries, ranked, strict=True):
            kept = [
                (reviews[int(snapshot.ids[r.row])], r)
                for r in rows
                if int(snapshot.ids[r.row]) in reviews
                and reviews[int(snapshot.ids[r.row])].url not in exclude
            ][:limit]
            lead = kept[0][1].score - (kept[1][1].score if len(kept) > 1 else 0.5) if kept else 0.0
            english.append(bool(kept) and not kept[0][1].across and not kept[0][1].unread)
            out.append(
                [
                    _decided(query, review, r, self.config, first=n == 0, lead=lead)
                    for n, (review, r) in enumerate(kept)
                ]
            )
        return self._negations(queries, out, english)

    def _negations(
        self, queries: Sequence[str], found: list[list[FactCheckMatch]], english: Sequence[bool]
    ) -> list[list[FactCheckMatch]]:
        """Lift "negation differs" from a best English candidate refused for that alone where
        the reader does not read the claim as contradicting the review (one batch of pairs)."""
        if self.reader is None:
            return found
        lifted = [
            i
            for i, matches in enumerate(found)
            if matches and matches[0].reasons == (NEGATION,) and english[i]
        ]
        if not lifted:
            return found
        pairs = [(found[i][0].fact_check.claim_reviewed, queries[i]) for i in lifted]
        refutes = self.reader.probabilities(pairs)[:, 1]
        for i, refuted in zip(lifted, refutes, strict=True):
            if float(refuted) < self.config.contradiction:
                found[i][0] = dataclasses.replace(found[i][0], accepted=True, reasons=())
        return found

    def _rank(
        self,
        snapshot: _Snapshot,
        query: str,
        vectors: Mapping[str, npt.NDArray[np.float32]],
        language: str | None,
        limit: int,
    ) -> list[_Ranked]:
        config = self.config
        lexical = snapshot.lexical.scores(query)
        pool: set[int] = set()
        k = min(config.candidates, len(snapshot.ids))
        if k:
            pool.update(int(i) for i in np.argpartition(-lexical, k - 1)[:k])
        for scan in snapshot.scans:
            scores = scan.matrix @ vectors[scan.model]
            if n := min(k, len(scores)):
                pool.update(int(i) for i in scan.rows[np.argpartition(-scores, n - 1)[:n]])
        rows = np.fromiter(sorted(pool), dtype=np.int64)
        top = float(lexical.max())
        lex = lexical[rows] / top if top > 0 else np.zeros(len(rows), dtype=np.float32)
        cosines = self._cosines(snapshot, rows, vectors)
        english_query = _english(language)
        fused, best_cos = _fused(rows, lex, cosines, snapshot, config, english_query=english_query)
        multi = cosines.get(MULTILINGUAL_MODEL)
        read_both = ~np.isnan(multi) if multi is not None else np.zeros(len(rows), dtype=np.bool_)
        other = ~(snapshot.english[rows] & english_query)
        order = np.argsort(-fused, kind="stable")[:limit]
        return [
            _Ranked(
                int(rows[i]),
                float(fused[i]),
                float(lex[i]),
                float(best_cos[i]),
                bool(other[i] and read_both[i]),
                bool(other[i] and not read_both[i]),
            )
            for i in order
        ]

    def _cosines(
        self,
        snapshot: _Snapshot,
        rows: npt.NDArray[np.int64],
        vectors: Mapping[str, npt.NDArray[np.float32]],
    ) -> dict[str, npt.NDArray[np.float32]]:
        """Return each model's cosine for the candidate rows, NaN where a review has no vector.

        From the snapshot's scanned vectors where they hold the row, else read from the index
        for these rows only (one matrix in memory, not one a model; a vector stored since the
        snapshot is used too).
        """
        out: dict[str, npt.NDArray[np.float32]] = {}
        for name, vector in vectors.items():
            cosines = np.full(len(rows), np.nan, dtype=np.float32)
            for scan in snapshot.scans:
                if scan.model != name or not len(scan.rows):
                    continue
                at = np.minimum(np.searchsorted(scan.rows, rows), len(scan.rows) - 1)
                held = scan.rows[at] == rows
                cosines[held] = scan.matrix[at[held]] @ vector
            lacking = np.flatnonzero(np.isnan(cosines))
            if len(lacking):
                wanted = [int(snapshot.ids[rows[i]]) for i in lacking]
                stored = self.index.fact_check_vectors(wanted, name)
                for i, row_id in zip(lacking, wanted, strict=True):
                    if row_id in stored:
                        cosines[i] = float(stored[row_id] @ vector)
            out[name] = cosines
        return out

    def _current(self) -> _Snapshot | None:
        key = self.index.fact_check_key()
        with self._lock:
            if self._snapshot is None or self._snapshot.key != key:
                self._snapshot = self._build(key)
            return self._snapshot

    def _build(self, key: tuple[int, ...]) -> _Snapshot | None:
        ids, texts = self.index.fact_check_texts()
        if not len(ids):
            return None
        # One model's matrix is scanned (e5 where it is stored: it reads every language); the
        # others are read for each query's candidates (`_cosines`). Reviews without the scanned
        # model's vector (e5's pass has not reached them) are scanned with the next model's.
        scans: list[_Scan] = []
        lacking = np.arange(len(ids), dtype=np.int64)  # rows that no scan holds yet
        for name in sorted(self.embedders, key=lambda n: n != MULTILINGUAL_MODEL):
            if not len(lacking):
                break
            if not scans:
                stored = self.index.fact_check_matrix(name)
                found_ids, matrix = stored.ids, stored.matrix
            else:
                found_ids, matrix = self._vectors_of(ids[lacking], name)
            if not len(found_ids):
                continue
            at = np.minimum(np.searchsorted(ids, found_ids), len(ids) - 1)
            held = ids[at] == found_ids  # written since the texts were read: the next snapshot
            scans.append(_Scan(name, at[held], matrix if held.all() else matrix[held]))
            lacking = np.setdiff1d(lacking, at[held], assume_unique=True)
        languages = self.index.fact_check_languages()
        english = np.array([_english(lang) for lang in languages], dtype=np.bool_)
        return _Snapshot(key, ids, LexicalIndex(ids, texts), scans, english)

    def _vectors_of(
        self, ids: npt.NDArray[np.int64], model: str, chunk: int = 5000
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
        """Return the ids (in order) of ids that have a vector of model, and those vectors:
        read a chunk at a time into one matrix, never a dict of the whole."""
        found = np.empty(len(ids), dtype=np.int64)
        matrix: npt.NDArray[np.float32] | None = None
        n = 0
        for start in range(0, len(ids), chunk):
            got = self.index.fact_check_vectors(ids[start : start + chunk].tolist(), model)
            for row_id in sorted(got):
                if matrix is None:
                    matrix = np.empty((len(ids), len(got[row_id])), dtype=np.float32)
                found[n], matrix[n] = row_id, got[row_id]
                n += 1
        if matrix is None:
            return found[:0], np.zeros((0, 0), dtype=np.float32)
        return found[:n], matrix[:n]


def _english(language: str | None) -> bool:
    return language is None or language in ("en", "und")


def _fused(
    rows: npt.NDArray[np.int64],
    lex: npt.NDArray[np.float32],
    cosines: Mapping[str, npt.NDArray[np.float32]],
    snapshot: _Snapshot,
    config: MatchConfig,
    *,
    english_query: bool,
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
    """Return the re-ranker's score and the deciding model's cosine of each candidate row.

    Row by row, by the vectors the review has (a cosine is NaN where it has none): with e5,
    English claim and review are ranked on BM25 + MiniLM + e5, any other pair on e5 (MiniLM's
    cosine estimated from it); without e5 (not configured, or its pass has not reached the
    review), BM25 + MiniLM, and a pair that is not both English is ranked but pushed below
    `accept` (`_decided` refuses it too: no model read both languages); with neither model,
    BM25 ranks and nothing is accepted.
    """
    c = config
    n = len(rows)
    nothing = np.full(n, np.nan, dtype=np.float32)
    english = snapshot.english[rows] & english_query
    lexical = c.lexical_weight * lex
    mini = cosines.get(ENGLISH_MODEL, nothing)
    multi = cosines.get(MULTILINGUAL_MODEL, nothing)
    has_mini, has_multi = ~np.isnan(mini), ~np.isnan(multi)
    intercept, slope = c.minilm_from_e5
    minilm_read = english & has_mini
    read = np.where(minilm_read, mini, intercept + slope * multi)
    with_e5 = lexical + c.english_weight * read + c.e5_weight * (multi - c.e5_offset)
    unreadable = np.where(english, 0.0, 1.0)  # pushed below accept: refused, still ranked
    minilm_only = lexical + mini + (c.accept - c.minilm_accept) - unreadable
    fused = np.where(has_multi, with_e5, np.where(has_mini, minilm_only, lexical - 1.0))
    cosine = np.where(has_multi, np.where(minilm_read, mini, multi), np.where(has_mini, mini, 0.0))
    return fused.astype(np.float32), cosine.astype(np.float32)


def _decided(
    query: str,
    review: FactCheck,
    ranked: _Ranked,
    config: MatchConfig,
    *,
    first: bool,
    lead: float = 0.0,
) -> FactCheckMatch:
    reasons: list[str] = []
    if not first:
        reasons.append("not the best candidate")
    if ranked.unread:
        reasons.append("languages differ and the review has no multilingual vector")
    elif ranked.across and ranked.cosine < config.e5_accept:
        reasons.append(f"cross-language cosine {ranked.cosine:.2f} below {config.e5_accept:.2f}")
    elif not ranked.across and ranked.score < config.accept:
        clear = first and ranked.score >= config.clear_accept and lead >= config.clear_margin
        if not clear:
            reasons.append(f"score {ranked.score:.2f} below {config.accept:.2f}")
    reasons.extend(disagreements(query, review.claim_reviewed, review.headline))
    return FactCheckMatch(
        fact_check=review,
        score=round(ranked.score, 4),
        lexical=round(ranked.lexical, 4),
        semantic=round(ranked.cosine, 4),
        accepted=not reasons,
        reasons=tuple(reasons),
    )
