"""A scripted HTTP API on 127.0.0.1 (port 0) that records every request it is sent."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

SEARCH_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "search"
JSON = "application/json; charset=utf-8"
RSS = "application/rss+xml; charset=utf-8"


def fixture(name: str) -> bytes:
    """Return the bytes of a saved provider answer."""
    return (SEARCH_FIXTURES / name).read_bytes()


@dataclass(frozen=True)
class Reply:
    """One scripted answer."""

    status: int = 200
    body: bytes | str = b""
    content_type: str = JSON
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Seen:
    """One request as the server received it."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # names lower-cased
    body: bytes

    def param(self, name: str) -> str:
        """Return the single value of query parameter name."""
        values = self.query[name]
        assert len(values) == 1, values
        return values[0]

    def json(self) -> Any:
        """Return the request body decoded as JSON."""
        return json.loads(self.body)


@dataclass
class FakeAPI:
    """Answers requests with the queued replies in order; the last one repeats."""

    base: str = ""
    replies: list[Reply] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def queue(self, *replies: Reply) -> None:
        """Answer the next requests with replies."""
        with self.lock:
            self.replies.extend(replies)

    def next_reply(self) -> Reply:
        """Return the reply for the request being served."""
        with self.lock:
            if not self.replies:
                return Reply(404, b'{"error": "nothing queued"}')
            return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]


@contextmanager
def serve_api() -> Iterator[FakeAPI]:
    """Run a FakeAPI until the block ends."""
    api = FakeAPI()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            parts = urlsplit(self.path)
            seen = Seen(
                method=self.command,
                path=parts.path,
                query=parse_qs(parts.query, keep_blank_values=True),
                headers={name.lower(): value for name, value in self.headers.items()},
                body=self.rfile.read(length) if length else b"",
            )
            with api.lock:
                api.seen.append(seen)
            reply = api.next_reply()
            body = reply.body.encode("utf-8") if isinstance(reply.body, str) else reply.body
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self._answer()

        def do_POST(self) -> None:
            self._answer()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    api.base = f"http://127.0.0.1:{server.server_address[1]}"
    # A short poll interval: shutdown() waits for it, and every test starts its own server.
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01})
    thread.daemon = True
    thread.start()
    try:
        yield api
    finally:
        server.shutdown()
        server.server_close()
