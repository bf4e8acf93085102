"""`factbot doctor`: renders `bots.app.diagnosis.Diagnosis` for a terminal (full or short) or JSON.

The short form is what `factbot serve` prints at start, so `make run` says at once whether
checks will find evidence. Exit status: 1 when a problem is an error, else 0.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import click

from bots.app.diagnosis import Diagnosis, diagnose
from bots.settings import Settings, load_settings
from pipeline.errors import ConfigError


def render_short(diagnosis: Diagnosis) -> str:
    """Return the few lines `factbot serve` prints at start: sources, model, problems."""
    d = diagnosis
    sources = ", ".join(
        f"{s.name} {'ok' if s.answers else 'DOWN'}" for s in d.sources if s.kind == "live search"
    )
    local = d.sources[0].detail
    live = f"live search {sources}" if d.live_search == "on" else f"live search {d.live_search}"
    head = "factbot doctor: " + (
        "all good" if not d.problems else f"{len(d.problems)} problem(s), {len(d.errors)} error(s)"
    )
    lines = [
        head,
        f"  evidence: local index {local}; {live}",
        f"  checks use: {d.model['path']}",
        f"  database: {_database_line(d)}",
        f"  queue: {_queue_line(d)}",
    ]
    lines += [f"  {p.severity.upper()}: {p.what}\n      fix: {p.fix}" for p in d.problems]
    if d.problems:
        lines.append("  (factbot doctor for every detail)")
    return "\n".join(lines)


def render_full(diagnosis: Diagnosis) -> str:
    """Return every fact of the diagnosis as text."""
    d = diagnosis
    lines = ["Evidence sources:"]
    for s in d.sources:
        took = f" ({s.seconds:.2f}s)" if s.kind == "live search" else ""
        lines.append(f"  {s.name} [{s.kind}]: {'answers' if s.answers else 'NO'}: {s.detail}{took}")
    if d.live_search != "on":
        lines.append(f"  live search {d.live_search}")
    else:
        lines.append(f"  cited from live search: {d.web_citations}")
    lines += [
        "Model:",
        f"  checks use: {d.model['path']}",
        f"  mode {d.model['mode']}, status: {d.model['status']}",
        f"  embedder: {d.embedder['model']} ({d.embedder['status']}: {d.embedder['path']})",
        "Platforms:",
        *(f"  {name}: {p['detail']}" for name, p in d.platforms.items()),
        *_notes_lines(d),
        "Database:",
        f"  {_database_line(d)}",
        f"  engine: {d.database.engine}"
        + (f" (shared: {d.database.shared})" if d.database.shared else ""),
        f"  queue: {_queue_line(d)}",
        f"  live nodes: {_nodes_line(d)}",
        "Settings in force (secrets masked):",
        *(f"  {line}" for line in _flatten(d.settings)),
    ]
    if d.problems:
        lines.append(f"Problems ({len(d.problems)}):")
        lines += [f"  {p.severity.upper()}: {p.what}\n      fix: {p.fix}" for p in d.problems]
    else:
        lines.append("No problems found.")
    return "\n".join(lines)


def notes_lines(summary: dict[str, Any]) -> list[str]:
    """Return the X Community Notes lines: admission standing and the day's note limit."""
    own, api = summary["admission"], summary["admission_api"]

    def shares(s: dict[str, Any]) -> str:
        if not s["notes"]:
            return "no scored notes"
        return (
            f"ClaimOpinion high {s['claim_opinion_high']:.0%} / low {s['claim_opinion_low']:.0%}, "
            f"UrlValidity high {s['url_validity_high']:.0%}, "
            f"HarassmentAbuse high {s['harassment_abuse_high']:.0%} over {s['notes']}"
        )

    agree = summary["claim_opinion_agreement"]
    lines = [
        f"  x notes: admission {own['state']} (factbot's scores: {shares(own)})",
        f"    X's recorded buckets: {api['state']} ({shares(api)})",
        f"    today: {summary['notes_today']} of {summary['daily_limit']} notes a day "
        "(X's documented limit; it follows the hit rate once admitted)",
    ]
    if agree["notes"]:
        lines.append(
            f"    ClaimOpinion, factbot vs X: buckets agree on {agree['bucket_agreement']:.0%} "
            f"of {agree['notes']} notes, r = {agree['correlation']}"
        )
    return lines


def _notes_lines(d: Diagnosis) -> list[str]:
    notes = d.platforms.get("x", {}).get("notes")
    return notes_lines(notes) if notes else []


def _database_line(d: Diagnosis) -> str:
    db = d.database
    if not db.opens:
        return f"{db.path}: {db.error}"
    migrations = "migrations current" if not db.pending else f"{len(db.pending)} pending"
    integrity = f"quick_check {db.integrity}" if db.integrity else "integrity not checked"
    shared = f" {db.shared} (this node's index: {db.path})" if db.shared else f" {db.path}"
    return f"{db.engine}{shared}: opens, {migrations}, {integrity}"


def _queue_line(d: Diagnosis) -> str:
    db = d.database
    depth = (
        ", ".join(f"{n} {status}" for status, n in db.queue.items())
        if db.queue is not None
        else "no jobs table yet"
    )
    engine = d.queue_engine
    if engine.get("engine") != "saq":
        return f"{db.queue_text}: {depth}"
    held = (
        f"error: {engine['error']}"
        if "error" in engine
        else f"{engine['queued']} queued, {engine['active']} active, "
        f"{engine['scheduled']} scheduled, {engine['workers']} workers"
    )
    return f"saq ({engine['backend']}, queue {engine['name']}): {held}; jobs table: {depth}"


def _nodes_line(d: Diagnosis) -> str:
    nodes = d.database.nodes
    return f"{len(nodes)}: " + "; ".join(nodes) if nodes else "none (no worker heartbeat lately)"


def _flatten(data: dict[str, Any], prefix: str = "FACTBOT_") -> list[str]:
    rows = []
    for key, value in data.items():
        name = f"{prefix}{key.upper()}"
        if isinstance(value, dict) and value and all(isinstance(k, str) for k in value):
            rows += _flatten(value, f"{name}__")
        else:
            rows.append(f"{name}={json.dumps(value)}")
    return rows


def run_diagnosis(settings: Settings, *, integrity: bool = True) -> Diagnosis:
    """Return the diagnosis of settings, computed in an event loop of its own."""
    return asyncio.run(diagnose(settings, integrity=integrity))


@click.command("doctor")
@click.option("--json", "as_json", is_flag=True, help="Print the facts as JSON.")
@click.option("--short", is_flag=True, help="Only the summary `factbot serve` prints at start.")
def doctor_command(as_json: bool, short: bool) -> None:
    """Say whether checks can work here: evidence sources, model, platforms, database.

    Each problem comes with the command that fixes it. Exit status 1 when one is an error.

    \b
    Examples:
      factbot doctor
      factbot doctor --json | jq .problems
    """
    try:
        settings = load_settings()
    except ConfigError as exc:
        click.echo(f"factbot doctor: the settings do not load:\n{exc}", err=True)
        raise SystemExit(1) from exc
    probe_log = logging.getLogger("pipeline.search.probe")
    level = probe_log.level
    probe_log.setLevel(logging.ERROR)  # the report says which provider is down, once
    try:
        diagnosis = run_diagnosis(settings)
    finally:
        probe_log.setLevel(level)
    if as_json:
        click.echo(json.dumps(diagnosis.to_json(), indent=2, ensure_ascii=False))
    else:
        click.echo(render_short(diagnosis) if short else render_full(diagnosis))
    if diagnosis.errors:
        raise SystemExit(1)
