"""End-to-end seconds of a check on the model path, against stand-ins (`factbot bench latency`).

Local stand-ins (`bench.standins`) play the model endpoint, SearXNG and publisher sites, each
with a realistic delay; an `App` is built over them exactly as settings would build it, and text
posts go through `App.check` one after another. The same posts then run again with every limit
at one request at a time (the serial configuration), over a fresh data directory so neither run
is helped by the other's search and page caches, and with the stand-ins serving one request
at a time between them all: the same work done one call at a time.

From the stand-ins' request log (monotonic start and end of every request) each post gets:
model calls in total and on the critical path ("waves": the longest chain of calls each starting
after the previous one ended), searches, page and robots.txt fetches, the summed request time
(what the check would cost with every request one after another: the analytic serial time) and
the local time (no request in flight: embedding, extraction, storage).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import statistics
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.latency_posts import POSTS
from bench.standins import (
    Call,
    CallLog,
    ModelStandin,
    ScriptedModel,
    ScriptedPost,
    SearchStandin,
    busy_seconds,
    instant,
    page_site,
    serving,
    waves,
)

if TYPE_CHECKING:
    from bots.app.root import App
    from bots.settings import Settings

MUSE_SECONDS_PER_POST = 120.0  # the MUSE paper's reported time per post, for scale
GOALS = {"critical_path_model_calls": 3, "model_calls": 6, "speedup": 3.0}


@dataclass(frozen=True)
class Delays:
    """Seconds each stand-in waits before it answers."""

    model: float = 1.5
    search: float = 0.5
    page: float = 0.8
    robots: float = 0.2


def measure(
    posts: Sequence[ScriptedPost],
    *,
    delays: Delays,
    results: int,
    sites: int,
    serial: bool,
    worst: bool = True,
) -> dict[str, Any]:
    """Check posts through App.check against delayed stand-ins (and serially); return figures.

    With worst, the posts also run with every refinement round taken (the judge finds nothing
    relevant) against a model endpoint that serves one request at a time, as llama.cpp does.
    """
    log = CallLog()
    with ExitStack() as stack:
        claims = [claim for post in POSTS for claim in post.claims]
        pages = [
            page_site(n, log, claims=claims, delay=delays.page, robots_delay=delays.robots)
            for n in range(sites)
        ]
        search = SearchStandin(
            "127.0.0.1",
            log,
            claims=claims,
            sites=[p.base for p in pages],
            results=results,
            delay=delays.search,
        )
        scripted = ScriptedModel(POSTS)
        model = ModelStandin("127.0.0.1", log, model=scripted, delay=delays.model)
        servers = (*pages, search, model)
        stack.enter_context(serving(*servers))
        hosts = sorted({str(p.server_address[0]) for p in pages} | {"127.0.0.1"})
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="factbot-latency-")))

        def settings(name: str) -> Settings:
            return _settings(
                tmp / name,  # a fresh data directory: empty search and page caches
                searxng_url=search.base,
                model_url=model.base_url,
                hosts=hosts,
                serial=name == "serial",
            )

        with instant(*servers):  # first-use costs (imports, kernels) are not a check's time
            _run(settings("warm-up"), POSTS[-1:])
        runs: dict[str, list[dict[str, Any]]] = {}
        names = ["parallel", *(["serial"] if serial else []), *(["worst"] if worst else [])]
        for name in names:
            scripted.undecided = name == "worst"
            model.one_at_a_time = threading.Lock() if name == "worst" else None
            # serial: one request at a time across every stand-in, not just per kind
            with log.one_at_a_time() if name == "serial" else contextlib.nullcontext():
                timed = _run(settings(name), posts)
            runs[name] = [_post_figures(t, log.between(t.start, t.end)) for t in timed]
        scripted.undecided, model.one_at_a_time = False, None

    figures = _figures(runs, posts, hosts, results=results)
    figures["delays"] = dataclasses.asdict(delays)
    return figures


def _run(settings: Settings, posts: Sequence[ScriptedPost]) -> list[_Timed]:
    """Check posts one after another through one App, as a service would; time each."""
    from bots.app.root import App

    app = App(settings)
    try:
        app.embedder.warm_up()  # loading the model is start-up, not a check's time
        app.store  # noqa: B018 - open the database and load the seed sources now
        return asyncio.run(_check_all(app, posts))
    finally:
        app.close()


async def _check_all(app: App, posts: Sequence[ScriptedPost]) -> list[_Timed]:
    from pipeline.inputs.posts import post_from_text

    timed = []
    try:
        for scripted in posts:
            post = post_from_text(scripted.text, max_chars=app.settings.max_post_chars)
            start = time.monotonic()
            check = await app.check(post)
            end = time.monotonic()
            stages: defaultdict[str, float] = defaultdict(float)
            for timing in check.timings:
                stages[timing.stage] += timing.seconds
            timed.append(
                _Timed(start, end, check.verdict.label.value, len(check.claims), dict(stages))
            )
    finally:
        await app.close_fetcher()
    return timed


@dataclass(frozen=True)
class _Timed:
    """One post's check as the benchmark saw it."""

    start: float  # time.monotonic()
    end: float
    label: str
    claims: int
    stages: dict[str, float]  # the check's own stage timings, in seconds


