"""`/metrics`: the deployment's figures in Prometheus' text format, read from the database.

Why from the database, at scrape time: checks run in worker processes (`factbot worker`, or the
workers beside `factbot serve`), as many as the operator starts, and each restarts on its own.
A counter kept in a worker's memory would be seen by nobody (the worker serves no HTTP) and lost
on restart. Every check, job and reply is stored durably, so `StoreCollector` reads them
(`storage.metrics`) when Prometheus scrapes, and whichever process serves `/metrics` reports the
whole deployment:

- gauges are counted afresh each scrape (queue depth and age by job kind, jobs and their
  attempts by kind and status, the reply ledger by platform and status, live workers);
- counters over finished checks (verdict and judge path, the post's language, stage latency
  histograms, model tokens and cost, search provider failures) are running totals that
  `CheckTotals` advances over rowids: each scrape sums (in SQL) only the checks stored since
  the last one, and a process that starts sums the whole table once (so the totals are the
  table's, and Prometheus sees a counter reset, which `rate()` handles);
- reuse look-ups and hits are the one exception: a look-up stores nothing (a hit answers from
  a stored check), and it happens where the request comes in (the API, an adapter, the
  monitor), in the serving process, so each serving process counts its own; sum them over
  instances.

Several `serve` replicas report the same database-derived figures: aggregate them with `max`
(the Grafana dashboard in deploy/grafana does), not `sum`.

Failure policy: a database error during a scrape propagates (the endpoint answers 500 and
Prometheus marks the target down); nothing is cached across a failed scrape.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from fastapi import FastAPI
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from bots.app.root import App
from pipeline.inputs.language import SUPPORTED, UNDETERMINED
from pipeline.util.clock import Clock
from storage import Store
from storage.metrics import Histogram

# Stage and check seconds: sub-second stages (claims, ranking) to minutes (a local model).
BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
OTHER_LANGUAGE = "other"
_LANGUAGES = {code.lower(): code for code in SUPPORTED}


def language_label(code: str | None) -> str:
    """Return the `language` label of a post's language: bounded, so a platform's odd tag
    cannot grow the series.

    A language factbot identifies keeps its code; a platform's own tag (kept when
    identification is off) counts as its base language ("pt-BR" as `pt`) when that is one;
    no language (identification off and no tag, or a check stored before it) is `und`;
    anything else is `other`.
    """
    if not code:
        return UNDETERMINED
    lowered = code.strip().lower()
    if lowered == UNDETERMINED:
        return UNDETERMINED
    found = _LANGUAGES.get(lowered) or _LANGUAGES.get(lowered.replace("_", "-").split("-")[0])
    return found or OTHER_LANGUAGE


@dataclass
class _Histogram:
    """Running cumulative bucket counts, their count and sum."""

    buckets: list[int] = field(default_factory=lambda: [0] * len(BUCKETS))
    count: int = 0
    total: float = 0.0

    def add(self, more: Histogram) -> None:
        self.buckets = [a + b for a, b in zip(self.buckets, more.buckets, strict=True)]
        self.count += more.count
        self.total += more.total

    def samples(self) -> list[tuple[str, float]]:
        found = [(str(b), float(n)) for b, n in zip(BUCKETS, self.buckets, strict=True)]
        return [*found, ("+Inf", float(self.count))]


@dataclass
class _Model:
    """Model usage of one stage, summed over checks."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    failures: int = 0


class CheckTotals:
    """Running totals over stored checks, advanced over rowids (`storage.metrics.check_sums`)."""

    def __init__(self) -> None:
        self.seq = 0  # the newest check counted
        self.checks: Counter[tuple[str, str]] = Counter()  # (verdict, path)
        self.stages: dict[str, _Histogram] = {}
        self.duration = _Histogram()
        self.model: dict[str, _Model] = {}
        self.search_asked: Counter[tuple[str, str]] = Counter()  # (provider, kind)
        self.search_failed: Counter[tuple[str, str]] = Counter()
        self.live: Counter[str] = Counter()
        self.languages: Counter[str] = Counter()
        self.lock = threading.Lock()

    def advance(self, store: Store) -> None:
        """Add the checks stored since the last call."""
        upto = store.metrics.last_check()
        if upto <= self.seq:
            return
        sums = store.metrics.check_sums(self.seq, upto, BUCKETS)
        self.checks.update(sums.checks)
        for stage, hist in sums.stages.items():
            self.stages.setdefault(stage, _Histogram()).add(hist)
        self.duration.add(sums.duration)
        for m in sums.model:
            model = self.model.setdefault(m.stage, _Model())
            model.calls += m.calls
            model.input_tokens += m.input_tokens
            model.output_tokens += m.output_tokens
            model.cost_usd += m.cost_usd
            model.failures += m.failures
        for p in sums.search:
            self.search_asked[(p.provider, p.kind)] += p.checks
            self.search_failed[(p.provider, p.kind)] += p.failures
        self.live.update(sums.live)
        for code, n in sums.languages.items():
            self.languages[language_label(code)] += n
        self.seq = upto


