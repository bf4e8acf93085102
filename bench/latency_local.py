"""`factbot bench latency-local`: whole checks on the real local Qwen model, refinement on.

The search provider and the publisher sites are the stand-ins of `bench.latency` (loopback, no
delays), so what is timed is the pipeline and the real model: the local llama.cpp server that
`factbot models pull` installs (Qwen2.5-Coder-1.5B-Instruct Q4_K_M, MODELS.md), started once by
the App as in `factbot serve`. Each post's check gives its seconds, the seconds of each stage and
the model calls and tokens of each stage (`Check.usage`).

Levers are options, so each can be measured rather than assumed: `--refine-rounds` (fewer
calls), `--max-evidence` (prompt length: the passages each claim keeps, which extraction reads
in one call and the judge in its narratives), `--max-claims` (calls per post).
`--docs-per-call` only matters above `--max-evidence`: a claim's passages go in one call.
The CPU is shared with the model server: figures from a loaded machine are indicative only.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import click
import numpy as np

from bench.languages import resident_mb
from bench.latency_posts import POSTS, TRANSLATED, max_evidence_option
from bench.standins import CallLog, SearchStandin, instant, page_site, serving


def _settings(data_dir: Path, search: SearchStandin, hosts: list[str], opts: dict[str, Any]) -> Any:
    from bots.settings import (
        FetchSettings,
        ModelSettings,
        RetrievalSettings,
        SearchSettings,
        Settings,
        VerifierSettings,
    )

    return Settings(
        data_dir=data_dir,
        log_level="WARNING",
        search=SearchSettings(providers=["searxng"], searxng_url=search.base),
        fetch=FetchSettings(allowed_networks=tuple(f"{h}/32" for h in hosts)),
        model=ModelSettings(
            # The verifier needs no model: "auto" starts none for its checks either way.
            mode="auto" if opts["judge"] in ("auto", "verifier") else "local",
            models_dir=opts["models_dir"],
            refine_rounds=opts["refine_rounds"],
            docs_per_call=opts["docs_per_call"],
            timeout=opts["timeout"],
            local_prompt_cache_mb=opts["prompt_cache_mb"],
        ),
        max_claims=opts["max_claims"],
        verifier=VerifierSettings(judge=opts["judge"]),
        # The stand-in publishers are unrated loopback hosts found by web search.
        retrieval=RetrievalSettings(unrated_sources="allow", max_evidence=opts["max_evidence"]),
    )


async def _check(app: Any, text: str) -> dict[str, Any]:
    from pipeline.errors import EmptyPostError
    from pipeline.inputs.posts import post_from_text

    start = time.monotonic()
    try:
        check = await app.check(post_from_text(text, max_chars=app.settings.max_post_chars))
    except EmptyPostError as exc:  # a refused post is a finding to report, not a crash
        return {"seconds": round(time.monotonic() - start, 1), "refused": str(exc)}
    seconds = time.monotonic() - start
    decided = [v.basis.value for v in check.verdict.claims if v.basis is not None]
    stages: dict[str, float] = {}
    for timing in check.timings:
        stages[timing.stage] = round(stages.get(timing.stage, 0.0) + timing.seconds, 2)
    return {
        "seconds": round(seconds, 1),
        "claims": len(check.claims),
        "label": check.verdict.label.value,
        "post_language": check.post.language,
        "claim_languages": [c.language for c in check.claims],
        "decided_by": decided,
        "model_calls": sum(u.calls for u in check.usage),
        "model_failures": sum(u.failures for u in check.usage),
        "input_tokens": sum(u.input_tokens for u in check.usage),
        "output_tokens": sum(u.output_tokens for u in check.usage),
        "calls_by_stage": {u.stage: u.calls for u in check.usage},
        "input_tokens_by_stage": {u.stage: u.input_tokens for u in check.usage},
        "output_tokens_by_stage": {u.stage: u.output_tokens for u in check.usage},
        "load_average": round(os.getloadavg()[0], 2),  # seconds mean little on a busy machine
        "stage_seconds": stages,
    }


def measure(posts: int, opts: dict[str, Any]) -> dict[str, Any]:
    """Check the first `posts` benchmark posts on the local model; return the figures."""
    from bots.app.root import App

    before_mb = resident_mb()  # the process before the App: what a check's models add
    log = CallLog()
    language = opts.get("language", "en")
    texts = [p.text for p in POSTS] if language == "en" else list(TRANSLATED[language])
    chosen = texts[:posts]
    claims = [c for p in POSTS for c in p.claims]
    with ExitStack() as stack:
        pages = [page_site(n, log, claims=claims, delay=0.0, robots_delay=0.0) for n in range(4)]
        search = SearchStandin(
            "127.0.0.1", log, claims=claims, sites=[p.base for p in pages], results=4, delay=0.0
        )
        stack.enter_context(serving(*pages, search))
        stack.enter_context(instant(*pages, search))
        hosts = sorted({str(p.server_address[0]) for p in pages} | {"127.0.0.1"})
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="factbot-local-")))
        app = App(_settings(tmp, search, hosts, opts))
        if app.model_choice != "local" and app.checks.judge_choice != "verifier":
            raise click.ClickException("the local model is not pulled: run `factbot models pull`")
        stack.callback(app.close)

        server: dict[str, float] = {}

        async def go() -> tuple[float, list[dict[str, Any]]]:
            start = time.monotonic()
            await app.start(warm=True)  # embedder and model server: start-up, not check time
            started = time.monotonic() - start
            try:
                return started, [await _check(app, text) for text in chosen]
            finally:
                server.update(_server_memory(app))
                await app.close_fetcher()

        startup, per_post = asyncio.run(go())
    seconds = [p["seconds"] for p in per_post]
    return {
        "language": language,
        "posts": len(per_post),
        "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()],
        "options": {k: str(v) for k, v in opts.items()},
        "startup_seconds": round(startup, 1),
        "seconds_p50": round(statistics.median(seconds), 1),
        "seconds_p95": round(float(np.percentile(seconds, 95)), 1),
        "refused": sum("refused" in p for p in per_post),
        "model_calls_mean": round(statistics.fmean(p.get("model_calls", 0) for p in per_post), 1),
        "tokens_mean": round(
            statistics.fmean(p.get("input_tokens", 0) + p.get("output_tokens", 0) for p in per_post)
        ),
        "model_server_mb": server,  # peak and last resident set of the llama server process
        # this process's peak resident set: embedder, stance model, index, pipeline
        "process_peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "process_before_mb": round(before_mb, 1),  # this process before the App was made
        "per_post": per_post,
    }


def _server_memory(app: Any) -> dict[str, float]:
    """Return the model server's peak (VmHWM) and current (VmRSS) resident memory in MB."""
    pid = app.resources.local_model.pid
    if pid is None:
        return {}
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return {}
    found = {}
    for line in status.splitlines():
        key, _, value = line.partition(":")
        if key in ("VmHWM", "VmRSS"):
            found["peak" if key == "VmHWM" else "last"] = round(int(value.split()[0]) / 1024, 1)
    return found


