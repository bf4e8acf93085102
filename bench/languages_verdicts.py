"""Verdicts per language beside English, on the same AVeriTeC claims and the same evidence.

`python -m bench.languages_verdicts` reads the parallel set
(tests/fixtures/languages/parallel_claims.jsonl: the 30 claims of the stratified AVeriTeC dev
sample, `--sample 30 --seed 0`, translated by hand into es, de, fr, ar and zh; see the
fixture's README for provenance and licence), takes each claim's English text, gold label and
gold evidence from AVeriTeC dev at run time (`--dev`, ../shared/data), and runs
`factbot eval averitec --mode gold` once per language with the local default judge (the
verifier: no language-model endpoint). The evidence stays English in every language, as
cross-language retrieval would find it. It prints, per language,

- ``verdicts``: how many claims got each label, and ``decided_by``: how;
- ``agreement``: the share of claims whose verdict equals the English run's on the same claim;
- ``gold_accuracy``: the share equal to AVeriTeC's gold label;
- ``gate``: claims outside English given `false` by anything but a rated fact-check (issue
  40: never `false` from the English stance model alone); it must be empty.

Runs: ~1 minute a language for the verifier on 2 cores (the translations skip the stance
model, so they are faster).
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from pipeline.records.domain import Basis, Label

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "fixtures" / "languages" / "parallel_claims.jsonl"
DEV = ROOT.parent / "shared" / "data" / "eval" / "averitec" / "dev.json"
LANGUAGES = ("es", "de", "fr", "ar", "zh")


def read_parallel(path: Path = FIXTURE) -> list[dict[str, Any]]:
    """Return the parallel set's rows: an AVeriTeC dev index and its translations."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    for row in rows:
        missing = [code for code in LANGUAGES if not str(row.get(code, "")).strip()]
        if missing:
            raise ValueError(f"{path}: claim {row.get('index')} has no {', '.join(missing)}")
    return rows


def language_data(
    dev: Sequence[Mapping[str, Any]], rows: Sequence[Mapping[str, Any]], code: str
) -> list[dict[str, Any]]:
    """Return the AVeriTeC items of the set with each claim in `code` ("en": as published)."""
    items: list[dict[str, Any]] = []
    for row in rows:
        item = dict(dev[int(row["index"])])
        if code != "en":
            item["claim"] = row[code]
        items.append(item)
    return items


def read_journal(path: Path) -> dict[int, dict[str, Any]]:
    """Return the claim records of an `eval averitec --resume` journal by their index."""
    found: dict[int, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("kind") == "claim":
            found[int(record["index"])] = record
    return found


def summarise(runs: Mapping[str, Mapping[int, Mapping[str, Any]]]) -> dict[str, Any]:
    """Return the figures per language from each language's claim records (English first)."""
    english = runs.get("en", {})
    figures: dict[str, Any] = {}
    for code, records in runs.items():
        same = [i for i in records if i in english]
        figures[code] = {
            "claims": len(records),
            "verdicts": dict(Counter(r["verdict"] for r in records.values()).most_common()),
            "decided_by": dict(Counter(r["decided_by"] for r in records.values()).most_common()),
            "agreement": round(
                sum(records[i]["verdict"] == english[i]["verdict"] for i in same) / len(same), 3
            )
            if same
            else None,
            "gold_accuracy": round(
                sum(r["verdict"] == r["gold"] for r in records.values()) / len(records), 3
            )
            if records
            else None,
            "gate": [] if code == "en" else gate_violations(records.values()),
        }
    return figures


def gate_violations(records: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Return the non-English claims given `false` by anything but a rated fact-check."""
    return [
        {"index": r["index"], "claim": r["claim"][:80], "decided_by": r["decided_by"]}
        for r in records
        if r["verdict"] == Label.FALSE.value and r["decided_by"] != Basis.REVIEW.value
    ]


def run_language(
    data: list[dict[str, Any]], journal: Path, *, judge: str
) -> dict[int, dict[str, Any]]:
    """Run `factbot eval averitec --mode gold` on data; return its claim records."""
    from bots.cli.main import main as factbot

    with tempfile.TemporaryDirectory(prefix="factbot-parallel-") as tmp:
        path = Path(tmp) / "claims.json"
        path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        argv = ["eval", "averitec", "--no-progress", "--data", str(path), "--mode", "gold"]
        argv += ["--judge", judge, "--resume", str(journal)]
        factbot.main(argv, standalone_mode=False)
    return read_journal(journal)


@click.command()
@click.option("--dev", type=click.Path(exists=True, path_type=Path), default=DEV)
@click.option("--fixture", type=click.Path(exists=True, path_type=Path), default=FIXTURE)
@click.option("--languages", default=",".join(("en", *LANGUAGES)), show_default=True)
@click.option("--limit", type=click.IntRange(min=1), help="Only the first N claims of the set.")
@click.option("--judge", type=click.Choice(["verifier", "review"]), default="verifier")
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=Path("reports/languages_verdicts"),
    show_default=True,
    help="Each language's journal (rerun: claims already there are kept).",
)
def main(
    dev: Path, fixture: Path, languages: str, limit: int | None, judge: str, out: Path
) -> None:
    """Print verdicts per language beside English on the same claims, and the gate."""
    rows = read_parallel(fixture)[:limit]
    published = json.loads(dev.read_text(encoding="utf-8"))
    out.mkdir(parents=True, exist_ok=True)
    runs = {
        code: run_language(
            language_data(published, rows, code), out / f"{code}-{judge}.jsonl", judge=judge
        )
        for code in languages.split(",")
    }
    figures = summarise(runs)
    click.echo(json.dumps(figures, indent=2, ensure_ascii=False))
    if any(f["gate"] for f in figures.values()):
        raise click.ClickException("a claim outside English was judged false without a fact-check")


if __name__ == "__main__":
    main()
