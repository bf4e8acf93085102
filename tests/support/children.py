"""The environment of a `factbot` child process, and a slow SearXNG stand-in to give it work.

Tests that start `factbot serve`, `worker` or `relay` as real processes (crashes, restarts, two
nodes on one database) build each child's environment here: this process's variables without
its `FACTBOT_` settings, this checkout first on `PYTHONPATH`, no network model, and short job
timings so a killed worker's lease lapses in seconds. What is not these tests' subject is set
as the conftest sets it in-process (graph verification off), and lingua runs in its low-accuracy
mode (trigram models only: 0.1 s to load against 1.6 s for every n-gram size, paid by each
child), which still tells the English claims these tests check from the other languages.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

from tests.conftest import REPO
from tests.support.httpserver import Request, Response, json_response


def factbot_env(data: Path, **values: str) -> dict[str, str]:
    """Return a child's environment: its data folder, the common settings, then `values`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FACTBOT_")}
    env.update(
        {
            "PYTHONPATH": os.pathsep.join([str(REPO), *filter(None, [env.get("PYTHONPATH")])]),
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "FACTBOT_DATA_DIR": str(data),
            "FACTBOT_MODEL__MODE": "none",
            "FACTBOT_GRAPH__ENABLED": "false",
            "FACTBOT_LANGUAGE_ID__ACCURACY": "low",
            "FACTBOT_LOG_LEVEL": "WARNING",
            "FACTBOT_JOBS__POLL_SECONDS": "0.1",
            "FACTBOT_JOBS__LEASE_SECONDS": "3",
            "FACTBOT_JOBS__HEARTBEAT_SECONDS": "0.5",
            "FACTBOT_JOBS__BACKOFF_INITIAL": "0",
        }
    )
    env.update(values)
    return env


def searching(searxng: str) -> dict[str, str]:
    """Return the settings that send a child's searches to a SearXNG stand-in, and only there."""
    return {
        "FACTBOT_SEARCH__PROVIDERS": '["searxng"]',
        "FACTBOT_SEARCH__SEARXNG_URL": searxng,
        "FACTBOT_SEARCH__FACT_CHECK_SITES": "[]",
        "FACTBOT_FETCH__ALLOWED_NETWORKS": '["127.0.0.1/32"]',
    }


def searxng_after(delay: Callable[[int], float]) -> Callable[[Request], Response]:
    """A SearXNG search endpoint whose n-th answer (from 0) comes after delay(n) seconds."""
    count = iter(range(10**6))
    lock = threading.Lock()

    def answer(request: Request) -> Response:
        with lock:
            n = next(count)
        return json_response({"query": request.param("q"), "results": []}, delay=delay(n))

    return answer
