"""/metrics over real HTTP: a check run end to end moves the counts; who may read it; Grafana.

Every figure is read from the real SQLite database the workers write, so the scrape sees what
the worker did, not what the serving process remembers.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from bots.app.root import App
from bots.runtime.delivery.deliver import ReplyJobs
from bots.runtime.platform.contract import Answer, Destination, Rendered
from bots.settings import (
    DashboardSettings,
    JobSettings,
    MetricsSettings,
    Settings,
)
from pipeline.records.domain import ModelUsage, new_id
from pipeline.records.search_status import LiveSearch, ProviderStatus, SearchStatus
from storage import Store
from storage.jobs import Backoff
from tests.bots.api.test_api import serving
from tests.conftest import REPO

CLAIM = {"text": "5G networks spread the coronavirus."}
DASHBOARD = REPO / "deploy" / "grafana" / "factbot.json"
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def _app(folder: Path, embedder: Any, **settings: Any) -> App:
    jobs = JobSettings(poll_seconds=0.05, heartbeat_seconds=5.0)
    return App(Settings(data_dir=folder, jobs=jobs, **settings), embedder=embedder)


@pytest.fixture
def served(
    tmp_path: Path, embedder: Any, corpus_in: Callable[[Path], Path]
) -> Iterator[tuple[str, App]]:
    app = _app(corpus_in(tmp_path / "data"), embedder)
    with serving(app) as base:
        yield base, app
    app.close()


@pytest.fixture
def idle(
    tmp_path: Path, embedder: Any, corpus_in: Callable[[Path], Path]
) -> Iterator[tuple[str, App]]:
    app = _app(corpus_in(tmp_path / "idle"), embedder)
    with serving(app, workers=0) as base:  # nothing runs the jobs: they stay queued
        yield base, app
    app.close()


def scrape(base: str, **headers: str) -> Samples:
    """Return every sample of /metrics by (name, labels)."""
    answer = httpx.get(f"{base}/metrics", headers=headers, timeout=30)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain; version=")
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(answer.text)
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    """Return one sample's value; 0 when it is absent (nothing counted yet)."""
    return samples.get((name, frozenset(labels.items())), 0.0)


def test_a_check_run_end_to_end_moves_the_counts(served: tuple[str, App]) -> None:
    base, app = served
    before = scrape(base)
    checks = ("factbot_checks_total", {"verdict": "false", "path": "verifier"})
    assert value(before, checks[0], **checks[1]) == 0
    assert value(before, "factbot_check_seconds_count") == 0

    made = httpx.post(f"{base}/api/checks?wait=60", json=CLAIM, timeout=70)
    assert made.status_code == 201, made.text
    after = scrape(base)
    assert value(after, checks[0], **checks[1]) == 1
    assert value(after, "factbot_check_seconds_count") == 1
    stages = [t.stage for t in app.store.checks.get(made.json()["id"]).timings]
    assert {"claims", "retrieval", "correction"} <= set(stages)
    for stage in stages:
        assert value(after, "factbot_stage_seconds_count", stage=stage) == 1, stage
        assert value(after, "factbot_stage_seconds_bucket", stage=stage, le="+Inf") == 1
    assert value(after, "factbot_jobs", kind="check", status="done") == 1
    assert value(after, "factbot_job_attempts", kind="check", status="done") == 1
    assert value(after, "factbot_queue_depth", kind="check") == 0
    assert value(after, "factbot_search_live_total", status="off") == 1  # conftest: search off
    assert value(after, "factbot_workers_alive") >= 1

    # The same text again is answered from the stored check: a reuse hit, not a second check.
    again = httpx.post(f"{base}/api/checks?wait=60", json=CLAIM, timeout=70)
    assert again.status_code == 200 and again.json()["reused"]["reason"] == "same text"
    reused = scrape(base)
    assert value(reused, "factbot_reuse_hits_total", reason="same text") == 1
    assert value(reused, "factbot_reuse_lookups_total") == 2
    assert value(reused, checks[0], **checks[1]) == 1


