"""Shared fixtures: a real embedder, a fresh database per test, and no outside network."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from pipeline.embedding.embedder import SentenceTransformerEmbedder
from pipeline.util.clock import SYSTEM, Clock
from storage import Store
from tests.support.postgres import PostgresServer, find_bindir

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SHARED_DATA = REPO.parent / "shared" / "data"

_real_connect = socket.socket.connect


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    """Refuse every connection that does not go to this machine."""
    if self.family in (socket.AF_INET, socket.AF_INET6):
        host = address[0]
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            loopback = host == "localhost"
        if not loopback:
            raise ConnectionRefusedError(f"tests may not reach {host}: the network is blocked")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def _no_outside_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    # No test reaches a real model unless it asks for one explicitly.
    monkeypatch.setenv("FACTBOT_MODEL__MODE", "none")
    monkeypatch.delenv("FACTBOT_MODEL__BASE_URL", raising=False)
    monkeypatch.delenv("FACTBOT_MODEL__API_KEY", raising=False)
    # Live search is on by default for users; a test turns it on by giving its own
    # SearchSettings (an explicit group replaces this variable) pointed at a local stand-in.
    monkeypatch.setenv("FACTBOT_SEARCH__ENABLED", "false")
    # The stand-in publishers live on loopback hosts no rating table knows; the default policy
    # (`local`: unrated publishers only from the local index, never from web search) would skip
    # every page they serve. Tests of that default build their own RetrievalSettings.
    monkeypatch.setenv("FACTBOT_RETRIEVAL__UNRATED_SOURCES", "allow")


@pytest.fixture(scope="session")
def embedder() -> SentenceTransformerEmbedder:
    """The real bundled all-MiniLM-L6-v2, loaded once per test session."""
    model = SentenceTransformerEmbedder()
    model.warm_up()
    return model


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    """A fresh database."""
    with Store.open(tmp_path / "factbot.db") as opened:
        yield opened


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A private PostgreSQL server for the session (Debian's binaries; see TOOLING.md).

    Without the binaries the tests that need it fail in CI (CI=true: a missing server must not
    pass as a skip) and are skipped elsewhere, saying what to install.
    """
    bindir = find_bindir()
    if bindir is None:
        reason = (
            "PostgreSQL's server binaries were not found (install Debian's `postgresql`: "
            "deploy/setup-system.sh does)"
        )
        if os.environ.get("CI", "").lower() in ("true", "1"):
            pytest.fail(reason)
        pytest.skip(reason)
    server = PostgresServer(bindir).start()
    try:
        yield server
    finally:
        server.remove()


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest) -> str | None:
    """Both engines: None (SQLite alone), else a fresh migrated database of the session server."""
    if request.param == "sqlite":
        return None
    server = request.getfixturevalue("postgres_server")
    return str(server.migrated_database())


@pytest.fixture
def open_store(database_url: str | None) -> Callable[..., Store]:
    """Open a store on this test's engine (path: the node's own SQLite file)."""

    def open_(path: Path | str, *, clock: Clock = SYSTEM) -> Store:
        return Store.open(path, clock=clock, database_url=database_url)

    return open_


@pytest.fixture
def shared_data() -> Path:
    """The shared public data folder (skips when it is not beside the repository)."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    return SHARED_DATA
