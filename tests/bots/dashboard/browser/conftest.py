"""Browser tests: Playwright drives Debian's chromium against the real server on loopback.

Never `playwright install`: the browser is the system's (deploy/apt-packages.txt). Tests skip
when it is missing. Screenshots go to artefacts/dashboard/ in the checkout (or
$FACTBOT_ARTEFACTS) so a person can look at them after a run.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from bots.app.root import App
from bots.settings import SearchSettings, Settings
from bots.web import create_web
from tests.conftest import REPO
from tests.support.httpserver import json_response, serve

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
]
ARTEFACTS = Path(os.environ.get("FACTBOT_ARTEFACTS", REPO / "artefacts")) / "dashboard"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the browser tests last; skip them when there is no chromium (the Debian package).

    Playwright's sync API keeps an event loop running on the main thread for the rest of the
    session once it has started, and every asyncio test after it would then fail with
    "cannot be called from a running event loop": so nothing may come after them.
    """
    browser = [item for item in items if "browser" in item.keywords]
    if browser:
        items[:] = [item for item in items if "browser" not in item.keywords] + browser
    if Path(CHROMIUM).exists():
        return
    skip = pytest.mark.skip(reason="chromium is not installed (apt-get install chromium)")
    for item in browser:
        item.add_marker(skip)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """Launch the system chromium."""
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": ARGS}


@pytest.fixture
def shot() -> Any:
    """Return a function that saves a page's screenshot under ARTEFACTS."""
    ARTEFACTS.mkdir(parents=True, exist_ok=True)

    def save(page: Any, name: str) -> Path:
        path = ARTEFACTS / f"{name}.png"
        try:
            page.screenshot(path=str(path), full_page=True)
        except Exception as exc:  # Chromium under load: "Unable to capture screenshot"; once more
            if "Unable to capture screenshot" not in str(exc):
                raise
            page.wait_for_timeout(500)
            page.screenshot(path=str(path), full_page=True)
        return path

    return save


class Served:
    """A running server over an App: its base URL."""

    def __init__(self, app: App, base: str) -> None:
        self.app = app
        self.base = base


@pytest.fixture
def served_app(tmp_path: Path, embedder: Any, corpus_in: Callable[[Path], Path]) -> Iterator[App]:
    """An App over a fresh database with the small corpus ingested (not yet served)."""
    app = App(Settings(data_dir=corpus_in(tmp_path / "data")), embedder=embedder)
    yield app
    app.close()


@pytest.fixture
def slow_app(tmp_path: Path, embedder: Any, corpus_in: Callable[[Path], Path]) -> Iterator[App]:
    """`served_app` whose checks search a stand-in SearXNG that answers after 2 s each time.

    A check then lasts seconds, so a page can be seen while it runs (its progress).
    """
    with serve() as search:
        search.route(
            "/search",
            lambda r: json_response({"query": r.param("q"), "results": []}, delay=2.0),
        )
        settings = Settings(
            data_dir=corpus_in(tmp_path / "data"),
            search=SearchSettings(
                providers=["searxng"], searxng_url=search.base, fact_check_sites=[]
            ),
        )
        app = App(settings, embedder=embedder)
        yield app
        app.close()
        assert search.requests, "the check was meant to search the slow stand-in"


@pytest.fixture
def serve_app() -> Iterator[Any]:
    """Return a function that serves an App (one worker) until the test ends."""
    servers: list[tuple[uvicorn.Server, threading.Thread]] = []

    def start(app: App, *, workers: int = 1) -> Served:
        config = uvicorn.Config(
            create_web(app, workers=workers),
            host="127.0.0.1",
            port=0,
            log_level="warning",
            # A page the browser still holds open (a live progress stream) would keep the
            # server waiting at the end of the test; the app's own shutdown still runs.
            timeout_graceful_shutdown=1,
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 30
        while not server.started:
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.05)
        servers.append((server, thread))
        port = server.servers[0].sockets[0].getsockname()[1]
        return Served(app, f"http://127.0.0.1:{port}")

    yield start
    for server, thread in servers:
        server.should_exit = True
        thread.join(timeout=10)