def test_a_check_stored_by_another_process_is_counted(served: tuple[str, App]) -> None:
    """Model usage and search failures of a check written on its own connection."""
    base, app = served
    made = httpx.post(f"{base}/api/checks?wait=60", json=CLAIM, timeout=70)
    assert made.status_code == 201, made.text
    scrape(base)  # the cursor is past the first check now
    stored = app.store.checks.get(made.json()["id"])
    usage = (
        ModelUsage("claims", 1, 300, 40, 0.0002, 1.5),
        ModelUsage("judge", 2, 1200, 90, 0.001, 4.0, failures=1, timeouts=1),
    )
    search = SearchStatus(
        live=LiveSearch.PARTIAL,
        providers=(ProviderStatus("brave", False, "HTTP 503"), ProviderStatus("searxng", True)),
    )
    model_check = dataclasses.replace(
        stored, id=new_id(), claims=(), evidence=(), judge="model", usage=usage, search=search
    )
    with Store.open(app.settings.database_path) as other:  # as a worker process would
        other.checks.save(model_check)
    after = scrape(base)
    assert value(after, "factbot_checks_total", verdict="false", path="model") == 1
    assert value(after, "factbot_checks_total", verdict="false", path="verifier") == 1
    assert value(after, "factbot_model_tokens_total", stage="judge", direction="input") == 1200
    assert value(after, "factbot_model_tokens_total", stage="claims", direction="output") == 40
    assert value(after, "factbot_model_calls_total", stage="judge") == 2
    assert value(after, "factbot_model_failures_total", stage="judge") == 1
    assert value(after, "factbot_model_cost_usd_total", stage="judge") == pytest.approx(0.001)
    web = {"kind": "web"}
    assert value(after, "factbot_search_provider_failures_total", provider="brave", **web) == 1
    assert value(after, "factbot_search_provider_failures_total", provider="searxng", **web) == 0
    assert value(after, "factbot_search_provider_checks_total", provider="searxng", **web) == 1
    assert value(after, "factbot_search_live_total", status="partial") == 1
    assert value(after, "factbot_check_seconds_count") == 2


def test_checks_are_counted_by_language_under_a_bounded_label(served: tuple[str, App]) -> None:
    """The worker identifies the post's language; the label set stays known codes, und, other."""
    base, app = served
    spanish = {"text": "El gobierno anunció que las redes 5G propagan el coronavirus en España."}
    made = httpx.post(f"{base}/api/checks?wait=60", json=spanish, timeout=70)
    assert made.status_code == 201, made.text
    stored = app.store.checks.get(made.json()["id"])
    assert stored.post.language == "es"
    # Bare copies (no claims or evidence) of posts whose language came from a platform's tag
    # (identification off) or from nowhere.
    with Store.open(app.settings.database_path) as other:
        for n, tag in enumerate(("pt-BR", "zh-Hant", "tlh", "x" * 300, None)):
            post = dataclasses.replace(stored.post, id=new_id(), platform_id=f"p{n}", language=tag)
            bare: dict[str, Any] = {"claims": (), "evidence": (), "graphs": (), "narratives": ()}
            other.checks.save(dataclasses.replace(stored, id=new_id(), post=post, **bare))
    samples = scrape(base)
    counted = {
        dict(labels)["language"]: n
        for (name, labels), n in samples.items()
        if name == "factbot_checks_by_language_total"
    }
    assert counted == {"es": 1, "pt": 1, "zh-Hant": 1, "other": 2, "und": 1}
    assert sum(counted.values()) == sum(
        n for (name, _), n in samples.items() if name == "factbot_checks_total"
    )


