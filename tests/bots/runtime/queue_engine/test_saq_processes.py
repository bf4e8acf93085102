"""saq workers as real processes, each a "node" with its own data folder, on one PostgreSQL:
a worker SIGKILLed mid-check, and PostgreSQL (factbot's database and saq's backend) restarted.

Each process is the real `factbot` command (`factbot relay`, `factbot worker` with
FACTBOT_QUEUE__ENGINE=saq). A check is made slow by a slow network peer (a SearXNG stand-in
that answers late), never by changing factbot's code.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bots.runtime.checking.check_jobs import submit_check
from pipeline.inputs.posts import post_from_text
from storage import Store
from tests.support.children import factbot_env, searching, searxng_after
from tests.support.httpserver import serve
from tests.support.postgres import PostgresServer

FACTBOT = str(Path(sys.executable).with_name("factbot"))

CLAIMS = [
    "The Eiffel Tower grows 15 centimetres taller in summer heat.",
    "5G networks spread the coronavirus.",
    "Drinking hot water cures COVID-19.",
    "The Great Wall of China is visible from the Moon.",
]


def _env(data: Path, url: str, searxng: str) -> dict[str, str]:
    return factbot_env(
        data,
        **searching(searxng),
        FACTBOT_DATABASE_URL=url,
        FACTBOT_QUEUE__ENGINE="saq",
        FACTBOT_QUEUE__SWEEP_SECONDS="1",
        FACTBOT_QUEUE__RELAY_SECONDS="0.1",
    )


def _wait(predicate: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


@pytest.fixture
def relay(tmp_path: Path, database: str) -> Iterator[Callable[[str], None]]:
    """Start `factbot relay` on a node of its own once the search peer's URL is known."""
    started: list[subprocess.Popen[bytes]] = []

    def start(searxng: str) -> None:
        env = _env(tmp_path / "node0", database, searxng)
        started.append(subprocess.Popen([FACTBOT, "relay"], env=env, stderr=subprocess.DEVNULL))

    yield start
    for process in started:
        assert process.poll() is None, "the relay stopped early"
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0


def test_a_saq_worker_killed_mid_check_and_the_job_completes_once_on_another_node(
    tmp_path: Path, database: str, relay: Callable[[str], None]
) -> None:
    with Store.open(tmp_path / "node0" / "factbot.db", database_url=database) as store:
        post = post_from_text("5G networks spread the coronavirus.", max_chars=1000, platform="t")
        job_id = submit_check(store, post).job.id
    with serve() as search:
        # The first search never answers in time: the first worker is killed while it waits.
        search.route("/search", searxng_after(lambda n: 60.0 if n == 0 else 0.0))
        relay(search.url(""))
        first = subprocess.Popen(
            [FACTBOT, "worker"],
            env=_env(tmp_path / "node1", database, search.url("")),
            stderr=subprocess.DEVNULL,
        )
        try:
            _wait(lambda: len(search.requests) >= 1, 90, "the first worker's search")
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait(timeout=10)
        second = subprocess.run(
            [FACTBOT, "worker", "--until-idle"],
            env=_env(tmp_path / "node2", database, search.url("")),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert second.returncode == 0, second.stderr
        assert "Traceback" not in second.stderr, second.stderr
    with Store.open(tmp_path / "node0" / "factbot.db", database_url=database) as store:
        job = store.jobs.get(job_id)
        runners = [e.detail["worker"] for e in store.jobs.events(job_id) if e.status == "running"]
        checks = store.db.execute("SELECT count(*), count(DISTINCT id) FROM checks").fetchone()
    assert job is not None and job.status == "done" and job.attempts == 2 and job.result_id
    assert len(runners) == 2 and runners[0].split("/")[0] != runners[1].split("/")[0]
    assert all("/saq" in r for r in runners)  # both attempts were saq's (not builtin claims)
    assert checks == (1, 1)  # the killed worker's attempt left nothing; the second stored once


def test_saq_workers_and_the_relay_ride_out_a_postgresql_restart_and_every_job_completes_once(
    tmp_path: Path, database: str, postgres_server: PostgresServer
) -> None:
    with Store.open(tmp_path / "node0" / "factbot.db", database_url=database) as store:
        ids = [
            submit_check(
                store,
                post_from_text(f"{CLAIMS[n % 4]} (restart {n})", max_chars=1000, platform="t"),
            ).job.id
            for n in range(12)
        ]
    logs = {name: (tmp_path / f"{name}.log").open("w+") for name in ("relay", "w1", "w2")}
    with serve() as search:
        search.route("/search", searxng_after(lambda n: 0.4))  # checks are under way when it stops
        relay = subprocess.Popen(
            [FACTBOT, "relay"],
            env=_env(tmp_path / "node0", database, search.url("")),
            stderr=logs["relay"],
        )
        workers = [
            subprocess.Popen(
                [FACTBOT, "worker", "--until-idle", "--concurrency", "1"],
                env=_env(tmp_path / f"node{n}", database, search.url("")),
                stderr=logs[f"w{n}"],
            )
            for n in (1, 2)
        ]
        started = [relay, *workers]
        try:
            _wait(lambda: len(search.requests) >= 3, 120, "checks under way")
            postgres_server.stop()  # fast shutdown: every connection is cut
            try:
                time.sleep(2.0)
            finally:
                postgres_server.start()
            for worker in workers:
                assert worker.wait(timeout=240) == 0, _read(logs)
            assert relay.poll() is None, _read(logs)  # the relay outlived the outage too
            relay.send_signal(signal.SIGTERM)
            assert relay.wait(timeout=30) == 0, _read(logs)
        finally:
            for process in started:
                if process.poll() is None:
                    process.kill()
                    process.wait(timeout=10)
    errors = _read(logs)
    for handle in logs.values():
        handle.close()
    assert "Traceback" not in errors, errors
    with Store.open(tmp_path / "node0" / "factbot.db", database_url=database) as store:
        jobs = {i: store.jobs.get(i) for i in ids}
        checks = store.db.execute("SELECT count(*), count(DISTINCT id) FROM checks").fetchone()
        results = {j.result_id for j in jobs.values() if j is not None}
        ends = [
            [(e.stage, e.status) for e in store.jobs.events(i)].count(("job", "done")) for i in ids
        ]
    assert {j.status for j in jobs.values() if j is not None} == {"done"}, jobs  # nothing lost
    assert len(jobs) == 12 and len(results) == 12
    assert ends == [1] * 12  # each job ended done once (an attempt the outage cut ran again)
    assert checks == (12, 12)  # one check each: no job's work was stored twice
    assert "connection failed" in errors  # the processes saw the server go, and waited


def _read(logs: dict[str, Any]) -> str:
    """Every process's stderr, each under its name."""
    out = []
    for name, handle in logs.items():
        handle.flush()
        handle.seek(0)
        out.append(f"--- {name}\n{handle.read()}")
    return "\n".join(out)