def _post_figures(timed: _Timed, calls: Sequence[Call]) -> dict[str, Any]:
    model = [c for c in calls if c.kind.startswith("model:")]
    searches = [c for c in calls if c.kind == "search"]
    fetches = [c for c in calls if c.kind in ("page", "robots")]
    seconds = timed.end - timed.start
    local = seconds - busy_seconds(calls, timed.start, timed.end)
    spans = {
        kind: round(max(c.end for c in group) - min(c.start for c in group), 2)
        for kind, group in (("model", model), ("search", searches), ("fetch", fetches))
        if group
    }
    return {
        "seconds": round(seconds, 2),
        "label": timed.label,
        "claims": timed.claims,
        "model_calls": len(model),
        "model_calls_critical_path": waves(model),
        "model_calls_by_stage": dict(Counter(c.kind.removeprefix("model:") for c in model)),
        "searches": len(searches),
        "search_waves": waves(searches),
        "page_fetches": sum(c.kind == "page" for c in fetches),
        "robots_fetches": sum(c.kind == "robots" for c in fetches),
        "fetch_waves": waves(fetches),
        "request_seconds": round(sum(c.seconds for c in calls), 2),
        "local_seconds": round(local, 2),
        "first_to_last_request_seconds": spans,
        "stage_seconds": {stage: round(s, 2) for stage, s in timed.stages.items()},
    }


def _mean(values: Sequence[float]) -> float:
    return round(statistics.fmean(values), 2) if values else 0.0