def test_queue_depth_age_attempts_and_dead_jobs(idle: tuple[str, App]) -> None:
    base, app = idle
    for text in ("The moon is made of cheese.", "Bananas are blue in Peru."):
        accepted = httpx.post(f"{base}/api/checks", json={"text": text}, timeout=30)
        assert accepted.status_code == 202, accepted.text
    time.sleep(0.2)
    queued = scrape(base)
    assert value(queued, "factbot_queue_depth", kind="check") == 2
    assert value(queued, "factbot_queue_oldest_age_seconds", kind="check") >= 0.2
    assert value(queued, "factbot_jobs_dead", kind="check") == 0
    # One attempt fails and is retried later; the other fails for good.
    store = app.store
    first = store.jobs.claim("w1", lease=30)
    assert first is not None
    store.jobs.fail(first, "w1", "RuntimeError: boom", backoff=Backoff(initial=600))
    second = store.jobs.claim("w1", lease=30)
    assert second is not None and second.id != first.id
    store.jobs.fail(second, "w1", "InputError: nothing to check", permanent=True)
    after = scrape(base)
    assert value(after, "factbot_queue_depth", kind="check") == 1
    assert value(after, "factbot_jobs_dead", kind="check") == 1
    assert value(after, "factbot_jobs", kind="check", status="dead") == 1
    assert value(after, "factbot_job_attempts", kind="check", status="queued") == 1


class _LinkingSender:
    """A platform sender with a bug: it adds a link the check did not retrieve."""

    platform = "slack"

    def __init__(self) -> None:
        self.sent: list[Rendered] = []

    def render(self, answer: Answer, destination: Destination) -> Rendered:
        text = answer.message or (answer.correction.text if answer.correction else "")
        if answer.kind == "correction":
            text += " more at https://elsewhere.example/story"
        return Rendered(payload={"text": text}, texts=(text,))

    async def send(self, destination: Destination, rendered: Rendered) -> str | None:
        self.sent.append(rendered)
        return f"m{len(self.sent)}"


async def test_replies_sent_failed_and_withheld_by_platform(served: tuple[str, App]) -> None:
    base, app = served
    async with httpx.AsyncClient(timeout=70) as http:
        made = await http.post(f"{base}/api/checks?wait=60", json=CLAIM)
        assert made.status_code == 201, made.text
        before = (await http.get(f"{base}/metrics")).text
    assert "factbot_replies{" not in before and "factbot_replies_withheld{" not in before
    store = app.store
    dest = Destination(platform="slack", workspace_id="T1", channel_id="C1", message_id="1.1")
    job, _ = store.jobs.enqueue(
        "reply:slack",
        {"destination": dest.to_json(), "event_key": "E1", "check_id": made.json()["id"]},
    )
    claimed = store.jobs.claim("w1", lease=30, kinds=("reply:slack",))
    assert claimed is not None and claimed.id == job.id
    sender = _LinkingSender()
    await ReplyJobs(store, {"slack": sender}, app.settings).run(claimed)
    assert len(sender.sent) == 1 and "elsewhere.example" not in sender.sent[0].texts[0]
    # A reply the platform refused, and one to another platform still in flight.
    refused = store.replies.reserve("slack", "E2", "answer")
    assert refused is not None
    store.replies.mark_failed(refused.id, "channel_not_found")
    assert store.replies.reserve("discord", "E3", "answer") is not None
    async with httpx.AsyncClient(timeout=30) as http:
        text = (await http.get(f"{base}/metrics")).text
    samples = {
        (s.name, frozenset(s.labels.items())): s.value
        for f in text_string_to_metric_families(text)
        for s in f.samples
    }
    assert value(samples, "factbot_replies", platform="slack", status="sent") == 1
    assert value(samples, "factbot_replies", platform="slack", status="failed") == 1
    assert value(samples, "factbot_replies", platform="discord", status="pending") == 1
    withheld = {"platform": "slack", "reason": "unretrieved link"}
    assert value(samples, "factbot_replies_withheld", **withheld) == 1


# -- who may read it --------------------------------------------------------------------------


def _bare(folder: Path, embedder: Any, **settings: Any) -> App:
    return App(Settings(data_dir=folder, **settings), embedder=embedder)


