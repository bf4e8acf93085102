"""The choice of embedding backend, named by FACTBOT_EMBEDDING__BACKEND.

"onnx" (the default) runs the int8 ONNX export on onnxruntime; "torch" runs sentence-transformers.
Neither library is imported until the embedder loads its model.
"""

from __future__ import annotations

from pipeline.embedding.embedder import LocalEmbedder, SentenceTransformerEmbedder
from pipeline.embedding.onnx import OnnxEmbedder
from pipeline.errors import ConfigError
from pipeline.util.cpu import CpuPool

BACKENDS = ("onnx", "torch")
# onnxruntime keeps its largest batch's buffers: 64 passages peaked at 1.3 GB RSS and 16 at
# 0.47 GB, with 16 also the fastest (128 passages, one thread; `factbot bench ingest`).
DEFAULT_BATCH = {"onnx": 16, "torch": 64}


def build_embedder(
    backend: str,
    model: str = "bundled",
    *,
    batch_size: int | None = None,
    threads: int | None = None,
    cpu: CpuPool | None = None,
) -> LocalEmbedder:
    """Return the embedder of backend ("onnx" or "torch"); nothing loads until first use.

    batch_size None takes the backend's default (`DEFAULT_BATCH`).
    """
    batch = batch_size or DEFAULT_BATCH.get(backend, 64)
    if backend == "onnx":
        return OnnxEmbedder(model, batch_size=batch, threads=threads, cpu=cpu)
    if backend == "torch":
        return SentenceTransformerEmbedder(model, batch_size=batch, threads=threads, cpu=cpu)
    raise ConfigError(
        f"unknown embedding backend {backend!r}: set FACTBOT_EMBEDDING__BACKEND to onnx or torch"
    )
