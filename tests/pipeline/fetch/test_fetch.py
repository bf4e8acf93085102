"""The SSRF-safe fetcher against a real HTTP server on loopback (port 0).

Names are resolved by an injected resolver; traffic only ever goes to 127.0.0.x. A recording
transport (the real httpx transport, wrapped) shows that refused hops are never sent.
"""

from __future__ import annotations

import codecs
import re
import socket
import time
import zlib
from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest

from pipeline.errors import FetchError, UnsafeURLError
from pipeline.fetch.fetcher import (
    FetchedPage,
    Fetcher,
    FetchPolicy,
    Resolver,
    check_url,
    is_public_address,
)
from tests.support.httpserver import LocalServer, Request, Response, redirect, repeat, serve

HTML_PAGE = (
    b"<!DOCTYPE html><html><head><title>Loopback</title></head>"
    b"<body><p>Hello from the test server.</p></body></html>"
)
LATIN1_PAGE = (
    "<html><head><title>Crème brûlée</title></head><body><p>Le café de la gare sert une "
    "crème brûlée délicieuse à côté du théâtre, été comme hiver.</p></body></html>"
).encode("latin-1")


def _gzip_bomb() -> bytes:
    """Return 100 MB of zeros, gzipped (about 100 kB)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(1 << 20)
    return b"".join([packer.compress(block) for _ in range(100)] + [packer.flush()])


HTML = "text/html; charset=utf-8"


def _redirect(request: Request) -> Response:
    hops = int(request.path.rsplit("/", 1)[1])
    target = request.query["to"][0]
    location = target if hops == 0 else f"/redirect/{hops - 1}?to={quote(target)}"
    return redirect(location)


def _deflated(body: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)  # raw deflate, no zlib header
    return packer.compress(body) + packer.flush()


def _routes(server: LocalServer, bomb: bytes) -> None:
    """Serve every case the fetcher must handle; HTTP/1.0, so bodies may end at close."""
    server.add("/page", HTML_PAGE)
    server.route("/host", lambda request: Response(200, request.headers["host"], "text/plain"))
    server.route("/redirect/*", _redirect)
    server.route("/loop", redirect("/loop", 301))
    server.route("/latin1", Response(200, LATIN1_PAGE, HTML, content_length=False))
    server.route("/png", Response(200, b"\x89PNG\r\n\x1a\n" + bytes(64), "image/png"))
    for status in (404, 500):
        server.route(f"/{status}", Response(status, b"<html>error</html>", HTML))
    gzip = {"Content-Encoding": "gzip"}
    server.route("/bomb", Response(200, bomb, HTML, gzip, content_length=False))
    server.route("/gzip", Response(200, zlib.compress(HTML_PAGE, wbits=31), HTML, gzip))
    deflate = {"Content-Encoding": "deflate"}
    server.route("/deflate", Response(200, _deflated(HTML_PAGE), HTML, deflate))
    big = b"<html>" + b"x" * 2_000_000
    server.route("/big", Response(200, big, HTML, content_length=False))
    server.route("/big-declared", Response(200, b"<html>", HTML, {"Content-Length": "50000000"}))
    server.route("/no-type-html", Response(200, b"  <!doctype html><html><body>hi</body></html>"))
    server.route("/no-type-binary", Response(200, b"\x00\x01\x02 binary"))
    # 5 s in all, far beyond the test's total timeout
    # 400 bytes a 0.05 s pause apart: 20 s of trickling, ended by the fetcher's timeout.
    server.route("/trickle", Response(200, repeat(b"<", 400), "text/html", pause=0.05))


def _serve(host: str, bomb: bytes) -> Iterator[LocalServer]:
    with serve(host) as server:
        _routes(server, bomb)
        yield server


@pytest.fixture(scope="module")
def bomb() -> bytes:
    return _gzip_bomb()


@pytest.fixture(scope="module")
def server(bomb: bytes) -> Iterator[LocalServer]:
    yield from _serve("127.0.0.1", bomb)


@pytest.fixture(scope="module")
def second_server(bomb: bytes) -> Iterator[LocalServer]:
    """A server on 127.0.0.2: allowed by a narrow policy while 127.0.0.1 stays refused."""
    try:
        yield from _serve("127.0.0.2", bomb)
    except OSError as exc:  # not every OS routes all of 127/8 to loopback
        pytest.skip(f"cannot bind 127.0.0.2: {exc}")


class RecordingTransport(httpx.AsyncHTTPTransport):
    """The real transport, noting the URL of every request actually sent."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(str(request.url))
        return await super().handle_async_request(request)