def test_metrics_are_open_in_the_open_mode(tmp_path: Path, embedder: Any) -> None:
    app = _bare(tmp_path, embedder)
    with serving(app, workers=0) as base:
        assert httpx.get(f"{base}/metrics").status_code == 200
    app.close()


def test_a_metrics_token_is_required_once_set_even_in_the_open_mode(
    tmp_path: Path, embedder: Any
) -> None:
    app = _bare(tmp_path, embedder, metrics=MetricsSettings(token="s3cret-token"))
    with serving(app, workers=0) as base:
        assert httpx.get(f"{base}/metrics").status_code == 401
        wrong = {"Authorization": "Bearer nope"}
        assert httpx.get(f"{base}/metrics", headers=wrong).status_code == 401
        good = httpx.get(f"{base}/metrics", headers={"Authorization": "Bearer s3cret-token"})
        assert good.status_code == 200 and "factbot_queue_depth" in good.text
    app.close()


def test_with_users_metrics_need_a_token_an_api_key_or_public(
    tmp_path: Path, embedder: Any
) -> None:
    dashboard = DashboardSettings(api_keys=("key-1",))
    app = _bare(tmp_path / "a", embedder, dashboard=dashboard)
    app.store.users.add("ann", "admin", "a long enough password")
    with serving(app, workers=0) as base:
        refused = httpx.get(f"{base}/metrics")
        assert refused.status_code == 401 and "metrics token" in refused.json()["detail"]
        keyed = httpx.get(f"{base}/metrics", headers={"Authorization": "Bearer key-1"})
        assert keyed.status_code == 200
    app.close()
    public = _bare(tmp_path / "b", embedder, metrics=MetricsSettings(public=True))
    public.store.users.add("ann", "admin", "a long enough password")
    with serving(public, workers=0) as base:
        assert httpx.get(f"{base}/metrics").status_code == 200
    public.close()


def test_metrics_can_be_turned_off(tmp_path: Path, embedder: Any) -> None:
    app = _bare(tmp_path, embedder, metrics=MetricsSettings(enabled=False))
    with serving(app, workers=0) as base:
        assert httpx.get(f"{base}/metrics").status_code == 404
    app.close()


# -- the Grafana dashboard ----------------------------------------------------------------------


def _expressions(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["expr"]] if isinstance(node.get("expr"), str) else []
        return found + [e for v in node.values() for e in _expressions(v)]
    if isinstance(node, list):
        return [e for v in node for e in _expressions(v)]
    return []


def _exported(text: str) -> dict[str, set[str]]:
    """Return each family /metrics declares with the series names it can carry."""
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum"), "gauge": ("",)}
    return {
        family.name: {family.name + suffix for suffix in suffixes[family.type]}
        for family in text_string_to_metric_families(text)
    }


def test_every_metric_in_the_grafana_dashboard_is_exported(tmp_path: Path, embedder: Any) -> None:
    board = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    exprs = _expressions(board)
    used = {name for e in exprs for name in re.findall(r"\bfactbot_[a-z0-9_]+", e)}
    assert len(exprs) >= 10 and used
    app = _bare(tmp_path, embedder)  # an empty database: every family is still declared
    with serving(app, workers=0) as base:
        families = _exported(httpx.get(f"{base}/metrics").text)
    app.close()
    names = set().union(*families.values())
    assert len(families) >= 20
    assert sorted(used - names) == []
    # And the dashboard shows every family /metrics exports.
    assert sorted(f for f, series in families.items() if not series & used) == []


def test_the_dashboard_check_sees_a_name_that_is_not_exported() -> None:
    families = _exported("# TYPE factbot_checks_total counter\n# TYPE factbot_x histogram\n")
    names = set().union(*families.values())
    assert {"factbot_checks_total", "factbot_x_bucket", "factbot_x_sum"} <= names
    assert "factbot_checks" not in names and "factbot_checks_by_color_total" not in names
