"""Answer repeated and near-duplicate posts from stored checks instead of checking them again.

`ReuseIndex.find(post)` runs before a check is enqueued and returns the stored check that answers
the post, with the reason, or None. `ReuseIndex.remember(check)` records a finished, stored check.
`lookups` and `hits` (by reason) count this process's look-ups for `/metrics`: a look-up happens
where a request comes in (the API, an adapter, the monitor), never in a worker.

Reasons, tried in this order (the first eligible one wins; within a reason, the newest check):

- ``same post``: the same platform and platform id.
- ``same text``: the same normalised text (sha256 of `normalise(post.text)`).
- ``same claims``: the same set of normalised check-worthy sentences, as the no-model extractor
  (`pipeline.claims.heuristic.extract_claims`) finds them, order and repeats ignored. Both sides
  use the heuristic extractor, so a check whose claims came from a language model is compared
  like with like.
- ``near duplicate``: cosine of the post embeddings (all-MiniLM-L6-v2 over the cleaned text, first
  `EMBED_CHARS` characters) at or above `ReuseSettings.near_duplicate_threshold`.

Images. A post's images are part of what was checked (the image report, the claims read off a
screenshot), so a check answers a post with images only if it was made from the same images:
when a post has `image_refs`, the digest of its refs (sorted, repeats dropped: `images_digest`)
is folded into its text and claims hashes, so "same text" and "same claims" mean the same words
*and* the same images, and a text-only post never matches an image check's keys (nor the
reverse). "Same post" stands (a post's images are its own). Near duplicates are text-only on
both sides: a post with images is not looked up by embedding, and an image check stores none.

Normalisation (`normalise`), in order: HTML entities unescaped, Unicode NFKC, a leading retweet
marker ("RT @user:"), URLs and @mentions removed, the ``#`` of hashtags dropped (the word kept),
emojis and other symbols removed (`pipeline.util.text.clean_post_text`); then case-folded, NFKC
again (case folding can denormalise), every punctuation, symbol and control character replaced by a
space, and runs of whitespace collapsed to one space with the ends stripped. So "RT @a: Vaccines
CAUSE autism!!! 😱 https://t.co/x #health" and "vaccines cause autism health" are the same text.

Which checks may answer a post:

- younger than `ttl_hours` (by the check's creation time, read from the injected clock);
- with claims, and not an "unverifiable" verdict resting on no evidence at all (that is what a
  search outage looks like: a later check may find evidence), so such checks are not recorded;
- with a matching evidence bound. A check's effective bound is its `before` (the post's own time
  or an explicit --before) or, without one, when it ran; a post's needed bound is the explicit
  `before`, else its `created_at`, else now (each capped at the time it applies to, since no
  evidence is newer than that). The two must be within `bound_window_hours`: a 2019 post never
  reuses a check bounded to 2024, nor an unbounded check of today a check bounded to 2019.
- embedded by the same model (vectors of different models are never compared).

A near duplicate must also agree on numbers (`numbers_agree`: the digit-bearing tokens of one
normalised text are all in the other's): MiniLM scores "Coronavirus Daily Digest: March 20, 2020"
against "... March 26, 2020" at 0.995.

The near-duplicate threshold, 0.97, is calibrated by `python -m bench.reuse_calibration` (data,
pairs and rule in that module): positives are the same claim reworded or re-shared (CoAID
re-published headlines and fact-checked claims against the spreading article's headline, MUSE
posts against quote-shares, truncations and retweets), hard negatives the nearest *other* claim
(CoAID, AVeriTeC dev, MUSE), split in halves by a hash of the claim. The rule, fixed before
looking at the held-out half: the lowest threshold on a 0.01 grid with a false-reuse rate of at
most 0.5% on the calibration half's negatives. Held-out half at 0.97 (95% Wilson intervals):
precision 0.975 [0.946, 0.988], near-duplicate recall 0.332 [0.298, 0.368] of 692 positives,
any-reason recall 0.402 [0.366, 0.439], false-reuse rate 0.0025 [0.0011, 0.0055] of 2,395
negatives. Several "negatives" above 0.9 are the same claim twice in the data ("COVID-19
Antibodies Decline Over Time, Study Shows" / "Study: COVID-19 Antibodies Decline Over Time"), so
the false-reuse rate is an upper bound; genuinely different claims reach 0.96 ("FDA Approves
Remdesivir to Treat COVID-19" / "FDA Expands Use of Remdesivir for COVID-19 Treatment"), which
is why lower thresholds (0.92: recall 0.62, false reuse 1.0%) are not used.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import threading
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

import numpy as np
import numpy.typing as npt

from bots.settings import ReuseSettings
from pipeline.claims.heuristic import extract_claims
from pipeline.embedding.embedder import Embedder
from pipeline.errors import EmptyPostError
from pipeline.records.domain import Check, Label, Post
from pipeline.util.clock import SYSTEM, Clock
from pipeline.util.text import clean_post_text
from storage.reuse import Fingerprint, ReuseRepo

log = logging.getLogger(__name__)

Reason = Literal["same post", "same text", "same claims", "near duplicate"]
_PRIORITY: dict[Reason, int] = {"same post": 0, "same text": 1, "same claims": 2}

EMBED_CHARS = 2000  # MiniLM reads 256 word pieces; the rest only costs tokenizer time
MAX_CLAIMS = 50  # the whole set of check-worthy sentences, not the top few


@dataclass(frozen=True)
class ReuseHit:
    """A stored check that answers a post, and why."""

    check_id: str
    reason: Reason
    similarity: float  # 1.0 for the exact reasons, the cosine for a near duplicate
    age: timedelta


@dataclass(frozen=True)
class PostPrint:
    """The reuse keys of one post."""

    text_hash: str | None
    claims_hash: str | None
    numbers: frozenset[str]  # tokens of the normalised text that contain a digit
    embed_text: str  # empty when nothing is left to embed, or the post has images


def normalise(text: str) -> str:
    """Return text case-folded, without links, mentions, emojis or punctuation (module doc)."""
    folded = unicodedata.normalize("NFKC", clean_post_text(text).casefold())
    spaced = "".join(" " if unicodedata.category(c)[0] in "PSCZ" else c for c in folded)
    return " ".join(spaced.split())


def numbers_in(normalised: str) -> frozenset[str]:
    """Return the tokens of normalised text that contain a digit ("march 26 2020" -> 26, 2020)."""
    return frozenset(t for t in normalised.split() if any(c.isdigit() for c in t))


def numbers_agree(a: frozenset[str], b: frozenset[str]) -> bool:
    """Return whether one post's numbers are all in the other's (a truncated copy loses some)."""
    return a <= b or b <= a


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def images_digest(refs: Sequence[str]) -> str | None:
    """Return the digest of a post's image refs (order and repeats ignored), None without any."""
    return _digest("\n".join(sorted(set(refs)))) if refs else None


