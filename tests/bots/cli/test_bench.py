"""The benchmark commands run and print their figures (small sizes here; real sizes by hand)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bots.cli.main import main
from tests.conftest import FIXTURES
from tests.support.postgres import PostgresServer


@pytest.fixture(autouse=True)
def _data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FACTBOT_DATA_DIR", str(tmp_path / "data"))


def _run(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(main, ["bench", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout[result.stdout.index("{") :])  # type: ignore[no-any-return]


def test_search_cache_bench_answers_from_the_cache() -> None:
    figures = _run("search-cache", "--lookups", "20")
    assert figures["provider_requests"] == 1 and figures["lookups"] == 20


def test_fetch_bench_fetches_every_page() -> None:
    figures = _run("fetch", "--pages", "12", "--hosts", "2", "--max-delay-ms", "60")
    assert figures["pages"] == 12


def test_index_bench_reports_speed_and_size() -> None:
    figures = _run("index", "--data", str(FIXTURES / "corpus.jsonl"), "--queries", "3")
    assert figures["documents"] == 7 and figures["queries"] == 3
    assert figures["index_mb"] > 0


def test_jobs_bench_drains_the_queue_with_worker_processes_losing_nothing() -> None:
    result = CliRunner().invoke(
        main,
        ["bench", "jobs", "--jobs", "40", "--workers", "1,2", "--latency", "0.01"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    runs = json.loads(result.stdout[result.stdout.index("[") :])
    assert [r["workers"] for r in runs] == [1, 2]
    for run in runs:
        assert run["lost"] == 0 and run["duplicated_results"] == 0 and run["extra_attempts"] == 0
        assert sum(run["results_per_worker"].values()) == 40
        assert run["checks_per_minute"] > 0 and run["queue_wait_p95_s"] >= run["queue_wait_p50_s"]


def test_jobs_bench_on_saq_drains_the_queue_through_a_relay_losing_nothing(
    postgres_server: PostgresServer,
) -> None:
    on_saq = ["--backend", "postgres", "--engine", "saq", "--database-url", postgres_server.url()]
    result = CliRunner().invoke(
        main,
        ["bench", "jobs", "--jobs", "30", "--workers", "2", "--latency", "0.01", *on_saq],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    (run,) = json.loads(result.stdout[result.stdout.index("[") :])
    assert run["engine"] == "saq" and run["workers"] == 2
    assert run["lost"] == 0 and run["duplicated_results"] == 0 and run["extra_attempts"] == 0
    assert sum(run["results_per_worker"].values()) == 30


def test_jobs_bench_runs_saq_on_postgresql_only() -> None:
    result = CliRunner().invoke(main, ["bench", "jobs", "--engine", "saq"])
    assert result.exit_code == 2 and "--backend postgres" in result.output


def test_the_platform_load_bench_answers_every_mention_once(tmp_path: Path) -> None:
    import asyncio

    from bench.platform_load import CLAIMS, run_load

    if not CLAIMS.is_file():
        pytest.skip(f"shared data not found at {CLAIMS}")
    figures = asyncio.run(
        run_load(
            mentions=6,
            workers=2,
            rate=0,
            docs=7,
            index=FIXTURES / "corpus.jsonl",
            wait_seconds=120,
        )
    )
    assert figures["lost"] == 0 and figures["duplicated"] == 0
    assert figures["jobs"]["done"] == 12 and figures["dead_jobs"] == {}
    assert figures["latency_p95_seconds"] is not None


@pytest.mark.slow  # a few whole checks and a restart: ~40 s on 2 busy cores
def test_monitor_bench_checks_within_budget_and_posts_no_duplicate() -> None:
    figures = _run(
        "monitor", "--candidates", "40", "--batch", "20", "--checks-per-hour", "3",
        "--usd-per-day", "0.025", "--usd-per-check", "0.01",
    )  # fmt: skip
    checks = figures["checks"]
    money = figures["money_usd"]
    assert isinstance(checks, dict) and checks["started"] == 3  # the hourly budget binds
    assert isinstance(money, dict) and money["counted_against_budget"] <= 0.025
    assert figures["duplicates_posted"] == 0 and figures["replies_posted_after_restart"] == 0
    assert figures["candidates_after_restart"] == 40
