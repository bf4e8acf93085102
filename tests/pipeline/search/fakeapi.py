"""A scripted HTTP API on 127.0.0.1 (port 0) that records every request it is sent."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from tests.conftest import FIXTURES
from tests.support.httpserver import LocalServer, Request, Response, serve

SEARCH_FIXTURES = FIXTURES / "search"
JSON = "application/json; charset=utf-8"
RSS = "application/rss+xml; charset=utf-8"

Seen = Request  # one request as the server received it


def fixture(name: str) -> bytes:
    """Return the bytes of a saved provider answer."""
    return (SEARCH_FIXTURES / name).read_bytes()


@dataclass(frozen=True)
class Reply(Response):
    """One scripted answer: (status, body, content type, headers), JSON unless told."""

    content_type: str | None = JSON


class FakeAPI:
    """Answers requests with the queued replies in order; the last one repeats."""

    def __init__(self, server: LocalServer) -> None:
        self.server = server
        self.replies: list[Response] = []
        self.lock = threading.Lock()
        server.default = self.next_reply

    @property
    def base(self) -> str:
        """Return the API's base URL."""
        return self.server.base

    @property
    def seen(self) -> list[Seen]:
        """Return the requests received so far, in order (a live list)."""
        return self.server.requests

    def queue(self, *replies: Response) -> None:
        """Answer the next requests with replies."""
        with self.lock:
            self.replies.extend(replies)

    def next_reply(self, request: Request) -> Response:
        """Return the reply for the request being served."""
        with self.lock:
            if not self.replies:
                return Reply(404, b'{"error": "nothing queued"}')
            return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]


@contextmanager
def serve_api() -> Iterator[FakeAPI]:
    """Run a FakeAPI until the block ends."""
    with serve() as server:
        yield FakeAPI(server)
