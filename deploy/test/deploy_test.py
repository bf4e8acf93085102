"""`make deploy-test`, after the images are built: both compose files up, checked, broken, down.

1. deploy/compose.yaml: wait for the API container to be healthy, check a claim through
   POST /api/checks?wait=..., read the dashboard's overview data and /readyz, note memory.
2. deploy/compose.scaled.yaml with 2 worker containers (PostgreSQL, migrate, serve, workers,
   SearXNG with no engine, asked once through its JSON API from the API's container; factbot's
   web search is off): the Slack stand-in of the test suite
   (tests/support/fake_slack.py) listens on the host's docker0 address, factbot sends its
   replies there; 200 signed app_mention events are delivered to the published API port on
   127.0.0.1 while a worker is killed, PostgreSQL is restarted and the API is restarted.
   Every mention must get exactly one reply (0 lost, 0 duplicated) and every check job must
   end done exactly once.

Traffic stays between the containers and this host (127.0.0.1 and the docker0 address); every
wait is bounded. The figures go to the JSON file named by --report and to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp
from aiohttp import web

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
from tests.support.fake_slack import FakeSlack  # noqa: E402

SECRET = "deploy-test-signing-secret"
TEAM, CHANNEL, TOKEN = "T1", "C1", "xoxb-deploy-test"
RETRIES = int(os.environ.get("DEPLOY_TEST_RETRIES", "120"))
CLAIM = "The Eiffel Tower was completed in 1889 for the World's Fair in Paris."


def log(message: str) -> None:
    print(f"[deploy-test {time.strftime('%H:%M:%S')}] {message}", flush=True)


def sh(
    *argv: str,
    check: bool = True,
    timeout: float = 600,
    env: dict[str, str] | None = None,
) -> str:
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=timeout, check=False, env=env
    )
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {done.returncode}\n{done.stdout}\n{done.stderr}")
    return done.stdout.strip()


def container_logs(container: str, lines: int = 40) -> str:
    """Return a container's last lines of output (stdout and stderr)."""
    done = subprocess.run(
        ["docker", "logs", "--tail", str(lines), container],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.stdout + done.stderr


def project_logs(project: str, lines: int = 40) -> None:
    """Print the last lines of every container of a compose project, stopped ones included."""
    ids = sh(
        "docker",
        "ps",
        "-aq",
        "--filter",
        f"label=com.docker.compose.project={project}",
        check=False,
    ).split()
    for cid in ids:
        state = sh(
            "docker",
            "inspect",
            "-f",
            "{{.Name}} {{.State.Status}} exit={{.State.ExitCode}}",
            cid,
            check=False,
        )
        log(f"--- {state}, last {lines} lines\n{container_logs(cid, lines)}")


def docker_gateway() -> str:
    """Return the host's address on Docker's default bridge: containers reach it, others not."""
    gateway = sh(
        "docker",
        "network",
        "inspect",
        "-f",
        "{{range .IPAM.Config}}{{.Gateway}} {{end}}",
        "bridge",
        check=False,
    ).split()
    if not gateway:  # no gateway recorded (an older daemon): the docker0 interface's address
        gateway = [sh("ip", "-4", "-o", "addr", "show", "docker0").split()[3].split("/")[0]]
    address = gateway[0]
    if not address.startswith(("172.", "10.", "192.168.")):
        raise RuntimeError(f"Docker's bridge gateway {address} is not a private address")
    return address


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Compose:
    """One compose project: `docker compose` (v2) or `docker-compose` (v1)."""

    def __init__(self, file: str, project: str, env: dict[str, str]) -> None:
        v2 = subprocess.run(["docker", "compose", "version"], capture_output=True).returncode == 0
        self.base = ["docker", "compose"] if v2 else ["docker-compose"]
        self.base += ["-f", str(ROOT / "deploy" / file), "-p", project]
        self.env = {**os.environ, **env}

    def __call__(self, *args: str, timeout: float = 600) -> str:
        return sh(*self.base, *args, env=self.env, timeout=timeout)

    def ids(self, service: str) -> list[str]:
        return self("ps", "-q", service).split()

    def logs(self) -> None:
        project_logs(self.base[-1])

    def down(self) -> None:
        with contextlib.suppress(Exception):
            self("down", "-v", "--remove-orphans", "-t", "10", timeout=180)


def health(container: str) -> str:
    return sh("docker", "inspect", "-f", "{{.State.Health.Status}}", container, check=False)


def wait_answering(url: str, limit: float) -> float:
    """Return the seconds until url answers 200 (polled every 0.25 s)."""
    started = time.monotonic()
    while time.monotonic() - started < limit:
        with contextlib.suppress(OSError, ValueError):
            if http(url, timeout=2)[0] == 200:
                return time.monotonic() - started
        time.sleep(0.25)
    raise RuntimeError(f"{url} did not answer in {limit:.0f} s")


def wait_healthy(container: str, limit: float) -> float:
    started = time.monotonic()
    while time.monotonic() - started < limit:
        if health(container) == "healthy":
            return time.monotonic() - started
        time.sleep(0.5)
    logs = container_logs(container)
    raise RuntimeError(f"{container} not healthy after {limit:.0f} s:\n{logs}")


def http(url: str, body: dict[str, Any] | None = None, timeout: float = 120) -> tuple[int, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status, json.loads(answer.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")[:500]


def memory(containers: dict[str, str]) -> dict[str, str]:
    """Return each container's memory use (docker stats, one sample)."""
    out = sh(
        "docker",
        "stats",
        "--no-stream",
        "--format",
        "{{.ID}} {{.MemUsage}}",
        *containers.values(),
        check=False,
    )
    by_id = {line.split()[0]: line.split(" ", 1)[1].split(" / ")[0] for line in out.splitlines()}
    return {name: by_id.get(cid[:12], "?") for name, cid in containers.items()}


def write_env(folder: Path, lines: dict[str, str]) -> Path:
    path = folder / "factbot.env"
    path.write_text("".join(f"{k}={v}\n" for k, v in lines.items()), encoding="utf-8")
    return path


BASE_ENV = {
    "FACTBOT_SEARCH__ENABLED": "false",  # the local index only: no traffic off this host
    "FACTBOT_LOG_LEVEL": "WARNING",
}


def single(folder: Path, image: str) -> dict[str, Any]:
    port = free_port()
    env_file = write_env(folder, BASE_ENV)
    compose = Compose(
        "compose.yaml",
        "fbdeploy1",
        {"FACTBOT_PORT": str(port), "FACTBOT_ENV_FILE": str(env_file), "FACTBOT_IMAGE": image},
    )
    compose.down()
    try:
        started = time.monotonic()
        compose("up", "-d", "--no-build")
        [api] = compose.ids("factbot")
        base = f"http://127.0.0.1:{port}"
        answering = time.monotonic() - started + wait_answering(f"{base}/healthz", 300)
        healthy = wait_healthy(api, 300)
        up_to_healthy = time.monotonic() - started
        log(
            f"compose.yaml: /healthz answers {answering:.1f} s after `up`; Docker reports "
            f"healthy after {up_to_healthy:.1f} s (probed every 15 s)"
        )
        t0 = time.monotonic()
        status, check = http(f"{base}/api/checks?wait=120", {"text": CLAIM}, timeout=150)
        seconds = time.monotonic() - t0
        assert status in (200, 201), (status, check)
        verdict = check.get("verdict") if isinstance(check, dict) else None
        log(f"compose.yaml: claim checked in {seconds:.1f} s (HTTP {status}, verdict {verdict})")
        ready, readiness = http(f"{base}/readyz")
        overview, figures = http(f"{base}/overview/data.json")
        assert ready == 200, readiness
        assert overview == 200, figures
        containers = {
            "factbot": api,
            **{f"worker{i}": c for i, c in enumerate(compose.ids("worker"), 1)},
        }
        mem = memory(containers)
        log(f"compose.yaml: /readyz {ready}, /overview/data.json {overview}; memory {mem}")
        return {
            "up_to_healthy_s": round(up_to_healthy, 1),
            "healthy_after_start_s": round(healthy, 1),
            "check_status": status,
            "check_seconds": round(seconds, 1),
            "verdict": verdict,
            "readyz": ready,
            "dashboard_overview": overview,
            "memory": mem,
        }
    except BaseException:
        compose.logs()
        raise
    finally:
        compose.down()


async def scaled(folder: Path, image: str, checks: int, rate: float) -> dict[str, Any]:
    # The host's address on docker0: reachable from the containers, not from off this host.
    gateway = docker_gateway()
    slack = FakeSlack(signing_secret=SECRET)
    slack.add_team(TEAM, token=TOKEN)
    app = web.Application()
    slack.add_routes(app.router)
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, gateway, 0)  # the host's docker0 address: containers only
    await site.start()
    standin_port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    port = free_port()
    huge = "1000000000"
    env_file = write_env(
        folder,
        {
            **BASE_ENV,
            "FACTBOT_SLACK__BOT_TOKEN": TOKEN,
            "FACTBOT_SLACK__SIGNING_SECRET": SECRET,
            "FACTBOT_SLACK__API_BASE": f"http://{gateway}:{standin_port}/api/",
            "FACTBOT_GUARDS__USER_BURST": huge,
            "FACTBOT_GUARDS__USER_PER_HOUR": huge,
            "FACTBOT_GUARDS__CHANNEL_BURST": huge,
            "FACTBOT_GUARDS__CHANNEL_PER_HOUR": huge,
            "FACTBOT_GUARDS__WORKSPACE_BURST": huge,
            "FACTBOT_GUARDS__WORKSPACE_PER_HOUR": huge,
            "FACTBOT_BUDGETS__CHECKS_PER_DAY": "0",
            "FACTBOT_BUDGETS__USD_PER_MONTH": "0",
        },
    )
    # SearXNG (Debian's searx) with every engine left out: its JSON API answers, and it sends
    # nothing off this host.
    searxng_settings = folder / "searxng.yml"
    searxng_settings.write_text(SEARXNG_NO_ENGINES, encoding="utf-8")
    searxng_settings.chmod(0o644)
    compose = Compose(
        "compose.scaled.yaml",
        "fbdeploy2",
        {
            "FACTBOT_PORT": str(port),
            "FACTBOT_ENV_FILE": str(env_file),
            "FACTBOT_IMAGE": image,
            "POSTGRES_PASSWORD": "deploy-test-pw",
            "SEARXNG_SECRET": "deploy-test-searxng-secret",
            "SEARXNG_SETTINGS": str(searxng_settings),
        },
    )
    compose.down()
    faults: dict[str, Any] = {}
    try:
        started = time.monotonic()
        await asyncio.to_thread(
            compose,
            "up",
            "-d",
            "--no-build",
            "--scale",
            "worker=2",
            "postgres",
            "migrate",
            "factbot",
            "worker",
            "searxng",
        )
        [api] = compose.ids("factbot")
        [pg] = compose.ids("postgres")
        workers = compose.ids("worker")
        assert len(workers) == 2, workers
        await asyncio.to_thread(wait_healthy, api, 300)
        up_to_healthy = time.monotonic() - started
        log(f"compose.scaled.yaml: API healthy {up_to_healthy:.1f} s after `up`, 2 workers")
        searxng = await asyncio.to_thread(searxng_answers, compose, api)
        log(f"compose.scaled.yaml: SearXNG {searxng}")
        events_url = f"http://127.0.0.1:{port}/slack/events"
        parents = [f"1700000000.{n:06d}" for n in range(checks)]
        retries = 0
        plan = {
            checks // 4: "kill_worker",
            checks // 2: "restart_postgres",
            3 * checks // 4: "restart_api",
        }
        fault_tasks = []
        t0 = time.monotonic()
        for n, parent in enumerate(parents):
            await asyncio.sleep(max(0.0, t0 + n / rate - time.monotonic()))
            if n in plan:
                fault_tasks.append(
                    asyncio.create_task(_fault(plan[n], faults, workers=workers, pg=pg, api=api))
                )
            slack.add_message(
                TEAM, CHANNEL, ts=parent, user=f"UA{n}", text=f"Claim number {n}: {CLAIM}"
            )
            slack.add_message(
                TEAM,
                CHANNEL,
                ts=f"1700000100.{n:06d}",
                thread_ts=parent,
                user=f"UQ{n}",
                text="<@UBOT> is this true?",
            )
            envelope = {
                "token": "x",
                "team_id": TEAM,
                "api_app_id": "A0FACTBOT",
                "type": "event_callback",
                "event_id": f"Ev{n:06d}",
                "event_time": 1700000100,
                "event": {
                    "type": "app_mention",
                    "user": f"UQ{n}",
                    "channel": CHANNEL,
                    "ts": f"1700000100.{n:06d}",
                    "thread_ts": parent,
                    "text": "<@UBOT> is this true?",
                    "event_ts": f"1700000100.{n:06d}",
                },
            }
            for attempt in range(RETRIES):  # Slack retries too; bounded, 0.5 s apart
                try:
                    status, answer = await slack.deliver_event(
                        events_url, envelope, retry_num=attempt or None
                    )
                except (OSError, aiohttp.ClientError) as exc:  # the API restarting
                    status, answer = 0, repr(exc)
                if status == 200:
                    break
                retries += 1
                await asyncio.sleep(0.5)
            else:
                logs = container_logs(api, 60)
                raise RuntimeError(f"mention {n} not accepted: {status} {answer[:300]}\n{logs}")
        sending = time.monotonic() - t0
        await asyncio.gather(*fault_tasks)
        log(
            f"compose.scaled.yaml: {checks} mentions delivered in {sending:.0f} s "
            f"({retries} deliveries retried); faults {faults}"
        )

        def replies() -> dict[str, int]:
            counts = dict.fromkeys(parents, 0)
            for call in slack.calls("chat.postMessage"):
                thread = str(call.body.get("thread_ts"))
                if thread in counts:
                    counts[thread] += 1
            return counts

        first_reply = last_reply = None
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            counts = replies()
            answered = sum(1 for c in counts.values() if c)
            if first_reply is None and answered:
                first_reply = time.monotonic()
            if answered == checks:
                last_reply = time.monotonic()
                break
            await asyncio.sleep(1.0)
        # A job whose process died after its reply was posted (the killed worker, the API
        # restarted) stays running until its lease lapses and it is taken again: it then finds
        # the reply posted and ends. Wait for every job to end (300 s at most).
        settled = time.monotonic() + 300
        jobs = await asyncio.to_thread(jobs_by_status, pg)
        while time.monotonic() < settled and any(
            line.split()[1] not in ("done", "dead") for line in jobs
        ):
            await asyncio.sleep(2.0)
            jobs = await asyncio.to_thread(jobs_by_status, pg)
        await asyncio.sleep(10)  # a duplicate, if one were coming, shows by now
        counts = replies()
        jobs = await asyncio.to_thread(jobs_by_status, pg)
        containers = {
            "factbot": api,
            "postgres": pg,
            **{f"worker{i}": c for i, c in enumerate(compose.ids("worker"), 1)},
        }
        mem = memory(containers)
        lost = sum(1 for c in counts.values() if c == 0)
        duplicated = sum(1 for c in counts.values() if c > 1)
        end = last_reply or time.monotonic()
        per_minute = checks / ((end - t0) / 60)
        result = {
            "checks": checks,
            "rate_per_s": rate,
            "up_to_healthy_s": round(up_to_healthy, 1),
            "sending_s": round(sending, 1),
            "delivery_retries": retries,
            "all_replied_after_s": round(end - t0, 1),
            "checks_per_min": round(per_minute, 1),
            "lost": lost,
            "duplicated": duplicated,
            "faults": faults,
            "jobs": jobs,
            "memory": mem,
            "searxng": searxng,
        }
        log(f"compose.scaled.yaml: {json.dumps(result)}")
        if lost or duplicated or last_reply is None:
            for name, cid in containers.items():
                log(f"--- {name} logs\n" + container_logs(cid, 30))
        return result
    except BaseException:
        await asyncio.to_thread(compose.logs)
        raise
    finally:
        await asyncio.to_thread(compose.down)
        await runner.cleanup()


def jobs_by_status(pg: str) -> list[str]:
    """Return "kind status count max-attempts" lines of the jobs table (in its container)."""
    query = (
        "SELECT kind || ' ' || status || ' ' || count(*) || ' ' || max(attempts) "
        "FROM jobs GROUP BY kind, status ORDER BY 1"
    )
    out = sh("docker", "exec", pg, "psql", "-U", "factbot", "-d", "factbot", "-At", "-c", query)
    return out.splitlines()


SEARXNG_NO_ENGINES = """\
use_default_settings:
  engines:
    keep_only: []
server:
  port: 8080
  limiter: false
  image_proxy: false
"""


def searxng_answers(compose: Compose, api: str) -> dict[str, Any]:
    """Wait for SearXNG to be healthy, then ask its JSON API from the API's container."""
    [searxng] = compose.ids("searxng")
    healthy = wait_healthy(searxng, 120)
    probe = (
        "import json, urllib.request; "
        "url = 'http://searxng:8080/search?q=eiffel+tower&format=json'; "
        "print(json.dumps(sorted(json.load(urllib.request.urlopen(url, timeout=20)))))"
    )
    keys = json.loads(sh("docker", "exec", api, "python3", "-c", probe, timeout=60))
    if "results" not in keys:
        raise RuntimeError(f"SearXNG's JSON answer has no results: {keys}")
    return {"healthy_s": round(healthy, 1), "json_keys": keys}


async def _fault(
    kind: str, faults: dict[str, Any], *, workers: list[str], pg: str, api: str
) -> None:
    worker = workers[0]
    t0 = time.monotonic()
    if kind == "kill_worker":
        # A worker container that holds a running check (its lease owner names the
        # container's host name, its id's first 12 characters; the API's own saq workers
        # hold checks too and are left out), polled for at most 20 s; else the first worker.
        victim, job = worker, None
        owners = " OR ".join(f"lease_owner LIKE '%@{w[:12]}:%'" for w in workers)
        query = (
            "SELECT id || ' ' || lease_owner FROM jobs WHERE status = 'running' "
            f"AND kind = 'check' AND ({owners}) LIMIT 1"
        )
        poll = (  # inside the database's container: a look every 20 ms, 20 s at most
            f'for i in $(seq 1000); do r=$(psql -U factbot -d factbot -At -c "{query}"); '
            '[ -n "$r" ] && echo "$r" && exit 0; sleep 0.02; done'
        )
        row = await asyncio.to_thread(sh, "docker", "exec", pg, "sh", "-c", poll, check=False)
        host = row.split("@")[1].split(":")[0] if "@" in row else ""
        match = [w for w in workers if host and w.startswith(host)]
        if match:
            victim, job = match[0], row.split()[0]
        await asyncio.to_thread(sh, "docker", "kill", victim)
        await asyncio.sleep(5)
        await asyncio.to_thread(sh, "docker", "start", victim)  # back to 2 workers
        faults[kind] = {"killed_mid_check": job}
    elif kind == "restart_postgres":
        await asyncio.to_thread(sh, "docker", "restart", "-t", "10", pg)
        await asyncio.to_thread(wait_healthy, pg, 120)
        faults[kind] = {"healthy_again_s": round(time.monotonic() - t0, 1)}
    else:
        await asyncio.to_thread(sh, "docker", "restart", "-t", "40", api)
        await asyncio.to_thread(wait_healthy, api, 300)
        faults[kind] = {"healthy_again_s": round(time.monotonic() - t0, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", default="factbot:latest")
    parser.add_argument("--platform-image", default="factbot:slack")
    parser.add_argument("--checks", type=int, default=200)
    parser.add_argument("--rate", type=float, default=8.0, help="mentions per second")
    parser.add_argument("--report", type=Path)
    parser.add_argument("--only", choices=["single", "scaled"])
    args = parser.parse_args()
    report: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="factbot-deploy-") as tmp:
        if args.only in (None, "single"):
            report["compose"] = single(Path(tmp), args.image)
        if args.only in (None, "scaled"):
            report["scaled"] = asyncio.run(
                scaled(Path(tmp), args.platform_image, args.checks, args.rate)
            )
    if args.report:
        args.report.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    scaled_ = report.get("scaled")
    ok = scaled_ is None or (
        scaled_["lost"] == 0
        and scaled_["duplicated"] == 0
        and {line.rsplit(" ", 1)[0] for line in scaled_["jobs"]}
        == {f"check done {args.checks}", f"reply:slack done {args.checks}"}
    )
    log("PASSED" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
