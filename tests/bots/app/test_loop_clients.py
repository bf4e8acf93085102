"""The loop's clients close from synchronous code after the loop that opened them has ended."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from bots.app.resources import LoopClients


class _KeepAlive(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # the connection stays open in the client's pool

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def keep_alive() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _KeepAlive)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


async def _client() -> httpx.AsyncClient:
    return httpx.AsyncClient()


def test_clients_of_an_ended_loop_close_without_error(keep_alive: str) -> None:
    """`asyncio.run(check)`, then `close()` (the CLI, tests): the pooled connection's loop ended."""
    clients = LoopClients()

    async def use() -> httpx.AsyncClient:
        client: httpx.AsyncClient = await clients.get("http", _client)
        assert (await client.get(keep_alive)).text == "ok"
        return client

    first = asyncio.run(use())
    clients.close()  # raised "Event loop is closed" from the pooled connection before
    assert clients.made == {}

    second = asyncio.run(use())  # a new loop makes a new client
    assert second is not first and clients.constructed == 2
    clients.close()


def test_a_client_of_a_live_loop_still_reports_its_close_errors() -> None:
    """Only the ended-loop case is forgiven: a failing close in a running loop is raised."""

    class Failing:
        async def aclose(self) -> None:
            raise RuntimeError("close failed")

    async def make() -> Failing:
        return Failing()

    async def run() -> None:
        clients = LoopClients()
        await clients.get("failing", make)
        with pytest.raises(RuntimeError, match="close failed"):
            await clients.aclose()

    asyncio.run(run())
