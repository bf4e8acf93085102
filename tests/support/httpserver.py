"""A real HTTP server for tests: loopback, port 0, in background threads for a `with` block.

Every test that needs a network peer uses this one server (stdlib only, so benchmarks may too):

    with serve() as server:
        url = server.add("/story", "<html>...</html>")      # 200 text/html, returns the URL
        server.route("/slow", Response(200, b"late", delay=3))
        server.route("/api", lambda request: json_response({"q": request.param("q")}))
        ...
        assert server.seen == ["/robots.txt", "/story"]    # request targets, in arrival order

Requests go to a route by method and path (the query string does not select a route; a path
ending in `*` matches by prefix), else to the server's default (404). A route answers with a
`Response` or a handler that returns one. Every request is recorded (method, target, path, query,
headers, body) before it is answered. A `Response` can wait before answering, send its body in
chunks with pauses (trickling), leave out Content-Length, declare a wrong one, cut the body short
or hang up without answering, so a client's defences face the real thing.

The server speaks HTTP/1.0: one request per connection, and a body without Content-Length ends
when the connection closes. Waits end early when the block ends, and the server waits (briefly)
for its handler threads, so no answer outlives its test.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit

HTML = "text/html; charset=utf-8"
TEXT = "text/plain; charset=utf-8"
JSON = "application/json"


@dataclass(frozen=True)
class Request:
    """One request as the server received it."""

    method: str
    target: str  # as sent: path and query string
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
        """Return the body decoded as JSON."""
        return json.loads(self.body)


@dataclass(frozen=True)
class Response:
    """One answer: status, body and headers, and how (badly) to deliver them."""

    status: int = 200
    body: bytes | str | Sequence[bytes] = b""  # a sequence is sent chunk by chunk
    content_type: str | None = None  # None: no Content-Type header
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds of silence before the status line
    pause: float = 0.0  # seconds between chunks, each flushed: a trickle
    content_length: bool = True  # declare the length of a bytes or str body (unless headers do)
    cut_after: int | None = None  # close the connection after this many body bytes
    hang_up: bool = False  # close the connection without answering at all

    def chunks(self) -> Sequence[bytes]:
        """Return the body as the chunks to send."""
        if isinstance(self.body, str):
            return (self.body.encode("utf-8"),)
        if isinstance(self.body, bytes):
            return (self.body,)
        return self.body

    def header_lines(self) -> list[tuple[str, str]]:
        """Return the headers to send, Content-Type and Content-Length included."""
        lines = [] if self.content_type is None else [("Content-Type", self.content_type)]
        lines += [(name, value) for name, value in self.headers.items()]
        declared = any(name.lower() == "content-length" for name, _ in lines)
        if self.content_length and not declared and isinstance(self.body, bytes | str):
            lines.append(("Content-Length", str(sum(len(c) for c in self.chunks()))))
        return lines


Handler = Callable[[Request], Response]
Answer = Response | Handler


def html(body: bytes | str, status: int = 200, **options: Any) -> Response:
    """Return an HTML answer."""
    return Response(status, body, HTML, **options)


def text(body: bytes | str, status: int = 200, **options: Any) -> Response:
    """Return a plain-text answer."""
    return Response(status, body, TEXT, **options)


def json_response(value: Any, status: int = 200, **options: Any) -> Response:
    """Return value JSON-encoded."""
    return Response(status, json.dumps(value), JSON, **options)


def redirect(location: str, status: int = 302) -> Response:
    """Return a redirect to location."""
    return Response(status, b"", headers={"Location": location})


def repeat(block: bytes, times: int) -> Sequence[bytes]:
    """Return a body of block sent times over, one chunk each (cheap however long)."""
    return (block,) * times


NOT_FOUND = Response(404, b"not found", TEXT)


class LocalServer:
    """The server: routes, the requests it saw, and how many it answered at once."""

    def __init__(self, host: str = "127.0.0.1", *, default: Answer = NOT_FOUND) -> None:
        self.default = default
        self.requests: list[Request] = []  # live: tests may poll it while requests arrive
        self.closing = threading.Event()
        self.in_flight = 0
        self.max_in_flight = 0
        self._routes: dict[tuple[str, str], Answer] = {}
        self._lock = threading.Lock()
        self._httpd = _HTTPServer(host, self)  # binds now: an unusable host fails here
        self._thread: threading.Thread | None = None
        self.host = host
        self.port: int = self._httpd.server_address[1]
        self.base = f"http://{host}:{self.port}"

    # --- routes ---------------------------------------------------------------------------

    def route(self, path: str, answer: Answer, *, method: str = "GET") -> str:
        """Answer method requests for path (prefix if it ends in *; method * is any); return
        the URL."""
        with self._lock:
            self._routes[(method.upper(), path)] = answer
        return self.url(path.rstrip("*"))

    def unroute(self, path: str, *, method: str = "GET") -> None:
        """Stop answering path: it falls through to the default."""
        with self._lock:
            del self._routes[(method.upper(), path)]

    def add(self, path: str, body: bytes | str, content_type: str = HTML) -> str:
        """Serve body at path with status 200; return its URL."""
        return self.route(path, Response(200, body, content_type))

    def url(self, path: str) -> str:
        """Return the full URL of path on this server."""
        return f"{self.base}{path}"

    def reset(self) -> None:
        """Forget every route and every request seen."""
        with self._lock:
            self._routes.clear()
        self.forget()

    def forget(self) -> None:
        """Forget the requests seen so far."""
        self.requests.clear()

    def answer_for(self, request: Request) -> Response:
        """Return the response to request (exact path first, then the longest prefix)."""
        with self._lock:
            routes = dict(self._routes)
        for method in (request.method, "*"):
            if (method, request.path) in routes:
                return _respond(routes[(method, request.path)], request)
        prefixes = [
            (len(path), answer)
            for (method, path), answer in routes.items()
            if method in (request.method, "*")
            and path.endswith("*")
            and request.path.startswith(path[:-1])
        ]
        if prefixes:
            return _respond(max(prefixes, key=lambda item: item[0])[1], request)
        return _respond(self.default, request)

    # --- what it saw ----------------------------------------------------------------------

    @property
    def seen(self) -> list[str]:
        """Return the targets (path and query) of the requests seen, in arrival order."""
        return [request.target for request in self.requests]

    def wait(self, seconds: float) -> bool:
        """Sleep for seconds unless the server is closing; return whether it is closing."""
        return self.closing.wait(seconds)

    def record(self, request: Request) -> None:
        """Note a request as seen and in flight."""
        with self._lock:
            self.requests.append(request)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def done(self) -> None:
        """Note a request as answered."""
        with self._lock:
            self.in_flight -= 1

    # --- running --------------------------------------------------------------------------

    def start(self) -> Self:
        """Serve in a background thread."""
        # a short poll interval: shutdown() waits up to one, and tests start many servers
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, args=(0.01,), name=f"serve {self.base}", daemon=True
        )
        self._thread.start()
        return self

    def stop(self, *, grace: float = 5.0) -> None:
        """Wake every waiting answer, stop serving, and wait up to grace for the handlers."""
        self.closing.set()
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
        self._httpd.server_close()
        self._httpd.hang_up_idle()  # a kept-alive connection waiting for its next request
        start = time.monotonic()
        for cut in (False, True):
            if cut:  # an answer still going after a second is written to a client gone quiet
                self._httpd.hang_up_all()
            deadline = start + (grace if cut else min(grace, 1.0))
            for thread in self._httpd.handler_threads():
                thread.join(max(0.0, deadline - time.monotonic()))

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


@contextlib.contextmanager
def serve(host: str = "127.0.0.1", *, default: Answer = NOT_FOUND) -> Iterator[LocalServer]:
    """Run a LocalServer on host until the block ends."""
    with LocalServer(host, default=default) as server:
        yield server


def _respond(answer: Answer, request: Request) -> Response:
    return answer if isinstance(answer, Response) else answer(request)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # concurrency tests open many connections at once

    def __init__(self, host: str, owner: LocalServer) -> None:
        super().__init__((host, 0), _Exchange)
        self.owner = owner
        self._handlers: list[threading.Thread] = []
        self._handlers_lock = threading.Lock()
        self._idle: set[socket.socket] = set()  # connections between requests
        self._open: set[socket.socket] = set()  # every connection not yet closed
        self._stopping = False

    def process_request(self, request: Any, client_address: Any) -> None:
        # ThreadingMixIn does not keep daemon threads; keep them so stop() can wait for them.
        thread = threading.Thread(
            target=self.process_request_thread, args=(request, client_address), daemon=True
        )
        with self._handlers_lock:
            self._handlers = [t for t in self._handlers if t.is_alive()]
            self._handlers.append(thread)
            self._open.add(request)
        thread.start()

    def shutdown_request(self, request: Any) -> None:
        with self._handlers_lock:
            self._open.discard(request)
        super().shutdown_request(request)

    def handler_threads(self) -> list[threading.Thread]:
        with self._handlers_lock:
            return list(self._handlers)

    def waiting(self, connection: socket.socket, idle: bool) -> bool:
        """Note a connection as waiting for a request (or not); False once stopping."""
        with self._handlers_lock:
            if idle:
                self._idle.add(connection)
            else:
                self._idle.discard(connection)
            return not self._stopping

    def hang_up_all(self) -> None:
        """End every connection still open (its handler's next read or write fails)."""
        with self._handlers_lock:
            connections = list(self._open)
        _hang_up(connections)

    def hang_up_idle(self) -> None:
        """End the connections that wait for a next request: no answer is cut short, and
        their handlers need not wait out a client's keep-alive."""
        with self._handlers_lock:
            self._stopping = True
            idle, self._idle = list(self._idle), set()
        _hang_up(idle)


def _hang_up(connections: list[socket.socket]) -> None:
    """Shut both ways of each connection: its handler's next read or write fails."""
    for connection in connections:
        with contextlib.suppress(OSError):
            connection.shutdown(socket.SHUT_RDWR)


class _Exchange(BaseHTTPRequestHandler):
    server: _HTTPServer
    timeout = 30  # a peer that neither sends nor reads cannot hold a thread forever

    def log_message(self, format: str, *args: object) -> None:
        pass  # keep test output clean

    def handle_one_request(self) -> None:
        # Route every method through one place (BaseHTTPRequestHandler wants do_<METHOD>).
        try:
            if not self.server.waiting(self.connection, True):
                self.close_connection = True
                return
            try:
                self.raw_requestline = self.rfile.readline(65537)
            finally:
                self.server.waiting(self.connection, False)
            if not self.raw_requestline or not self.parse_request():
                self.close_connection = True
                return
            self.exchange()
            self.wfile.flush()
        except OSError:  # the client went away: no one to answer
            self.close_connection = True

    def exchange(self) -> None:
        owner = self.server.owner
        parts = urlsplit(self.path)
        request = Request(
            method=self.command,
            target=self.path,
            path=parts.path,
            query=parse_qs(parts.query, keep_blank_values=True),
            headers={name.lower(): value for name, value in self.headers.items()},
            body=self.read_body(),
        )
        owner.record(request)
        try:
            self.send(owner.answer_for(request), owner)
        finally:
            owner.done()

    def read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            parts = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            while self.rfile.readline().strip():  # trailers, up to the blank line
                pass
            return b"".join(parts)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def send(self, response: Response, owner: LocalServer) -> None:
        if response.delay and owner.wait(response.delay):
            self.hang_up()  # the test is over: nobody waits for this answer any more
            return
        if response.hang_up:
            self.hang_up()
            return
        self.send_response(response.status)
        for name, value in response.header_lines():
            self.send_header(name, value)
        self.end_headers()
        if self.command == "HEAD":
            return
        budget = response.cut_after
        for chunk in response.chunks():
            if budget is not None and len(chunk) >= budget:
                self.wfile.write(chunk[:budget])
                self.hang_up()
                return
            self.wfile.write(chunk)
            if budget is not None:
                budget -= len(chunk)
            if response.pause:
                self.wfile.flush()
                if owner.wait(response.pause):
                    self.hang_up()
                    return
        if budget is not None:
            self.hang_up()

    def hang_up(self) -> None:
        self.wfile.flush()
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)