class StoreCollector(Collector):
    """Collects every factbot metric from the store (and this process's reuse counts)."""

    def __init__(
        self,
        store: Callable[[], Store],
        *,
        clock: Clock,
        reuse: Callable[[], tuple[int, Mapping[str, int]]],
        alive_within: float,
    ) -> None:
        self.store = store
        self.clock = clock
        self.reuse = reuse
        self.alive_within = alive_within
        self.totals = CheckTotals()

    def collect(self) -> Iterable[Metric]:
        """Yield the metric families, read now."""
        store = self.store()
        yield from self._queue(store)
        yield from self._replies(store)
        with self.totals.lock:
            self.totals.advance(store)
            yield from self._checks()
        yield from self._reuse()
        workers = GaugeMetricFamily(
            "factbot_workers_alive", "Worker pools that sent a heartbeat recently, all processes"
        )
        workers.add_metric([], float(len(store.workers.alive(within=self.alive_within))))
        yield workers

    def _queue(self, store: Store) -> Iterable[Metric]:
        groups = store.metrics.jobs()
        now = self.clock.now()
        jobs = GaugeMetricFamily(
            "factbot_jobs",
            "Jobs in the queue's table by kind and status",
            labels=["kind", "status"],
        )
        attempts = GaugeMetricFamily(
            "factbot_job_attempts",
            "Attempts used by the jobs of each kind and status (above the job count: retries)",
            labels=["kind", "status"],
        )
        depth = GaugeMetricFamily(
            "factbot_queue_depth", "Jobs queued and not yet claimed, by kind", labels=["kind"]
        )
        age = GaugeMetricFamily(
            "factbot_queue_oldest_age_seconds",
            "Seconds since the oldest queued job of each kind was enqueued (0: none queued)",
            labels=["kind"],
        )
        dead = GaugeMetricFamily(
            "factbot_jobs_dead",
            "Jobs that ran out of attempts or failed for good, by kind",
            labels=["kind"],
        )
        kinds = sorted({g.kind for g in groups})
        for g in groups:
            jobs.add_metric([g.kind, g.status], float(g.jobs))
            attempts.add_metric([g.kind, g.status], float(g.attempts))
        for kind in kinds:
            queued = next((g for g in groups if g.kind == kind and g.status == "queued"), None)
            depth.add_metric([kind], float(queued.jobs if queued else 0))
            oldest = queued.oldest if queued is not None else None
            age.add_metric([kind], max(0.0, (now - oldest).total_seconds()) if oldest else 0.0)
            gone = next((g for g in groups if g.kind == kind and g.status == "dead"), None)
            dead.add_metric([kind], float(gone.jobs if gone else 0))
        yield from (depth, age, jobs, attempts, dead)

    def _replies(self, store: Store) -> Iterable[Metric]:
        ledger = GaugeMetricFamily(
            "factbot_replies",
            "Replies in the reply ledger by platform and status (sent, failed, pending)",
            labels=["platform", "status"],
        )
        for r in store.metrics.replies():
            ledger.add_metric([r.platform, r.status], float(r.replies))
        withheld = GaugeMetricFamily(
            "factbot_replies_withheld",
            "Replies factbot held back, by platform and reason",
            labels=["platform", "reason"],
        )
        for r in store.metrics.withheld():
            withheld.add_metric([r.platform, r.status], float(r.replies))
        yield from (ledger, withheld)

    def _checks(self) -> Iterable[Metric]:
        t = self.totals
        checks = CounterMetricFamily(
            "factbot_checks", "Checks stored, by verdict and judge path", labels=["verdict", "path"]
        )
        for (verdict, path), n in sorted(t.checks.items()):
            checks.add_metric([verdict, path], float(n))
        stages = HistogramMetricFamily(
            "factbot_stage_seconds", "Seconds each stage of a check took", labels=["stage"]
        )
        for stage, hist in sorted(t.stages.items()):
            stages.add_metric([stage], hist.samples(), sum_value=hist.total)
        duration = HistogramMetricFamily(
            "factbot_check_seconds", "Seconds a whole check took (its stages summed)"
        )
        duration.add_metric([], t.duration.samples(), sum_value=t.duration.total)
        calls = CounterMetricFamily(
            "factbot_model_calls", "Language-model calls by stage", labels=["stage"]
        )
        tokens = CounterMetricFamily(
            "factbot_model_tokens",
            "Language-model tokens by stage and direction (input, output)",
            labels=["stage", "direction"],
        )
        cost = CounterMetricFamily(
            "factbot_model_cost_usd", "Language-model cost in US dollars by stage", labels=["stage"]
        )
        failures = CounterMetricFamily(
            "factbot_model_failures",
            "Language-model calls that failed (timeouts and invalid answers included) by stage",
            labels=["stage"],
        )
        for stage, m in sorted(t.model.items()):
            calls.add_metric([stage], float(m.calls))
            tokens.add_metric([stage, "input"], float(m.input_tokens))
            tokens.add_metric([stage, "output"], float(m.output_tokens))
            cost.add_metric([stage], m.cost_usd)
            failures.add_metric([stage], float(m.failures))
        asked = CounterMetricFamily(
            "factbot_search_provider_checks",
            "Checks that asked a search provider, by provider and kind (web, reverse image)",
            labels=["provider", "kind"],
        )
        failed = CounterMetricFamily(
            "factbot_search_provider_failures",
            "Checks in which a search provider never answered, by provider and kind",
            labels=["provider", "kind"],
        )
        for key, n in sorted(t.search_asked.items()):
            asked.add_metric(list(key), float(n))
            failed.add_metric(list(key), float(t.search_failed.get(key, 0)))
        live = CounterMetricFamily(
            "factbot_search_live",
            "Checks by how live web search went (off, ok, partial, unreachable)",
            labels=["status"],
        )
        for status, n in sorted(t.live.items()):
            live.add_metric([status], float(n))
        languages = CounterMetricFamily(
            "factbot_checks_by_language",
            "Checks stored, by the post's language (ISO 639-1, zh-Hans, zh-Hant; und: "
            "undetermined or not identified; other: a platform tag factbot does not know)",
            labels=["language"],
        )
        for code, n in sorted(t.languages.items()):
            languages.add_metric([code], float(n))
        yield from (checks, languages, stages, duration, calls, tokens, cost, failures, asked)
        yield from (failed, live)

    def _reuse(self) -> Iterable[Metric]:
        lookups, hits = self.reuse()
        looked = CounterMetricFamily(
            "factbot_reuse_lookups", "Reuse look-ups this process made (reuse enabled)"
        )
        looked.add_metric([], float(lookups))
        found = CounterMetricFamily(
            "factbot_reuse_hits",
            "Requests this process answered from a stored check, by reason",
            labels=["reason"],
        )
        for reason, n in sorted(hits.items()):
            found.add_metric([reason], float(n))
        yield from (looked, found)


def mount_metrics(api: FastAPI, app: App) -> None:
    """Add GET /metrics to the API (who may read it: `bots.dashboard._guard`)."""
    if not app.settings.metrics.enabled:
        return

    def reuse() -> tuple[int, Mapping[str, int]]:
        index = app.reuse
        return index.lookups, {str(reason): n for reason, n in index.hits.items()}

    collector = StoreCollector(
        lambda: app.store,
        clock=app.clock,
        reuse=reuse,
        alive_within=3 * max(app.settings.jobs.heartbeat_seconds, 5.0),  # as /readyz
    )
    # A registry of its own: no process-wide default, so two Apps in one process never mix.
    registry = CollectorRegistry(auto_describe=False)
    registry.register(collector)

    @api.get("/metrics", include_in_schema=False)
    async def metrics() -> Response:
        body = await app.store.call(generate_latest, registry)  # reads the database
        return Response(content=body, media_type=CONTENT_TYPE_LATEST)