def _summary(posts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    stages: defaultdict[str, list[float]] = defaultdict(list)
    for post in posts:
        for stage, seconds in post["stage_seconds"].items():
            stages[stage].append(seconds)
    # A stage that ran for only some posts (a refinement round) still counts 0 for the others.
    stage_means = {s: round(sum(v) / len(posts), 2) for s, v in stages.items()}
    seconds = [p["seconds"] for p in posts]
    return {
        "seconds_p50": round(statistics.median(seconds), 2),
        "seconds_mean": _mean(seconds),
        "model_calls_mean": _mean([p["model_calls"] for p in posts]),
        "model_calls_max": max(p["model_calls"] for p in posts),
        "model_calls_critical_path_max": max(p["model_calls_critical_path"] for p in posts),
        "searches_mean": _mean([p["searches"] for p in posts]),
        "search_waves_mean": _mean([p["search_waves"] for p in posts]),
        "page_fetches_mean": _mean([p["page_fetches"] for p in posts]),
        "robots_fetches_mean": _mean([p["robots_fetches"] for p in posts]),
        "request_seconds_mean": _mean([p["request_seconds"] for p in posts]),
        "local_seconds_mean": _mean([p["local_seconds"] for p in posts]),
        "stage_seconds_mean": dict(sorted(stage_means.items(), key=lambda kv: -kv[1])),
        "dominant_stage": max(stage_means, key=lambda s: stage_means[s], default=None),
    }


def _ratio(slow: float, fast: float) -> float | None:
    return round(slow / fast, 2) if fast > 0 else None


def _settings(
    data_dir: Path, *, searxng_url: str, model_url: str, hosts: Sequence[str], serial: bool
) -> Settings:
    """Return settings over the stand-ins: the defaults, or every limit at one at a time."""
    from pydantic import SecretStr

    from bots.settings import (
        FetchSettings,
        ModelSettings,
        ReferenceSettings,
        RetrievalSettings,
        SearchSettings,
        Settings,
    )

    search = SearchSettings(providers=["searxng"], searxng_url=searxng_url)
    fetch = FetchSettings(allowed_networks=tuple(f"{h}/32" for h in hosts))
    model = ModelSettings(
        mode="endpoint", base_url=model_url, api_key=SecretStr("standin"), model="standin"
    )
    if serial:
        search = search.model_copy(update={"concurrency_per_provider": 1})
        fetch = fetch.model_copy(update={"max_concurrency": 1, "per_host": 1})
        model = model.model_copy(update={"max_concurrency": 1})
    return Settings(
        data_dir=data_dir,
        log_level="WARNING",
        search=search,
        fetch=fetch,
        model=model,
        references=ReferenceSettings(check_reachable="always"),
        # The stand-in publishers are unrated loopback hosts found by web search.
        retrieval=RetrievalSettings(unrated_sources="allow"),
    )


def _figures(
    runs: dict[str, list[dict[str, Any]]],
    posts: Sequence[ScriptedPost],
    hosts: Sequence[str],
    *,
    results: int,
) -> dict[str, Any]:
    """Return the report: each run's posts and summary, the speed-ups, and the goals met."""
    summaries = {name: _summary(per_post) for name, per_post in runs.items()}
    parallel = summaries["parallel"]
    fast = parallel["seconds_mean"]
    # Every request one after another, plus (or without) the time no request was in flight.
    requests = parallel["request_seconds_mean"]
    analytic = _mean([p["request_seconds"] + p["local_seconds"] for p in runs["parallel"]])
    measured = _ratio(summaries["serial"]["seconds_mean"], fast) if "serial" in runs else None
    speedup = measured if measured is not None else _ratio(analytic, fast)
    return {
        "posts": len(posts),
        "claims": sum(len(p.claims) for p in posts),
        "results_per_search": results,
        "page_hosts": len({h for h in hosts if h != "127.0.0.1"}) or 1,
        "parallel": {"summary": parallel, "per_post": runs["parallel"]},
        "serial": (
            {"summary": summaries["serial"], "per_post": runs["serial"]}
            if "serial" in runs
            else None
        ),
        # Every refinement round, one model request at a time (the local server's one slot).
        "worst": (
            {"summary": summaries["worst"], "per_post": runs["worst"]} if "worst" in runs else None
        ),
        "speedup_measured": measured,
        "analytic_serial_seconds_mean": analytic,
        "speedup_analytic": _ratio(analytic, fast),
        "analytic_requests_only_seconds_mean": requests,
        "speedup_analytic_requests_only": _ratio(requests, fast),
        "muse_seconds_per_post": MUSE_SECONDS_PER_POST,
        "speedup_vs_muse": _ratio(MUSE_SECONDS_PER_POST, parallel["seconds_p50"]),
        "goals": {
            "critical_path_model_calls_max": parallel["model_calls_critical_path_max"],
            "critical_path_model_calls_ok": parallel["model_calls_critical_path_max"]
            <= GOALS["critical_path_model_calls"],
            "model_calls_max": parallel["model_calls_max"],
            "model_calls_ok": parallel["model_calls_max"] <= GOALS["model_calls"],
            "speedup": speedup,
            "speedup_ok": speedup is not None and speedup >= GOALS["speedup"],
        },
    }
