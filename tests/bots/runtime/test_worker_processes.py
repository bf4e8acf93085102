"""Workers as real processes on one database: shared queue, SIGKILL, serve restarts.

Each process is the real `factbot` command. Checks are made slow by a slow network peer (a
SearXNG stand-in that answers late), never by changing factbot's code. Each test runs on both
engines: on SQLite every process shares one data folder; on PostgreSQL each process is a
"node" with a data folder of its own (its own evidence index), sharing only the database.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from bots.runtime.checking.check_jobs import submit_check
from pipeline.inputs.posts import post_from_text
from storage import Store
from tests.support.children import factbot_env, searching, searxng_after
from tests.support.httpserver import LocalServer, serve
from tests.support.postgres import PostgresServer

FACTBOT = str(Path(sys.executable).with_name("factbot"))
CLAIMS = [
    "The Eiffel Tower grows 15 centimetres taller in summer heat.",
    "5G networks spread the coronavirus.",
    "Drinking hot water cures COVID-19.",
    "The Great Wall of China is visible from the Moon.",
]


@dataclass(frozen=True)
class Nodes:
    """Where each process keeps its data, and the shared database (None: SQLite)."""

    root: Path
    url: str | None

    def data(self, n: int) -> Path:
        return self.root / ("data" if self.url is None else f"node{n}")

    def open(self) -> Store:
        return Store.open(self.data(0) / "factbot.db", database_url=self.url)

    def env(self, n: int, searxng: str, **extra: str) -> dict[str, str]:
        if self.url is not None:
            extra["FACTBOT_DATABASE_URL"] = self.url
        return factbot_env(self.data(n), **searching(searxng), **extra)


@pytest.fixture
def nodes(tmp_path: Path, database_url: str | None) -> Nodes:
    return Nodes(tmp_path, database_url)


@pytest.fixture
def slow_search() -> Iterator[LocalServer]:
    with serve() as server:
        server.route("/search", searxng_after(lambda n: 0.4))
        yield server


def _submit(nodes: Nodes, texts: list[str]) -> list[str]:
    with nodes.open() as store:
        return [
            submit_check(store, post_from_text(text, max_chars=1000, platform="test")).job.id
            for text in texts
        ]


def _jobs(nodes: Nodes) -> dict[str, Any]:
    with nodes.open() as store:
        jobs = {j.id: j for j in store.jobs.list(limit=1000)}
        runners = {
            j: [e.detail.get("worker") for e in store.jobs.events(j) if e.status == "running"]
            for j in jobs
        }
        checks = store.db.execute("SELECT count(*), count(DISTINCT id) FROM checks").fetchone()
    return {"jobs": jobs, "runners": runners, "checks": checks}


def _wait(predicate: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def test_two_worker_processes_share_the_queue_and_run_each_job_once(
    nodes: Nodes, slow_search: LocalServer
) -> None:
    ids = _submit(nodes, [f"{CLAIMS[n % 4]} (report {n})" for n in range(16)])
    workers = [
        subprocess.Popen(
            [FACTBOT, "worker", "--until-idle", "--concurrency", "1"],
            env=nodes.env(n, slow_search.url("")),
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in (1, 2)
    ]
    for worker in workers:
        _, err = worker.communicate(timeout=180)
        assert worker.returncode == 0, err
    state = _jobs(nodes)
    assert {state["jobs"][i].status for i in ids} == {"done"}
    assert all(state["jobs"][i].attempts == 1 for i in ids)
    assert all(len(state["runners"][i]) == 1 for i in ids)  # nobody ran a job twice
    assert state["checks"] == (16, 16)
    names = {state["runners"][i][0].rsplit("/", 1)[0] for i in ids}
    assert len(names) == 2, names  # both processes took part


def test_a_worker_killed_mid_check_loses_nothing_and_the_job_completes_once(
    nodes: Nodes,
) -> None:
    (job_id,) = _submit(nodes, [CLAIMS[1]])
    with serve() as search:
        # The first search never answers in time: the first worker is killed while it waits.
        search.route("/search", searxng_after(lambda n: 60.0 if n == 0 else 0.0))
        env = nodes.env(1, search.url(""))
        first = subprocess.Popen([FACTBOT, "worker"], env=env, stderr=subprocess.DEVNULL)
        try:
            _wait(lambda: len(search.requests) >= 1, 60, "the first worker's search")
            assert _jobs(nodes)["jobs"][job_id].status == "running"
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=10)
        second = subprocess.run(
            [FACTBOT, "worker", "--until-idle"],
            env=nodes.env(2, search.url("")),  # another node (on SQLite: the same folder)
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert second.returncode == 0, second.stderr
    state = _jobs(nodes)
    job = state["jobs"][job_id]
    assert job.status == "done" and job.attempts == 2 and job.result_id
    assert len(state["runners"][job_id]) == 2
    assert state["checks"] == (1, 1)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(env: dict[str, str], port: int) -> subprocess.Popen[str]:
    process = subprocess.Popen(
        [FACTBOT, "serve", "--port", str(port), "--workers", "1"],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while True:
        assert process.poll() is None, process.communicate()[1]
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            pass
        assert time.monotonic() < deadline, "factbot serve did not start"
        time.sleep(0.2)


def test_serve_restarted_with_queued_jobs_finishes_them_all(nodes: Nodes) -> None:
    with serve() as search:
        search.route("/search", searxng_after(lambda n: 1.0))
        env = nodes.env(1, search.url(""), FACTBOT_JOBS__SHUTDOWN_TIMEOUT="0.2")
        port = _free_port()
        server = _serve(env, port)
        base = f"http://127.0.0.1:{port}"
        try:
            accepted = [
                httpx.post(f"{base}/api/checks", json={"text": text}, timeout=30) for text in CLAIMS
            ]
            assert [a.status_code for a in accepted] == [202] * 4
            ids = [a.json()["id"] for a in accepted]
            _wait(lambda: len(search.requests) >= 1, 60, "a running check")
        finally:
            server.send_signal(signal.SIGTERM)
            _, err = server.communicate(timeout=60)
        # uvicorn re-raises the signal once it has shut down gracefully, so a supervisor sees it.
        assert server.returncode in (0, -signal.SIGTERM), err
        assert "Traceback" not in err, err
        stopped = _jobs(nodes)["jobs"]
        assert {stopped[i].status for i in ids} <= {"queued", "done"}  # nothing left running
        assert any(stopped[i].status == "queued" for i in ids)
        server = _serve(env, port)
        try:
            _wait(
                lambda: all(
                    httpx.get(f"{base}/api/jobs/{i}").json()["status"] == "done" for i in ids
                ),
                120,
                "every job to finish after the restart",
            )
            checks = [httpx.get(f"{base}/api/jobs/{i}").json()["check_id"] for i in ids]
            assert all(httpx.get(f"{base}/api/checks/{c}").status_code == 200 for c in checks)
        finally:
            server.send_signal(signal.SIGTERM)
            server.communicate(timeout=60)
    state = _jobs(nodes)
    assert state["checks"] == (4, 4)
    assert all(len(state["runners"][i]) >= 1 for i in ids)
    assert json.dumps(sorted(j.status for j in state["jobs"].values())) == json.dumps(["done"] * 4)


def test_workers_ride_out_a_postgresql_restart_and_every_job_completes_once(
    tmp_path: Path, slow_search: LocalServer, postgres_server: PostgresServer
) -> None:
    nodes = Nodes(tmp_path, postgres_server.migrated_database())
    ids = _submit(nodes, [f"{CLAIMS[n % 4]} (restart {n})" for n in range(12)])
    workers = [
        subprocess.Popen(
            [FACTBOT, "worker", "--until-idle", "--concurrency", "1"],
            env=nodes.env(n, slow_search.url("")),
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in (1, 2)
    ]
    try:
        _wait(lambda: len(slow_search.requests) >= 3, 120, "checks under way")
        postgres_server.stop()  # fast shutdown: every connection is cut
        time.sleep(2.0)
        postgres_server.start()
        errs = []
        for worker in workers:
            _, err = worker.communicate(timeout=240)
            assert worker.returncode == 0, err
            assert "Traceback" not in err, err
            errs.append(err)
        assert any("database unavailable" in e for e in errs), errs  # they saw it go, and waited
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.kill()
    state = _jobs(nodes)
    assert {state["jobs"][i].status for i in ids} == {"done"}  # nothing lost
    assert state["checks"] == (12, 12)  # and nothing stored twice