def resolver_for(table: dict[str, list[str]]) -> Resolver:
    async def resolve(host: str, port: int) -> list[str]:
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return table[host]

    return resolve


LOOPBACK = FetchPolicy(allow_private=True)


# --- the good paths ------------------------------------------------------------------------


async def test_fetches_a_page(server: LocalServer) -> None:
    async with Fetcher(LOOPBACK) as fetcher:
        page = await fetcher.fetch(f"{server.base}/page")

    assert page.status == 200
    assert page.url == page.requested_url == f"{server.base}/page"
    assert page.content_type == "text/html"
    assert page.charset == "utf-8"
    assert page.body == HTML_PAGE
    assert page.redirects == ()
    assert "Hello from the test server." in page.text()


async def test_connects_to_the_vetted_address_and_keeps_the_host_header(
    server: LocalServer,
) -> None:
    port = server.port
    transport = RecordingTransport()
    resolver = resolver_for({"news.test": ["127.0.0.1"]})
    async with Fetcher(LOOPBACK, resolver=resolver, transport=transport) as fetcher:
        page = await fetcher.fetch(f"http://news.test:{port}/host")

    assert page.text() == f"news.test:{port}"
    assert page.url == f"http://news.test:{port}/host"
    # robots.txt first, through the same vetted address.
    base = f"http://127.0.0.1:{port}"
    assert transport.sent == [f"{base}/robots.txt", f"{base}/host"]


async def test_follows_a_redirect_chain(server: LocalServer) -> None:
    start = f"{server.base}/redirect/2?to={quote(server.base + '/page')}"
    async with Fetcher(LOOPBACK) as fetcher:
        page = await fetcher.fetch(start)

    assert page.url == f"{server.base}/page"
    assert page.requested_url == start
    assert len(page.redirects) == 3
    assert page.redirects[0] == start
    assert page.body == HTML_PAGE


@pytest.mark.parametrize("path", ["/gzip", "/deflate"])
async def test_decodes_compressed_bodies(server: LocalServer, path: str) -> None:
    async with Fetcher(LOOPBACK) as fetcher:
        page = await fetcher.fetch(server.base + path)
    assert page.body == HTML_PAGE


async def test_untyped_html_is_sniffed(server: LocalServer) -> None:
    async with Fetcher(LOOPBACK) as fetcher:
        page = await fetcher.fetch(f"{server.base}/no-type-html")
        with pytest.raises(FetchError, match="no content type"):
            await fetcher.fetch(f"{server.base}/no-type-binary")
    assert page.content_type == "text/html"


async def test_wrong_charset_declaration_does_not_crash(server: LocalServer) -> None:
    async with Fetcher(LOOPBACK) as fetcher:
        page = await fetcher.fetch(f"{server.base}/latin1")

    assert page.charset == "utf-8"
    assert "crème brûlée délicieuse" in page.text()


def test_text_decoding_fallbacks() -> None:
    def text(body: bytes, charset: str | None) -> str:
        return FetchedPage("u", "u", 200, "text/html", charset, body, ()).text()

    assert text("héllo".encode("cp1252"), "windows-1252") == "héllo"
    assert text(codecs.BOM_UTF8 + "héllo".encode(), "iso-8859-1") == "héllo"
    assert text("héllo".encode(), "x-no-such-charset") == "héllo"
    assert text("héllo".encode(), "rot13") == "héllo"  # a codec, but not a text encoding
    meta = '<meta charset="koi8-r"><p>привет мир</p>'.encode("koi8-r")
    assert "привет мир" in text(meta, None)
    assert isinstance(text(bytes(range(256)), "utf-8"), str)
    assert text("café".encode(), "windows-1252") == "café"  # valid UTF-8 beats a wrong label
    assert text("日本語".encode("iso2022_jp"), "iso-2022-jp") == "日本語"  # 7-bit, yet not UTF-8
    assert text("<p>Île Verte</p>".encode("latin-1"), "utf-8") == "<p>Île Verte</p>"


# --- refusals and failures on the network ----------------------------------------------------


