"""factbot with its X adapter on, against the stand-in X API, over a small index.

Everything on factbot's side is real: the App (a tiny ingested corpus whose documents live on a
loopback web server, rated credible, no language model), the `PlatformService`, the adapter's
tweepy AsyncClient on the stand-in, and a worker pool running check, reply and notes jobs.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bots.app.root import App
from bots.platforms.x import XAdapter
from bots.settings import FetchSettings, JobSettings, Settings, XSettings
from pipeline.evidence.ingest import Ingester
from pipeline.records.domain import SourceRating, Tier
from tests.conftest import FIXTURES
from tests.support.fake_x import FakeX
from tests.support.httpserver import LocalServer as Server
from tests.support.httpserver import serve
from tests.support.jobs import drain

BOT = "100"
ALICE = "200"  # wrote the claim
BOB = "300"  # asks factbot
CLAIM = "5G networks spread the coronavirus."


@dataclass
class XBot:
    """An App with the X adapter, the stand-in, and the pages its references live on."""

    app: App
    fake: FakeX
    pages: Server

    @property
    def adapter(self) -> XAdapter:
        """Return the X adapter."""
        adapter = self.app.adapters["x"]
        assert isinstance(adapter, XAdapter)
        return adapter

    async def drain(self) -> None:
        """Run a worker pool (checks, replies, notes) until no job is left."""
        await drain(self.app)

    def retrieved(self) -> set[str]:
        """Return every reference URL of every stored check."""
        rows = self.app.store.db.execute("SELECT id FROM checks").fetchall()
        urls: set[str] = set()
        for (check_id,) in rows:
            check = self.app.store.checks.get(check_id)
            urls |= {r.url for r in check.correction.references}
        return urls


@pytest.fixture
def pages() -> Iterator[Server]:
    """A loopback web server holding the corpus's documents (UrlValidity fetches them)."""
    with serve() as server:
        yield server


def loopback_corpus(tmp_path: Path, pages: Server) -> Path:
    """Write the test corpus with every URL moved onto the loopback server (each serves 200)."""
    out = tmp_path / "corpus.jsonl"
    lines = []
    for n, line in enumerate((FIXTURES / "corpus.jsonl").read_text().splitlines()):
        doc = json.loads(line)
        doc["url"] = pages.add(f"/doc/{n}", f"<html><body><p>{doc['title']}</p></body></html>")
        lines.append(json.dumps(doc))
    out.write_text("\n".join(lines) + "\n")
    return out


@pytest.fixture
async def make_bot(
    tmp_path: Path, data_dir: Path, embedder: Any, pages: Server, deployment: dict[str, Any]
) -> AsyncIterator[Callable[..., Any]]:
    """Return a maker of XBots sharing one database (a second one is a restart), in each
    deployment (SQLite; PostgreSQL; PostgreSQL with the saq queue engine)."""
    made: list[App] = []
    corpus = loopback_corpus(tmp_path, pages)

    async def make(fake: FakeX, **x: Any) -> XBot:
        """Return an XBot on fake (x: XSettings fields, the OAuth keys among them)."""
        settings = Settings(
            data_dir=data_dir,
            jobs=JobSettings(
                poll_seconds=0.02, heartbeat_seconds=5.0, backoff_initial=0, backoff_max=0
            ),
            fetch=FetchSettings(allowed_networks=("127.0.0.1/32",)),
            x=XSettings(
                **{
                    "consumer_key": "ck",
                    "consumer_secret": "cs",
                    "access_token": "at",
                    "access_token_secret": "ats",
                    "api_base": fake.api_base,
                    "user_id": BOT,
                }
                | x
            ),
            **deployment,
        )
        app = App(settings, embedder=embedder)
        if not made:
            app.store.sources.upsert_many(
                [SourceRating("127.0.0.1", Tier.HIGH, "the test's publisher", "manual")]
            )
            await Ingester(app.store.documents, app.embedder).ingest([str(corpus)])
        made.append(app)
        return XBot(app, fake, pages)

    yield make
    for app in made:
        await app.close_fetcher()
        for sender in app.senders().values():
            await sender.close()  # type: ignore[attr-defined]
        app.close()


@pytest.fixture
async def fake() -> AsyncIterator[FakeX]:
    """The stand-in X with the claim by Alice and Bob's mention under it; it checks each
    OAuth 1.0a signature against the URL it was called at."""
    async with FakeX(bot_id=BOT, bot_username="factbot", oauth1=("ck", "cs", "at", "ats")) as x:
        x.add_user(ALICE, "alice", followers=12_000)
        x.add_user(BOB, "bob")
        x.add_tweet("1000", ALICE, CLAIM)
        x.add_tweet("1001", BOB, "@factbot is this true?", replied_to="1000")
        yield x