def _keyed(key: str, images: str | None) -> str:
    """Return the hash of a text or claims key, with the post's images folded in."""
    return _digest(key if images is None else f"{key}\x00images:{images}")


async def post_print(post: Post) -> PostPrint:
    """Return the text hash, claims hash and embedding text of a post (images: module doc)."""
    text = normalise(post.text)
    images = images_digest(post.image_refs)
    try:
        claims = await extract_claims(post, max_claims=MAX_CLAIMS)
    except EmptyPostError:
        claims = []
    claim_set = sorted({n for n in (normalise(c.text) for c in claims) if n})
    cleaned = clean_post_text(post.text)
    return PostPrint(
        text_hash=_keyed(text, images) if text or images else None,
        claims_hash=_keyed("\n".join(claim_set), images) if claim_set else None,
        numbers=numbers_in(text),
        embed_text=cleaned[:EMBED_CHARS] if text and images is None else "",
    )


def _capped(bound: datetime | None, at: datetime) -> datetime:
    if bound is None:
        return at
    if bound.tzinfo is None:
        bound = bound.replace(tzinfo=UTC)
    return min(bound, at)


class ReuseIndex:
    """Stored checks' fingerprints: exact keys in SQLite, embeddings in one in-memory matrix."""

    def __init__(
        self,
        repo: ReuseRepo,
        embedder: Embedder,
        settings: ReuseSettings,
        *,
        clock: Clock = SYSTEM,
    ) -> None:
        self.repo = repo
        self.embedder = embedder
        self.settings = settings
        self.clock = clock
        self._vectors = _VectorCache()
        # The matrix is refreshed and searched in threads (off the event loop): one at a time.
        self._vectors_lock = threading.Lock()
        self.lookups = 0  # look-ups made by this process since it started (reuse enabled)
        self.hits: dict[Reason, int] = {}  # of which answered by a stored check, by reason

    @property
    def ttl(self) -> timedelta:
        """Return how old a check may be and still be reused."""
        return timedelta(hours=self.settings.ttl_hours)

    def warm(self) -> int:
        """Load the recent embeddings now (at start-up) instead of on the first look-up."""
        with self._vectors_lock:
            self._vectors.refresh(
                self.repo, since=self.clock.now() - self.ttl, model=self.embedder.name
            )
            return self._vectors.n

    def prune(self) -> int:
        """Delete fingerprints older than the TTL (housekeeping); return how many went."""
        return self.repo.prune(before=self.clock.now() - self.ttl)

    def loaded_bytes(self) -> int:
        """Return the memory held by the embedding matrix (with its spare capacity)."""
        return int(self._vectors.matrix.nbytes)

    async def find(self, post: Post, *, before: datetime | None = None) -> ReuseHit | None:
        """Return the stored check that answers post (bounded like App.check), or None."""
        if not self.settings.enabled:
            return None
        self.lookups += 1
        now = self.clock.now()
        since = now - self.ttl
        need = _capped(before or post.created_at, now).timestamp()
        window = self.settings.bound_window_hours * 3600.0
        keys = await post_print(post)
        exact = await asyncio.to_thread(  # the index has a repository, not a store: a thread
            self.repo.exact,
            post=(post.platform, post.platform_id) if post.platform_id else None,
            text_hash=keys.text_hash,
            claims_hash=keys.claims_hash,
            since=since,
        )
        ranked: list[tuple[int, float, Fingerprint, Reason]] = []
        for fp in exact:
            if abs(fp.bound_at.timestamp() - need) > window:
                continue
            reason = self._reason(fp, post, keys)
            ranked.append((_PRIORITY[reason], -fp.created_at.timestamp(), fp, reason))
        if ranked:
            _, _, fp, reason = min(ranked, key=lambda r: (r[0], r[1]))
            return self._hit(fp.check_id, reason, 1.0, now - fp.created_at)
        if not keys.embed_text:
            return None
        query = (await self.embedder.embed([keys.embed_text], role="query"))[0]
        return await asyncio.to_thread(
            self.near_duplicate, query, numbers=keys.numbers, need=need, now=now
        )

    def near_duplicate(
        self,
        query: npt.NDArray[np.float32],
        *,
        numbers: frozenset[str],
        need: float,
        now: datetime,
    ) -> ReuseHit | None:
        """Return the near-duplicate hit for an embedded post (`need`: its bound, POSIX s)."""
        since = now - self.ttl
        with self._vectors_lock:
            self._vectors.refresh(self.repo, since=since, model=self.embedder.name)
            found = self._vectors.nearest(
                query,
                since=since.timestamp(),
                need=need,
                window=self.settings.bound_window_hours * 3600.0,
                threshold=self.settings.near_duplicate_threshold,
                numbers=numbers,
            )
        if found is None:
            return None
        check_id, similarity, created = found
        return self._hit(
            check_id, "near duplicate", similarity, now - datetime.fromtimestamp(created, UTC)
        )

    async def remember(self, check: Check) -> bool:
        """Record a finished, stored check's fingerprints; return False when it is not reusable."""
        fingerprint = await self.fingerprint(check)
        return fingerprint is not None and bool(await asyncio.to_thread(self.repo.add, fingerprint))

    async def fingerprint(self, check: Check) -> Fingerprint | None:
        """Return what `remember` would store for check (None when it is not reusable).

        Workers compute it before the job completes and store it in the same transaction as
        the check, so a request answered with the check already finds it for reuse.
        """
        if not self.settings.enabled:
            return None
        if not check.claims or (not check.evidence and check.verdict.label is Label.UNVERIFIABLE):
            log.info("check not reusable", extra={"check_id": check.id})
            return None
        keys = await post_print(check.post)
        embedding = None
        if keys.embed_text:
            embedding = (await self.embedder.embed([keys.embed_text], role="query"))[0]
        return Fingerprint(
            check_id=check.id,
            platform=check.post.platform,
            platform_id=check.post.platform_id,
            text_hash=keys.text_hash,
            claims_hash=keys.claims_hash,
            numbers=keys.numbers,
            before=check.before,
            bound_at=_capped(check.before, check.created_at),
            created_at=check.created_at,
            model=self.embedder.name,
            embedding=embedding,
        )

    @staticmethod
    def _reason(fp: Fingerprint, post: Post, keys: PostPrint) -> Reason:
        if post.platform_id and (fp.platform, fp.platform_id) == (post.platform, post.platform_id):
            return "same post"
        if keys.text_hash is not None and fp.text_hash == keys.text_hash:
            return "same text"
        return "same claims"

    def _hit(self, check_id: str, reason: Reason, similarity: float, age: timedelta) -> ReuseHit:
        self.hits[reason] = self.hits.get(reason, 0) + 1
        log.info(
            "reusing a stored check",
            extra={
                "check_id": check_id,
                "reason": reason,
                "similarity": round(similarity, 4),
                "age_s": round(age.total_seconds(), 1),
            },
        )
        return ReuseHit(check_id=check_id, reason=reason, similarity=similarity, age=age)