async def test_redirect_to_a_private_name_is_refused_before_connecting(server: LocalServer) -> None:
    port = server.port
    transport = RecordingTransport()
    resolver = resolver_for({"site.test": ["127.0.0.1"], "evil.test": ["10.1.2.3"]})
    policy = FetchPolicy(allowed_networks=("127.0.0.1/32",))
    start = f"http://site.test:{port}/redirect/0?to={quote(f'http://evil.test:{port}/page')}"

    async with Fetcher(policy, resolver=resolver, transport=transport) as fetcher:
        with pytest.raises(UnsafeURLError, match=re.escape("10.1.2.3")) as caught:
            await fetcher.fetch(start)

    assert caught.value.url == f"http://evil.test:{port}/page"
    # Not even evil.test's robots.txt is asked for: the hop is vetted first.
    assert transport.sent == [
        f"http://127.0.0.1:{port}/robots.txt",
        f"http://127.0.0.1:{port}/redirect/0?to={quote(caught.value.url)}",
    ]


async def test_redirect_chain_ending_at_loopback_is_refused(
    server: LocalServer, second_server: LocalServer
) -> None:
    transport = RecordingTransport()
    policy = FetchPolicy(allowed_networks=("127.0.0.2/32",))
    start = f"{second_server.base}/redirect/2?to={quote(server.base + '/page')}"
    before = list(server.seen)

    async with Fetcher(policy, transport=transport) as fetcher:
        with pytest.raises(UnsafeURLError, match=re.escape("127.0.0.1")):
            await fetcher.fetch(start)

    assert len(transport.sent) == 4  # robots.txt and three hops on 127.0.0.2, none on 127.0.0.1
    assert all(url.startswith(second_server.base) for url in transport.sent)
    assert server.seen == before


async def test_too_many_redirects(server: LocalServer) -> None:
    async with Fetcher(FetchPolicy(allow_private=True, max_redirects=3)) as fetcher:
        with pytest.raises(FetchError, match="more than 3 redirects"):
            await fetcher.fetch(f"{server.base}/loop")


async def test_gzip_bomb_is_stopped_at_the_cap(server: LocalServer) -> None:
    async with Fetcher(FetchPolicy(allow_private=True, max_bytes=1_000_000)) as fetcher:
        with pytest.raises(FetchError, match="larger than 1000000 bytes"):
            await fetcher.fetch(f"{server.base}/bomb")


async def test_body_over_the_cap_without_content_length(server: LocalServer) -> None:
    async with Fetcher(FetchPolicy(allow_private=True, max_bytes=1_000_000)) as fetcher:
        with pytest.raises(FetchError, match="larger than"):
            await fetcher.fetch(f"{server.base}/big")


async def test_declared_length_over_the_cap_is_refused_up_front(server: LocalServer) -> None:
    async with Fetcher(LOOPBACK) as fetcher:
        with pytest.raises(FetchError, match="declares 50000000 bytes"):
            await fetcher.fetch(f"{server.base}/big-declared")


async def test_total_timeout_bounds_a_trickling_server(server: LocalServer) -> None:
    started = time.monotonic()
    async with Fetcher(FetchPolicy(allow_private=True, total_timeout=0.5)) as fetcher:
        with pytest.raises(FetchError, match=re.escape("took longer than 0.5s")):
            await fetcher.fetch(f"{server.base}/trickle")
    # The 0.5 s total timeout ended it, long before the server's 20 s (a generous bound for a
    # machine loaded by a parallel test run).
    assert time.monotonic() - started < 10.0


async def test_content_type_not_accepted(server: LocalServer) -> None:
    async with Fetcher(LOOPBACK) as fetcher:
        with pytest.raises(FetchError, match="image/png"):
            await fetcher.fetch(f"{server.base}/png")


@pytest.mark.parametrize("status", [404, 500])
async def test_error_statuses(server: LocalServer, status: int) -> None:
    async with Fetcher(LOOPBACK) as fetcher:
        with pytest.raises(FetchError) as caught:
            await fetcher.fetch(f"{server.base}/{status}")
    assert caught.value.status == status


async def test_connection_refused_and_unresolvable_names_are_fetch_errors() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with Fetcher(LOOPBACK, resolver=resolver_for({})) as fetcher:
        with pytest.raises(FetchError, match="cannot connect"):
            await fetcher.fetch(f"http://127.0.0.1:{port}/")
        with pytest.raises(FetchError, match="cannot resolve"):
            await fetcher.fetch("http://no-such-host.test/")


