"""A tiny threaded HTTP server on 127.0.0.1 (port 0) serving canned responses by path."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


@dataclass
class Site:
    """Responses by path: (status, content type, body); every request is recorded."""

    pages: dict[str, tuple[int, str, bytes]] = field(default_factory=dict)
    seen: list[str] = field(default_factory=list)
    base: str = ""

    def add(
        self, path: str, body: bytes | str, content_type: str = "text/html; charset=utf-8"
    ) -> str:
        """Serve body at path; return its full URL (valid once the server runs)."""
        data = body.encode("utf-8") if isinstance(body, str) else body
        self.pages[path] = (200, content_type, data)
        return f"{self.base}{path}"


@contextmanager
def serve(site: Site) -> Iterator[Site]:
    """Run the site until the block ends."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            site.seen.append(self.path)
            path = urlsplit(self.path).path  # the query string does not select the page
            status, content_type, body = site.pages.get(path, (404, "text/plain", b"nope"))
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    site.base = f"http://127.0.0.1:{server.server_address[1]}"
    with running(server):
        yield site


@contextmanager
def running(server: ThreadingHTTPServer) -> Iterator[ThreadingHTTPServer]:
    """Serve in a background thread until the block ends, then shut down and close."""
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
