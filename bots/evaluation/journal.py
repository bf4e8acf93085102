"""A resumable evaluation: each claim's outcome kept as one JSON line the moment it is decided.

A 100-claim run on the local model takes hours on 2 cores, longer than a session and long
enough to meet a crash. `eval averitec --resume FILE` appends each claim's outcome to FILE as
soon as it is known (flushed and synced), skips the claims FILE already holds, and computes the
final report from FILE alone, so a run cut after k claims and resumed gives the report an
uncut run gives (bar the seconds).

The file's first line describes the run (data, mode, judge, graph, sample, seed); resuming with
other settings is refused, since mixing two runs' claims would make a report of neither. A line
that does not parse (the last one, cut by a crash mid-write) is skipped with a warning and its
claim is run again; nothing else in the file is touched. A run whose model died part-way (the
local server killed, every later claim decided by the no-model fallback) is salvaged with
`--rerun-fallbacks`: claims recorded with a fallback run again and their new line supersedes
the old one.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from bots.evaluation.averitec import EvalClaim, Outcome, StageFailures
from pipeline.records.codec import from_plain, to_plain
from pipeline.records.domain import Label

log = logging.getLogger(__name__)

FORMAT = 1


class JournalMismatchError(ValueError):
    """The journal was written by a run with other settings (or is not a journal at all)."""


@dataclass(frozen=True)
class JournalContents:
    """What a journal holds: its run description, outcomes by claim index, and skipped lines."""

    run: dict[str, Any] | None
    outcomes: dict[int, Outcome]
    skipped_lines: tuple[int, ...]


def outcome_record(outcome: Outcome) -> dict[str, Any]:
    """Return the JSON line of one claim's outcome (everything the report is computed from)."""
    return {
        "kind": "claim",
        "index": outcome.claim.index,
        "claim": outcome.claim.text,
        "gold": outcome.claim.gold.value,
        "verdict": outcome.predicted.value,
        "decided_by": outcome.decided_by,
        "fallback": outcome.fallback,
        "cited": list(outcome.cited),
        "references": outcome.references,
        "cited_gold": outcome.cited_gold,
        "found_own_evidence": outcome.found_own_evidence,
        "evidence_documents": outcome.evidence_documents,
        "own_evidence_documents": outcome.own_evidence_documents,
        "quoted": outcome.quoted,
        "quote_agrees": outcome.quote_agrees,
        "stages": to_plain(outcome.stages, kind=dict[str, StageFailures]),
        "model_calls": outcome.model_calls,
        "input_tokens": outcome.input_tokens,
        "output_tokens": outcome.output_tokens,
        "cost_usd": outcome.cost_usd,
        "error": outcome.error,
        "seconds": round(outcome.seconds, 3),
        "trace": outcome.trace,
    }


def outcome_from_record(record: Mapping[str, Any]) -> Outcome:
    """Return the outcome a journal line describes (KeyError or ValueError if it is malformed)."""
    claim = EvalClaim(
        index=int(record["index"]),
        text=str(record["claim"]),
        gold=Label(record["gold"]),
        documents=(),
    )
    return Outcome(
        claim=claim,
        predicted=Label(record["verdict"]),
        seconds=float(record["seconds"]),
        references=int(record["references"]),
        found_own_evidence=bool(record["found_own_evidence"]),
        evidence_documents=int(record["evidence_documents"]),
        own_evidence_documents=int(record["own_evidence_documents"]),
        model_calls=int(record["model_calls"]),
        input_tokens=int(record["input_tokens"]),
        output_tokens=int(record["output_tokens"]),
        cost_usd=float(record["cost_usd"]),
        error=record["error"],
        decided_by=str(record["decided_by"]),
        fallback=bool(record["fallback"]),
        stages=from_plain(dict[str, StageFailures], record["stages"]),
        cited_gold=int(record["cited_gold"]),
        quoted=int(record["quoted"]),
        quote_agrees=int(record["quote_agrees"]),
        cited=tuple(str(url) for url in record["cited"]),
        trace=dict(record.get("trace") or {}),  # journals before the trace have none
    )


def read_journal(path: Path) -> JournalContents:
    """Return what the journal at path holds, skipping (with a warning) lines that do not parse.

    A missing or empty file holds nothing. A claim recorded twice keeps its last record (a
    claim run again, as `--rerun-fallbacks` does, supersedes what it said before).
    """
    if not path.exists():
        return JournalContents(None, {}, ())
    run: dict[str, Any] | None = None
    outcomes: dict[int, Outcome] = {}
    skipped: list[int] = []
    with path.open(encoding="utf-8", errors="replace") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                if not isinstance(record, dict):
                    raise ValueError("not an object")
                if record.get("kind") == "run":
                    if run is None:
                        run = record
                    continue
                outcome = outcome_from_record(record)
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                log.warning(
                    "skipping an unreadable journal line; its claim runs again",
                    extra={"journal": str(path), "line": number, "error": str(exc)},
                )
                skipped.append(number)
                continue
            outcomes[outcome.claim.index] = outcome
    return JournalContents(run, outcomes, tuple(skipped))


class Journal:
    """An append-only journal of one evaluation run's outcomes."""

    def __init__(self, path: Path, run: Mapping[str, Any]) -> None:
        self.path = path
        self.run = {"kind": "run", "format": FORMAT, **run}
        self._file: IO[str] | None = None

    def open(self, claims: Sequence[EvalClaim]) -> dict[int, Outcome]:
        """Open the journal for appending and return the outcomes it already holds.

        Raises JournalMismatchError when the file describes another run or holds a claim that
        is not among `claims` (or holds it with another gold label).
        """
        contents = read_journal(self.path)
        if contents.run is None and contents.outcomes:
            raise JournalMismatchError(f"{self.path} has outcomes but no run description line")
        if contents.run is not None:
            theirs = {k: v for k, v in contents.run.items() if k != "started"}
            ours = {k: v for k, v in self.run.items() if k != "started"}
            if theirs != ours:
                changed = sorted(
                    k for k in theirs.keys() | ours.keys() if theirs.get(k) != ours.get(k)
                )
                raise JournalMismatchError(
                    f"{self.path} was written by another run (differs in: {', '.join(changed)}); "
                    "use the same options or another file"
                )
        wanted = {c.index: c.gold for c in claims}
        for index, outcome in contents.outcomes.items():
            if wanted.get(index) is not outcome.claim.gold:
                raise JournalMismatchError(
                    f"{self.path} holds claim {index}, which this run does not have as "
                    f"{outcome.claim.gold.value}"
                )
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("a", encoding="utf-8")
        if self.path.stat().st_size and not _ends_with_newline(self.path):
            self._file.write("\n")  # a line cut by a crash stays on its own, unread
        if contents.run is None:
            self._write(self.run)
        return contents.outcomes

    def append(self, outcome: Outcome) -> None:
        """Write one claim's outcome and push it to disk before the next claim starts."""
        self._write(outcome_record(outcome))

    def _write(self, record: Mapping[str, Any]) -> None:
        if self._file is None:
            raise RuntimeError("the journal is not open")
        self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        """Close the file."""
        if self._file is not None:
            self._file.close()
            self._file = None


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as f:
        f.seek(-1, os.SEEK_END)
        return f.read(1) == b"\n"


def journal_outcomes(path: Path, claims: Sequence[EvalClaim]) -> list[Outcome]:
    """Return the journal's outcomes of `claims`, in the claims' order (the report's input)."""
    outcomes = read_journal(path).outcomes
    return [outcomes[c.index] for c in claims if c.index in outcomes]