# --- the default policy ----------------------------------------------------------------------


async def test_default_policy_refuses_loopback_and_other_schemes(server: LocalServer) -> None:
    port = server.port
    transport = RecordingTransport()
    async with Fetcher(transport=transport) as fetcher:
        for url in (
            f"http://127.0.0.1:{port}/page",
            f"http://localhost:{port}/page",  # the real resolver
            f"http://[::1]:{port}/page",
            "file:///etc/passwd",
            "ftp://example.com/file.txt",
        ):
            with pytest.raises(UnsafeURLError):
                await fetcher.fetch(url)
    assert transport.sent == []


@pytest.mark.parametrize(
    "addresses",
    [
        ["10.0.0.5"],
        ["169.254.169.254"],
        ["100.64.1.1"],
        ["fd00::1"],
        ["::ffff:127.0.0.1"],
        ["93.184.216.34", "192.168.1.1"],  # one bad address is enough
    ],
)
async def test_default_policy_refuses_names_resolving_to_private_addresses(
    addresses: list[str],
) -> None:
    transport = RecordingTransport()
    resolver = resolver_for({"sneaky.test": addresses})
    async with Fetcher(resolver=resolver, transport=transport) as fetcher:
        with pytest.raises(UnsafeURLError, match="non-public address"):
            await fetcher.fetch("http://sneaky.test/")
    assert transport.sent == []


async def test_https_dials_the_address_with_the_name_for_tls_and_rechecks_each_hop() -> None:
    """A mock transport stands in for the internet; the second DNS answer rebinds."""
    answers = iter([["93.184.216.34"], ["10.0.0.1"]])
    seen: list[tuple[str, str, object]] = []

    async def rebinding(host: str, port: int) -> list[str]:
        return next(answers)

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(
            (str(request.url), request.headers["host"], request.extensions.get("sni_hostname"))
        )
        return httpx.Response(302, headers={"Location": "/next"})

    transport = httpx.MockTransport(handler)
    no_robots = FetchPolicy(respect_robots=False)  # the handler redirects robots.txt too
    async with Fetcher(no_robots, resolver=rebinding, transport=transport) as fetcher:
        with pytest.raises(UnsafeURLError, match=re.escape("10.0.0.1")):
            await fetcher.fetch("https://news.example/first")

    assert seen == [("https://93.184.216.34/first", "news.example", "news.example")]


# --- pure checks -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://example.com/",
        "gopher://example.com/",
        "javascript:alert(1)",
        "data:text/html,hi",
        "//example.com/path",
        "http:///path",
        "https://user:pass@example.com/",
        "https://example.com:0/",
        "http://example.com:99999/",
        "https://example.com/" + "a" * 2100,
        "http://exa mple.com/",
    ],
)
def test_check_url_refuses(url: str) -> None:
    with pytest.raises(UnsafeURLError):
        check_url(url)


def test_check_url_accepts_http_and_https() -> None:
    assert check_url("https://Example.COM:8443/a?b=c").host == "example.com"
    assert check_url("http://example.com").scheme == "http"


@pytest.mark.parametrize(
    "ip",
    [
        "127.0.0.1",
        "127.1.2.3",
        "10.0.0.5",
        "172.16.0.1",
        "172.31.255.255",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.1.1",
        "0.0.0.0",
        "0.1.2.3",
        "255.255.255.255",
        "224.0.0.1",
        "240.0.0.1",
        "::1",
        "::",
        "fe80::1",
        "fd00::1",
        "fc00::1",
        "ff02::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "::127.0.0.1",
        "2002:7f00:1::",  # 6to4 around 127.0.0.1
        "2002:a00:1::",  # 6to4 around 10.0.0.1
        "64:ff9b::a00:1",  # NAT64 around 10.0.0.1
        "2001:0:4136:e378:8000:63bf:80ff:fffe",  # Teredo
        "not an address",
    ],
)
def test_non_public_addresses(ip: str) -> None:
    assert not is_public_address(ip)


@pytest.mark.parametrize(
    "ip", ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"]
)
def test_public_addresses(ip: str) -> None:
    assert is_public_address(ip)