class _VectorCache:
    """Embeddings of recent fingerprints, grown in place as new rows appear in the table.

    Each look-up reads only rows with a higher sequence number than the last one seen, so checks
    recorded by other processes are found too; expired rows are dropped once they are half.
    """

    def __init__(self) -> None:
        self.model = ""
        self._reset()

    def _reset(self) -> None:
        self.last_seq = 0
        self.n = 0
        self.ids: list[str] = []
        self.numbers: list[frozenset[str]] = []
        self.created = np.zeros(0, dtype=np.float64)
        self.bound = np.zeros(0, dtype=np.float64)
        self.matrix = np.zeros((0, 0), dtype=np.float32)

    def refresh(self, repo: ReuseRepo, *, since: datetime, model: str) -> None:
        """Load rows added since the last refresh and drop expired ones when they pile up."""
        if model != self.model:
            self._reset()
            self.model = model
        new = repo.vectors_after(self.last_seq, since=since, model=model)
        if len(new.check_ids):
            self.last_seq = int(new.seq[-1])
            self._append(new.check_ids, new.numbers, new.created, new.bound, new.matrix)
        expired = int(np.count_nonzero(self.created[: self.n] < since.timestamp()))
        if expired and expired * 2 >= self.n:
            self._keep(self.created[: self.n] >= since.timestamp())

    def nearest(
        self,
        query: npt.NDArray[np.float32],
        *,
        since: float,
        need: float,
        window: float,
        threshold: float,
        numbers: frozenset[str],
        top: int = 16,
    ) -> tuple[str, float, float] | None:
        """Return (check id, cosine, created) of the most similar eligible row, or None.

        Eligible: recent, a matching bound, cosine at or above threshold and numbers that agree
        (the embedding barely tells "March 20" from "March 26"); the best `top` rows are tried.
        """
        if self.n == 0 or self.matrix.shape[1] != query.shape[0]:
            return None
        scores = self.matrix[: self.n] @ query
        eligible = (
            (scores >= threshold)
            & (self.created[: self.n] >= since)
            & (np.abs(self.bound[: self.n] - need) <= window)
        )
        candidates = np.flatnonzero(eligible)
        if len(candidates) > top:
            candidates = candidates[np.argpartition(-scores[candidates], top)[:top]]
        for i in candidates[np.argsort(-scores[candidates])]:
            if numbers_agree(numbers, self.numbers[i]):
                return self.ids[i], float(scores[i]), float(self.created[i])
        return None

    def _append(
        self,
        ids: tuple[str, ...],
        numbers: tuple[frozenset[str], ...],
        created: npt.NDArray[np.float64],
        bound: npt.NDArray[np.float64],
        matrix: npt.NDArray[np.float32],
    ) -> None:
        need = self.n + len(ids)
        if self.matrix.shape[1] != matrix.shape[1] or need > self.matrix.shape[0]:
            # Doubling keeps appends amortised O(1) instead of copying the matrix each time.
            capacity = max(need, 2 * self.matrix.shape[0], 64)
            grown = np.zeros((capacity, matrix.shape[1]), dtype=np.float32)
            if self.n:  # rows of another width never reach here: a new model resets the cache
                grown[: self.n] = self.matrix[: self.n]
            self.matrix = grown
            self.created = np.resize(self.created, capacity)
            self.bound = np.resize(self.bound, capacity)
        self.matrix[self.n : need] = matrix
        self.created[self.n : need] = created
        self.bound[self.n : need] = bound
        self.ids.extend(ids)
        self.numbers.extend(numbers)
        self.n = need

    def _keep(self, mask: npt.NDArray[np.bool_]) -> None:
        self.matrix = self.matrix[: self.n][mask].copy()
        self.created = self.created[: self.n][mask].copy()
        self.bound = self.bound[: self.n][mask].copy()
        self.ids = [i for i, keep in zip(self.ids, mask, strict=True) if keep]
        self.numbers = [n for n, keep in zip(self.numbers, mask, strict=True) if keep]
        self.n = len(self.ids)