@click.command("latency-local")
@click.option("--posts", type=click.IntRange(1, len(POSTS)), default=10, show_default=True)
@click.option("--refine-rounds", type=click.IntRange(0, 2), default=2, show_default=True)
@click.option("--docs-per-call", type=click.IntRange(1, 10), default=4, show_default=True)
@click.option("--max-claims", type=click.IntRange(1, 10), default=3, show_default=True)
@max_evidence_option
@click.option("--timeout", type=float, default=300.0, show_default=True, help="Seconds a call.")
@click.option(
    "--judge",
    type=click.Choice(["auto", "verifier", "model", "hybrid"]),
    default="auto",
    show_default=True,
    help="FACTBOT_VERIFIER__JUDGE for the run (auto, the local default: the verifier).",
)
@click.option(
    "--prompt-cache-mb",
    type=click.IntRange(0, 16384),
    default=0,
    show_default=True,
    help="FACTBOT_MODEL__LOCAL_PROMPT_CACHE_MB for the run (0 = off).",
)
@click.option(
    "--models-dir",
    type=click.Path(path_type=Path),
    default=Path(".models"),
    show_default=True,
    help="Where `factbot models pull` put the GGUF.",
)
@click.option(
    "--language",
    type=click.Choice(["en", *TRANSLATED]),
    default="en",
    show_default=True,
    help="The posts' language: en, or the first five translated by hand.",
)
@click.option("--report", "report_path", type=click.Path(path_type=Path), help="Write JSON here.")
def latency_local(report_path: Path | None, posts: int, **opts: Any) -> None:
    """Time whole checks of text posts (1-3 claims) on the real local model.

    \b
    Examples:
      factbot bench latency-local --posts 10
      factbot bench latency-local --posts 2 --refine-rounds 0
      factbot bench latency-local --posts 10 --judge model   # the language-model judge
      factbot bench latency-local --posts 5 --language ar    # Arabic posts, the local default
    """
    figures = measure(posts, opts)
    click.echo(json.dumps(figures, indent=2))
    if report_path:
        report_path.write_text(json.dumps(figures, indent=2), encoding="utf-8")
