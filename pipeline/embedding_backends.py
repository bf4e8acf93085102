"""The choice of embedding backend, named by FACTBOT_EMBEDDING__BACKEND.

"onnx" (the default) runs the int8 ONNX export on onnxruntime; "torch" runs sentence-transformers.
Neither library is imported until the embedder loads its model.
"""

from __future__ import annotations

from pipeline.cpu import CpuPool
from pipeline.embedder import LocalEmbedder, SentenceTransformerEmbedder
from pipeline.embedder_onnx import OnnxEmbedder
from pipeline.errors import ConfigError

BACKENDS = ("onnx", "torch")


def build_embedder(
    backend: str,
    model: str = "bundled",
    *,
    batch_size: int = 64,
    threads: int | None = None,
    cpu: CpuPool | None = None,
) -> LocalEmbedder:
    """Return the embedder of backend ("onnx" or "torch"); nothing loads until first use."""
    if backend == "onnx":
        return OnnxEmbedder(model, batch_size=batch_size, threads=threads, cpu=cpu)
    if backend == "torch":
        return SentenceTransformerEmbedder(model, batch_size=batch_size, threads=threads, cpu=cpu)
    raise ConfigError(
        f"unknown embedding backend {backend!r}: set FACTBOT_EMBEDDING__BACKEND to onnx or torch"
    )
