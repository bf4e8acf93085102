"""`python -m bench.eval_matrix`: every AVeriTeC figure the project reports, in one command.

Runs `factbot eval averitec` on one stratified sample (`--sample`, `--seed`) for each judge
(`no-model`; `gullible`, the credulous stand-in of `bench.gullible` behind a local
OpenAI-compatible server; `local`, the real local model, slow: a minute a claim on 2 cores),
each mode (gold, retrieval) and graph verification on and off, writes each run's full report
under `--out` and prints one line per run: macro-F1 and accuracy with their 95 % bootstrap
intervals, recall of `misleading`, precision of `false`, accurate→false and false→accurate
counts, claims decided by a fallback.

    python -m bench.eval_matrix --sample 100 --seed 0 --judges no-model,gullible
    python -m bench.eval_matrix --sample 100 --seed 0 --judges local     # a quiet machine
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click

from bench.gullible import GullibleReader
from bench.standins import CallLog, ModelStandin, serving
from bots.cli.main import main as factbot

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "eval" / "averitec" / "dev.json"
JUDGES = ("no-model", "gullible", "local")


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextlib.contextmanager
def _judge(name: str) -> Iterator[tuple[list[str], dict[str, str]]]:
    """Yield the eval arguments and environment of one judge (serving its stand-in)."""
    if name == "no-model":
        yield ["--no-model"], {}
    elif name == "gullible":
        standin = ModelStandin("127.0.0.1", CallLog(), model=GullibleReader(), delay=0.0)
        with serving(standin):
            yield (
                ["--model"],
                {
                    "FACTBOT_MODEL__MODE": "endpoint",
                    "FACTBOT_MODEL__BASE_URL": standin.base_url,
                    "FACTBOT_MODEL__MODEL": "gullible",
                },
            )
    elif name == "local":
        yield ["--model"], {"FACTBOT_MODEL__MODE": "local"}
    else:
        raise click.BadParameter(f"unknown judge {name!r}: use {', '.join(JUDGES)}")


def summary(report: dict[str, Any]) -> dict[str, Any]:
    """Return the figures of one run that the matrix prints."""
    per = report["per_label"]
    return {
        "macro_f1": report["macro_f1"],
        "macro_f1_ci95": report["macro_f1_ci95"],
        "accuracy": report["accuracy"],
        "accuracy_ci95": report["accuracy_ci95"],
        "misleading_recall": per["misleading"]["recall"],
        "false_precision": per["false"]["precision"],
        "accurate_called_false": report["accurate_called_false"],
        "false_called_accurate": report["false_called_accurate"],
        "claims_with_fallback": report["claims_with_fallback"],
        "decided_by": report["decided_by"],
    }


@click.command()
@click.option("--data", type=click.Path(exists=True, path_type=Path), default=DATA)
@click.option("--sample", type=click.IntRange(min=1), default=100, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--limit", type=int, help="Only the first N claims (the pool of retrieval mode).")
@click.option("--judges", default="no-model,gullible", show_default=True)
@click.option("--modes", default="gold,retrieval", show_default=True)
@click.option("--graph", "graphs", default="on,off", show_default=True)
@click.option("--out", type=click.Path(path_type=Path), default=Path("reports/eval_matrix"))
def main(
    data: Path,
    sample: int,
    seed: int,
    limit: int | None,
    judges: str,
    modes: str,
    graphs: str,
    out: Path,
) -> None:
    """Run the AVeriTeC evaluation for every judge, mode and graph setting; print the figures."""
    out.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    for judge in judges.split(","):
        with _judge(judge) as (args, env), _environment(env):
            for mode in modes.split(","):
                for graph in graphs.split(","):
                    path = out / f"{judge}-{mode}-graph_{graph}.json"
                    argv = ["eval", "averitec", "--no-progress", "--data", str(data)]
                    argv += ["--mode", mode, "--sample", str(sample), "--seed", str(seed)]
                    argv += ["--graph" if graph == "on" else "--no-graph", *args]
                    argv += ["--limit", str(limit)] if limit else []
                    argv += ["--report", str(path)]
                    with (
                        Path(os.devnull).open("w") as quiet,
                        contextlib.redirect_stdout(quiet),
                    ):
                        factbot.main(argv, standalone_mode=False)
                    report = json.loads(path.read_text(encoding="utf-8"))
                    row = {"judge": judge, "mode": mode, "graph": graph, **summary(report)}
                    rows.append(row)
                    click.echo(json.dumps(row))
    (out / "summary.json").write_text(
        json.dumps({"sample": sample, "seed": seed, "runs": rows}, indent=2), encoding="utf-8"
    )


if __name__ == "__main__":
    main()
