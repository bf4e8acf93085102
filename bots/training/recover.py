"""A trainable float model recovered from an int8 ONNX export (`factbot train stance --init DIR`).

The shipped stance model lives only as int8 ONNX (`pipeline/verifier/model/`); the float
checkpoint it was exported from does not survive the training machine. To train on from it,
each weight is dequantised (`(q - zero_point) * scale`) and put back under its parameter name:
the exporter keeps the torch module path in each node's name
(`/encoder/encoder/layer.0/attention/self/query/MatMul`), biases and layer norms keep their
parameter names, and `MatMulInteger` weights are stored transposed. The recovered model computes
what the int8 export computes, up to the activation quantisation (checked in the tests).

Failure policy: an export whose graph does not name every parameter of the model raises
`TrainError` listing the ones missing; nothing is left at its random start silently.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np


def _array(initializer: Any) -> np.ndarray:
    from onnx import numpy_helper

    return np.asarray(numpy_helper.to_array(initializer))


def _dequantised(inits: dict[str, Any], stem: str, axis: int = -1) -> np.ndarray:
    """Return `(q - zero_point) * scale`; per-channel scales lie along `axis` of q.

    A `MatMulInteger` weight ([in, out]) is scaled per output column (the last axis); a
    quantised embedding's `DequantizeLinear` names its axis.
    """
    q = _array(inits[f"{stem}_quantized"]).astype(np.float32)
    scale = _array(inits[f"{stem}_scale"]).astype(np.float32)
    zero = _array(inits[f"{stem}_zero_point"]).astype(np.float32)
    if scale.ndim == 1 and q.ndim == 2:
        shape = [1, 1]
        shape[axis] = scale.size
        scale, zero = scale.reshape(shape), zero.reshape(shape)
    return (q - zero) * scale


def _module_of(output: str) -> str:
    """'/encoder/encoder/layer.0/attention/self/query/MatMul_output_0_…' -> the module path."""
    path = output.lstrip("/").split("/MatMul", 1)[0]
    return path.replace("/", ".")


def onnx_state(model_path: Path) -> dict[str, np.ndarray]:
    """Return {parameter name: float array} recovered from an int8 (or float) ONNX export."""
    import onnx

    graph = onnx.load(str(model_path)).graph
    inits = {i.name: i for i in graph.initializer}
    axes = {  # a quantised embedding's per-channel axis, from its DequantizeLinear node
        node.input[1][: -len("_scale")]: next((a.i for a in node.attribute if a.name == "axis"), 1)
        for node in graph.node
        if node.op_type == "DequantizeLinear" and node.input[1].endswith("_scale")
    }
    state: dict[str, np.ndarray] = {}
    for name, init in inits.items():
        if name.endswith(("_quantized", "_scale", "_zero_point")) or name.startswith("onnx::"):
            continue
        if init.data_type == onnx.TensorProto.FLOAT:
            state[name] = _array(init).astype(np.float32)
    for name in inits:
        if name.endswith("_quantized") and not name.startswith("onnx::"):
            stem = name[: -len("_quantized")]
            if stem.endswith("_Transposed"):  # the head, stored transposed
                state[stem[: -len("_Transposed")]] = _dequantised(inits, stem).T.copy()
            else:  # the embeddings
                state[stem] = _dequantised(inits, stem, axes.get(stem, 1))
    for node in graph.node:
        weight = node.input[1] if len(node.input) > 1 else ""
        if node.op_type == "MatMulInteger" and weight.startswith("onnx::"):
            stem = weight[: -len("_quantized")]
            state[f"{_module_of(node.output[0])}.weight"] = _dequantised(inits, stem).T.copy()
        elif node.op_type == "MatMul" and weight.startswith("onnx::") and weight in inits:
            state[f"{_module_of(node.output[0])}.weight"] = _array(weight and inits[weight]).T
    return state


def load_recovered(model: Any, directory: Path) -> None:
    """Load the weights recovered from `directory/stance.onnx` into a freshly built model."""
    import torch

    from bots.training.trainer import TrainError

    state = onnx_state(directory / "stance.onnx")
    wanted = model.state_dict()
    # The pooler is unused by the mean-pool head, so the export has none; it keeps its start.
    unused = ("position_ids", ".pooler.dense.weight", ".pooler.dense.bias")
    missing = sorted(k for k in wanted if k not in state and not k.endswith(unused))
    if missing:
        raise TrainError(
            f"{directory}/stance.onnx does not name every parameter of the model; missing: "
            f"{', '.join(missing[:8])}{' …' if len(missing) > 8 else ''}"
        )
    tensors = {
        k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in state.items() if k in wanted
    }
    for key, tensor in tensors.items():
        if tuple(tensor.shape) != tuple(wanted[key].shape):
            raise TrainError(
                f"{directory}/stance.onnx: {key} has shape {tuple(tensor.shape)}, the model "
                f"{tuple(wanted[key].shape)} (another base?)"
            )
    model.load_state_dict(tensors, strict=False)
