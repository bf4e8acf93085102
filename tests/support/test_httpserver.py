"""The local HTTP test server: routing, recording, and the misbehaviours it can put on."""

from __future__ import annotations

import contextlib
import socket
import threading
import time

import httpx
import pytest

from tests.support.httpserver import (
    Request,
    Response,
    json_response,
    redirect,
    repeat,
    serve,
    text,
)


def _raw_get(port: int, path: str, host: str = "127.0.0.1") -> bytes:
    """Return every byte the server sends for a GET of path, up to its close."""
    with socket.create_connection((host, port), timeout=5) as conn:
        conn.sendall(f"GET {path} HTTP/1.0\r\nHost: x\r\n\r\n".encode())
        received = b""
        while chunk := conn.recv(65536):
            received += chunk
    return received


def test_routes_by_method_and_path_and_records_every_request() -> None:
    with serve() as server:
        url = server.add("/page", "<p>hi</p>")
        server.route(
            "/api", lambda r: json_response({"got": r.json(), "q": r.param("q")}), method="POST"
        )
        server.route("/files/*", lambda r: text(r.path))
        server.route("/files/special", text("exact"))

        page = httpx.get(url + "?ignored=1")
        posted = httpx.post(server.url("/api?q=x"), json={"a": 1}, headers={"X-Test": "yes"})
        prefixed = httpx.get(server.url("/files/a/b"))
        exact = httpx.get(server.url("/files/special"))
        wrong_method = httpx.post(url)
        missing = httpx.get(server.url("/nowhere"))

    assert (page.status_code, page.text, page.headers["content-type"]) == (
        200,
        "<p>hi</p>",
        "text/html; charset=utf-8",
    )
    assert posted.json() == {"got": {"a": 1}, "q": "x"}
    assert (prefixed.text, exact.text) == ("/files/a/b", "exact")
    assert wrong_method.status_code == missing.status_code == 404
    assert server.seen == [
        "/page?ignored=1",
        "/api?q=x",
        "/files/a/b",
        "/files/special",
        "/page",
        "/nowhere",
    ]
    api = server.requests[1]
    assert (api.method, api.path, api.query) == ("POST", "/api", {"q": ["x"]})
    assert api.headers["x-test"] == "yes" and api.json() == {"a": 1}


def test_status_headers_redirects_and_unrouting() -> None:
    with serve() as server:
        server.route("/teapot", Response(418, b"short", "text/plain", {"Retry-After": "7"}))
        server.route("/old", redirect("/new", 301))
        server.add("/new", "arrived")
        teapot = httpx.get(server.url("/teapot"))
        moved = httpx.get(server.url("/old"), follow_redirects=True)
        server.unroute("/new")
        gone = httpx.get(server.url("/new"))

    assert (teapot.status_code, teapot.headers["retry-after"], teapot.text) == (418, "7", "short")
    assert teapot.headers["content-length"] == "5"
    assert moved.text == "arrived" and [r.status_code for r in moved.history] == [301]
    assert gone.status_code == 404


def test_a_chunked_request_body_is_read() -> None:
    with serve() as server:
        server.route("/up", lambda r: text(r.body), method="PUT")
        sent = httpx.put(server.url("/up"), content=iter([b"one ", b"two"]))
    assert sent.text == "one two"
    assert server.requests[0].headers.get("transfer-encoding") == "chunked"


def test_bodies_without_length_end_at_close_and_wrong_lengths_are_sent_as_given() -> None:
    with serve() as server:
        server.route("/open", Response(200, b"x" * 1000, content_length=False))
        server.route("/lying", Response(200, b"abc", headers={"Content-Length": "9999"}))
        server.route("/chunks", Response(200, repeat(b"ab", 3)))
        open_ended = _raw_get(server.port, "/open")
        lying = _raw_get(server.port, "/lying")
        chunks = _raw_get(server.port, "/chunks")

    head, body = open_ended.split(b"\r\n\r\n", 1)
    assert b"content-length" not in head.lower() and body == b"x" * 1000
    assert b"Content-Length: 9999" in lying and lying.endswith(b"\r\n\r\nabc")
    assert b"content-length" not in chunks.lower() and chunks.endswith(b"\r\n\r\nababab")


def test_delay_trickle_cut_and_hang_up() -> None:
    with serve() as server:
        server.route("/late", Response(200, b"late", delay=0.3))
        server.route("/trickle", Response(200, repeat(b"<", 5), pause=0.1))
        server.route("/cut", Response(200, b"0123456789", cut_after=4))
        server.route("/gone", Response(hang_up=True))

        started = time.monotonic()
        assert httpx.get(server.url("/late")).text == "late"
        late = time.monotonic() - started
        started = time.monotonic()
        trickled = _raw_get(server.port, "/trickle")
        trickle = time.monotonic() - started
        cut = _raw_get(server.port, "/cut")
        with pytest.raises(httpx.RemoteProtocolError):
            httpx.get(server.url("/cut"))  # declared 10 bytes, sent 4
        with pytest.raises(httpx.RemoteProtocolError):
            httpx.get(server.url("/gone"))

    assert late >= 0.3 and trickle >= 0.4
    assert trickled.endswith(b"\r\n\r\n<<<<<")
    assert b"Content-Length: 10" in cut and cut.endswith(b"\r\n\r\n0123")
    assert server.seen.count("/gone") == 1


def test_leaving_the_block_ends_waits_and_handler_threads() -> None:
    with serve() as server:
        server.route("/stall", Response(200, b"never", delay=60))
        server.route("/drip", Response(200, repeat(b".", 600), pause=0.1))
        clients = [
            threading.Thread(target=_swallow, args=(server.url(p),)) for p in ("/stall", "/drip")
        ]
        for client in clients:
            client.start()
        while len(server.requests) < 2:
            time.sleep(0.01)
        started = time.monotonic()
    stopping = time.monotonic() - started
    for client in clients:
        client.join(5)

    assert stopping < 2, stopping
    assert not any(client.is_alive() for client in clients)
    assert server.in_flight == 0 and server.max_in_flight == 2


def _swallow(url: str) -> None:
    with contextlib.suppress(httpx.HTTPError):  # the server hangs up on stopping, as it should
        httpx.get(url, timeout=10)


def test_handlers_see_each_request_and_in_flight_is_counted() -> None:
    release = threading.Event()

    def hold(request: Request) -> Response:
        release.wait(5)
        return text(request.headers["host"])

    with serve() as server:
        server.route("/hold", hold)
        results: list[str] = []
        threads = [
            threading.Thread(target=lambda: results.append(httpx.get(server.url("/hold")).text))
            for _ in range(3)
        ]
        for thread in threads:
            thread.start()
        while server.in_flight < 3:
            time.sleep(0.01)
        release.set()
        for thread in threads:
            thread.join(5)

    assert results == [f"127.0.0.1:{server.port}"] * 3
    assert server.max_in_flight == 3 and server.in_flight == 0


def test_reset_forgets_routes_and_requests_and_other_hosts_bind() -> None:
    with serve() as server:
        server.add("/a", "a")
        httpx.get(server.url("/a"))
        server.reset()
        assert server.seen == []
        assert httpx.get(server.url("/a")).status_code == 404
    try:
        with serve("127.0.0.2") as other:
            other.add("/b", "b")
            assert httpx.get(other.url("/b")).text == "b"
            assert other.base == f"http://127.0.0.2:{other.port}"
    except OSError as exc:  # not every OS routes all of 127/8 to loopback
        pytest.skip(f"cannot bind 127.0.0.2: {exc}")
