"""The HTTP API over real HTTP on loopback (uvicorn on port 0)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import uvicorn

from bots.app.resources import Resources
from bots.app.root import App
from bots.settings import FetchSettings, Settings
from bots.web import create_web
from pipeline.fetch.fetcher import Fetcher
from tests.conftest import FIXTURES
from tests.support.httpserver import serve


@contextmanager
def serving(app: App, *, workers: int | None = None) -> Iterator[str]:
    """Serve the API (and `workers` workers) over app on a free port until the block ends."""
    config = uvicorn.Config(
        create_web(app, workers=workers), host="127.0.0.1", port=0, log_level="warning"
    )
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.05)
    port = srv.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        srv.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def server(tmp_path: Path, embedder, corpus_in) -> Iterator[str]:  # type: ignore[no-untyped-def]
    # the session's model, over a copy of the indexed corpus
    app = App(Settings(data_dir=corpus_in(tmp_path / "data")), embedder=embedder)
    with serving(app) as base:
        yield base
    app.close()


def test_health(server: str) -> None:
    body = httpx.get(f"{server}/healthz").json()
    assert body["status"] == "ok" and body["documents"] == 7 and body["sources"] > 0


def test_create_and_read_a_check(server: str) -> None:
    created = httpx.post(
        f"{server}/api/checks?wait=60",
        json={"text": "5G networks spread the coronavirus."},
        timeout=60,
    )
    assert created.status_code == 201, created.text
    data = created.json()
    assert data["verdict"] == "false"
    fetched = httpx.get(f"{server}/api/checks/{data['id']}")
    assert fetched.status_code == 200
    assert fetched.json() == data
    page = httpx.get(f"{server}/checks/{data['id']}")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "5G networks spread the coronavirus." in page.text  # an API post's text is shown
    for ref in data["correction"]["references"]:
        assert f"href='{ref['url']}'" in page.text
    assert httpx.get(f"{server}/checks/nope").status_code == 404


@pytest.mark.parametrize(
    ("payload", "status"),
    [
        ({}, 422),
        ({"text": "a", "url": "https://example.org"}, 422),
        ({"text": ""}, 422),
        ({"text": "🔥🔥"}, 422),
        ({"text": "x" * 1_048_576}, 422),
        ({"url": "http://127.0.0.1:9/secret"}, 422),
        ({"url": "gopher://example.org"}, 422),
    ],
)
def test_bad_requests_are_refused_clearly(
    server: str, payload: dict[str, str], status: int
) -> None:
    # wait: a URL's page is fetched by the worker, so a refused address ends the job there.
    response = httpx.post(f"{server}/api/checks?wait=60", json=payload, timeout=60)
    assert response.status_code == status
    assert response.json()


def test_unknown_check_is_404(server: str) -> None:
    assert httpx.get(f"{server}/api/checks/nope").status_code == 404


class _RecordingResources(Resources):
    """Resources noting every fetcher they hand out (the worker asks for it per URL post)."""

    handed_out: list[Fetcher]

    async def fetcher(self) -> Fetcher:
        fetcher = await super().fetcher()
        self.handed_out.append(fetcher)
        return fetcher


def test_url_posts_share_one_fetcher_closed_when_the_server_stops(tmp_path: Path, embedder) -> None:  # type: ignore[no-untyped-def]
    settings = Settings(
        data_dir=tmp_path / "data", fetch=FetchSettings(allowed_networks=("127.0.0.1/32",))
    )
    resources = _RecordingResources(settings, embedder=embedder)
    resources.handed_out = []
    app = App(settings, resources=resources)
    page = (
        "<html><head><title>A post</title></head><body><article><p>The Eiffel Tower grows about "
        "15 centimetres taller in the summer heat, engineers in Paris said on Monday. The iron "
        "of the tower expands when it is hot and shrinks again in the cold of winter.</p>"
        "</article></body></html>"
    )
    with serve() as site:
        urls = [site.add("/one", page), site.add("/two", page)]
        site.add("/robots.txt", "User-agent: *\nAllow: /\n", "text/plain")
        with serving(app) as base:
            for url in urls:
                # fresh: the two pages have the same text, which would otherwise be reused.
                answer = httpx.post(
                    f"{base}/api/checks?wait=60&fresh=true", json={"url": url}, timeout=60
                )
                assert answer.status_code == 201, answer.text
            (fetcher,) = set(resources.handed_out)
            assert not fetcher.closed
        assert fetcher.closed  # at shutdown, in the server's own event loop
    assert site.seen.count("/robots.txt") == 1
    assert {"/one", "/two"} <= set(site.seen)
    app.close()


def test_a_request_with_leads_reads_them_and_is_not_answered_by_a_check_without(
    tmp_path: Path, embedder
) -> None:  # type: ignore[no-untyped-def]
    settings = Settings(
        data_dir=tmp_path / "data", fetch=FetchSettings(allowed_networks=("127.0.0.1/32",))
    )
    app = App(settings, embedder=embedder)
    fact_check = (FIXTURES / "pages" / "factcheck_pants_on_fire.html").read_text("utf-8")
    report = (
        "<html><head><title>Bleach and the flu</title></head><body><article><p>Drinking "
        "diluted bleach does not cure the flu; it burns the mouth, throat and stomach, poison "
        "centres warned on Monday. Doctors said that no amount of bleach treats influenza or "
        "any other infection, and that anyone who swallowed some should call for help at once."
        "</p></article></body></html>"
    )
    text = "Drinking diluted bleach cures the flu, my aunt swears by it."
    with serve() as site, serving(app) as base:
        news, rated = site.add("/news", report), site.add("/bleach-flu", fact_check)
        first = httpx.post(
            f"{base}/api/checks?wait=60", json={"text": text, "leads": [news]}, timeout=60
        )
        assert first.status_code == 201, first.text
        assert first.json()["verdict"] == "unverifiable"  # evidence, but no rating of the claim
        assert [e["url"] for e in first.json()["evidence"]] == [news]
        ask = {"text": text, "leads": [news, rated]}
        # a stored check answers the same text, but it never read the second lead: checked again
        second = httpx.post(f"{base}/api/checks?wait=60", json=ask, timeout=60)
        assert second.status_code == 201, second.text
        body = second.json()
        assert body["verdict"] == "false" and "reused" not in body
        assert rated in [r["url"] for r in body["correction"]["references"]]
        assert body["post"]["leads"] == [news, rated]
        assert [lead["read"] for lead in body["search"]["leads"]] == [True, True]
        again = httpx.post(f"{base}/api/checks", json={"text": text, "leads": [rated]})
        assert again.status_code == 200 and again.json()["id"] == body["id"]  # it read that one
        bad = httpx.post(f"{base}/api/checks", json={"text": text, "leads": ["ftp://a.org/x"]})
        assert bad.status_code == 422 and "scheme 'ftp' is not http or https" in bad.text
        many = [f"https://s{n}.org/" for n in range(6)]
        assert httpx.post(f"{base}/api/checks", json={**ask, "leads": many}).status_code == 422
    app.close()
