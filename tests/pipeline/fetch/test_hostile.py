"""Hostile servers and pages, as one table: every case must be refused.

The server listens on 127.0.0.2 and the policy lets only 127.0.0.2/32 through, so a redirect to
127.0.0.1 (or a name resolving to a private address) is a real escape attempt. Each case goes
through fetch and extraction as the pipeline does; a case passes when it is refused with the
expected error. The table and the refused fraction are printed (run this file to quote them):

    .venv/bin/pytest tests/pipeline/fetch/test_hostile.py -q
"""

from __future__ import annotations

import socket
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import quote

import httpx
import pytest

from pipeline.errors import ExtractionError, FetchError, RobotsDisallowedError, UnsafeURLError
from pipeline.fetch.extract import extract_document
from pipeline.fetch.fetcher import Fetcher, FetchPolicy, resolve_host
from tests.conftest import FIXTURES
from tests.support.httpserver import LocalServer, Request, Response, redirect, repeat

PAGES = FIXTURES / "pages"
HOST = "127.0.0.2"
FIFTY_MB = 50 * 1024 * 1024
ARTICLE = (
    "<html><head><title>Readable</title></head><body><article>"
    "<p>The harbour council met on Tuesday to discuss the new ferry timetable for the summer.</p>"
    "<p>Residents of Île Verte asked for an earlier crossing so that commuters reach the café "
    "district before eight.</p><p>The operator said a later evening sailing would cost more "
    "fuel but agreed to try it for three months.</p><p>A decision is expected in June, after "
    "a survey of passengers on both routes.</p></article></body></html>"
)
Refusal = type[UnsafeURLError] | type[FetchError] | type[ExtractionError]


@dataclass(frozen=True)
class Case:
    name: str
    path: str  # on the hostile server, or a full URL; {base} and {port} are filled in
    refused_with: Refusal


def _to(target: str, hops: int = 1) -> str:
    return f"/chain/{hops}?to={quote(target)}"


CASES = [
    Case("redirect chain to 127.0.0.1", _to("http://127.0.0.1:{port}/page", 3), UnsafeURLError),
    Case("redirect to localhost", _to("http://localhost:{port}/page"), UnsafeURLError),
    Case("redirect to a name in 10.0.0.0/8", _to("http://intranet.test/admin"), UnsafeURLError),
    Case("name with a public and a 10/8 address", "http://mixed.test/", UnsafeURLError),
    Case("IPv6 loopback [::1]", "http://[::1]:{port}/page", UnsafeURLError),
    Case("redirect to [::1]", _to("http://[::1]:{port}/page"), UnsafeURLError),
    Case("redirect to [::ffff:127.0.0.1]", _to("http://[::ffff:127.0.0.1]/"), UnsafeURLError),
    Case("redirect to 169.254.169.254", _to("http://169.254.169.254/latest/"), UnsafeURLError),
    Case("redirect to decimal 2130706433", _to("http://2130706433:{port}/"), UnsafeURLError),
    Case("redirect to file:///etc/passwd", _to("file:///etc/passwd"), UnsafeURLError),
    Case("credentials in the URL", "http://user:pw@127.0.0.2:{port}/page", UnsafeURLError),
    Case("redirect loop", "/loop", FetchError),
    Case("gzip bomb (100 MB of zeros)", "/bomb", FetchError),
    Case("50 MB body, no Content-Length", "/huge", FetchError),
    Case("50 MB body with Content-Length", "/huge-declared", FetchError),
    Case("server trickling a byte at a time", "/trickle", FetchError),
    Case("server that never answers", "/stall", FetchError),
    Case("server closing the connection mid-body", "/cut", FetchError),
    Case("unsupported Content-Encoding br", "/brotli", FetchError),
    Case("image/png", "/png", FetchError),
    Case("application/pdf", "/pdf", FetchError),
    Case("untyped binary body", "/untyped", FetchError),
    Case("robots.txt disallows the path", "/private/page", RobotsDisallowedError),
    Case("redirect into a disallowed path", _to("/private/page"), RobotsDisallowedError),
    Case("Cloudflare challenge (403)", "/challenge-403", FetchError),
    Case("Cloudflare challenge (200)", "/challenge-200", ExtractionError),
    Case("paywall", "/paywall", ExtractionError),
    Case("consent wall", "/consent", ExtractionError),
    Case("malformed HTML (tag soup)", "/malformed", ExtractionError),
    Case("100,000 nested elements", "/nested", ExtractionError),
    Case("binary noise declared as UTF-8 HTML", "/noise", ExtractionError),
    Case("empty 200 response", "/empty", ExtractionError),
]

# Odd but harmless: wrong charset declarations are read correctly, not refused.
MISLABELLED = [
    ("latin-1 body declared UTF-8", "text/html; charset=utf-8", ARTICLE.encode("latin-1")),
    ("UTF-8 body declared windows-1252", "text/html; charset=windows-1252", ARTICLE.encode()),
    ("UTF-8 body declared UTF-16", "text/html; charset=utf-16", ARTICLE.encode()),
    ("UTF-16 body declared UTF-8", "text/html; charset=utf-8", ARTICLE.encode("utf-16-le")),
    ("codec that is not a text encoding", "text/html; charset=base64", ARTICLE.encode()),
    ("unknown charset", "text/html; charset=x-no-such-thing", ARTICLE.encode()),
]


def _gzip_bomb() -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(1 << 20)
    return b"".join([packer.compress(block) for _ in range(100)] + [packer.flush()])


def _page(name: str) -> bytes:
    return (PAGES / name).read_bytes()


STATIC = {
    "/robots.txt": (200, "text/plain", b"User-agent: *\nDisallow: /private\n"),
    "/png": (200, "image/png", b"\x89PNG\r\n\x1a\n" + bytes(64)),
    "/pdf": (200, "application/pdf", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"),
    "/untyped": (200, None, b"\x00\x01\x02\x03 binary"),
    "/challenge-403": (403, "text/html", _page("wall_cloudflare_challenge.html")),
    "/challenge-200": (200, "text/html", _page("wall_cloudflare_challenge.html")),
    "/paywall": (200, "text/html; charset=utf-8", _page("wall_paywall_schema.html")),
    "/consent": (200, "text/html; charset=utf-8", _page("wall_consent_onetrust.html")),
    "/malformed": (200, "text/html", b"<html><body><div><p>Click <b>here<i></div>&&<<"),
    "/nested": (200, "text/html", b"<div>" * 100_000 + b"deep" + b"</div>" * 100_000),
    "/noise": (200, "text/html; charset=utf-8", bytes(range(256)) * 64),
    "/empty": (200, "text/html", b""),
    "/page": (200, "text/html", ARTICLE.encode()),
}


def _chain(request: Request) -> Response:
    hops = int(request.path.rsplit("/", 1)[1])
    target = request.query["to"][0]
    return redirect(target if hops <= 1 else f"/chain/{hops - 1}?to={quote(target)}")


def _routes(server: LocalServer) -> None:
    """Serve every hostile case; bodies without Content-Length end when the server closes."""
    server.route("/chain/*", _chain)
    server.route("/loop", redirect("/loop", 301))
    gzip, brotli = {"Content-Encoding": "gzip"}, {"Content-Encoding": "br"}
    server.route("/bomb", Response(200, _gzip_bomb(), "text/html", gzip, content_length=False))
    server.route("/brotli", Response(200, b"\x1b\x03\x00", "text/html", brotli))
    huge = repeat(b"<p>" + b"x" * (65536 - 3), FIFTY_MB // 65536)  # no Content-Length
    server.route("/huge", Response(200, huge, "text/html"))
    declared = {"Content-Length": str(FIFTY_MB)}
    server.route("/huge-declared", Response(200, huge, "text/html", declared))
    server.route("/trickle", Response(200, repeat(b"<", 100), "text/html", pause=0.05))
    server.route("/stall", Response(200, b"late", "text/html", delay=3))
    server.route("/cut", Response(200, ARTICLE.encode(), "text/html", cut_after=200))
    for i, (_, content_type, body) in enumerate(MISLABELLED):
        server.route(f"/odd/{i}", Response(200, body, content_type))
    for path, (status, content_type, body) in STATIC.items():
        server.route(path, Response(status, body, content_type))


@pytest.fixture(scope="module")
def hostile() -> Iterator[LocalServer]:
    try:
        server = LocalServer(HOST)
    except OSError as exc:  # not every OS routes all of 127/8 to loopback
        pytest.skip(f"cannot bind {HOST}: {exc}")
    _routes(server)
    with server:
        yield server


class RecordingTransport(httpx.AsyncHTTPTransport):
    def __init__(self) -> None:
        super().__init__()
        self.sent: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(str(request.url))
        return await super().handle_async_request(request)


NAMES = {
    "intranet.test": ["10.20.30.40"],
    "mixed.test": ["93.184.216.34", "10.0.0.1"],
    "localhost": ["127.0.0.1", "::1"],
}


async def resolve(host: str, port: int) -> list[str]:
    if host in NAMES:
        return NAMES[host]
    if host.isdigit():  # a numeric host: getaddrinfo answers it without asking DNS
        return await resolve_host(host, port)
    raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")


POLICY = FetchPolicy(allowed_networks=(f"{HOST}/32",), total_timeout=1.0)


async def fetch_and_extract(fetcher: Fetcher, url: str) -> str:
    """Fetch and extract url as the pipeline does; return the first words of its text."""
    page = await fetcher.fetch(url)
    doc = extract_document(page.text(), url=page.url, domain="hostile.test", status=page.status)
    return " ".join(doc.text.split()[:8])


async def test_every_hostile_case_is_refused(
    hostile: LocalServer, capsys: pytest.CaptureFixture[str]
) -> None:
    transport = RecordingTransport()
    rows: list[tuple[str, str, str, bool]] = []
    async with Fetcher(POLICY, resolver=resolve, transport=transport) as fetcher:
        for case in CASES:
            port = str(hostile.port)
            path = case.path.replace("{port}", port).replace(quote("{port}"), port)
            url = path if "://" in path else hostile.base + path
            try:
                words = await fetch_and_extract(fetcher, url)
                outcome, refused = f"ACCEPTED: {words}", False
            except (UnsafeURLError, FetchError, ExtractionError) as exc:
                refused = isinstance(exc, case.refused_with)
                outcome = f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}"
            rows.append((case.name, case.refused_with.__name__, outcome, refused))

    fraction = sum(r[3] for r in rows) / len(rows)
    with capsys.disabled():
        print(f"\n{'case':<40} {'expected':<22} outcome")
        for name, expected, outcome, refused in rows:
            mark = "" if refused else "  <-- NOT REFUSED AS EXPECTED"
            print(f"{name:<40} {expected:<22} {outcome[:90]}{mark}")
        print(f"hostile cases refused: {sum(r[3] for r in rows)}/{len(rows)} = {fraction}")
    assert fraction == 1.0, [r for r in rows if not r[3]]
    # Nothing was ever sent anywhere but the hostile server itself.
    assert transport.sent and all(u.startswith(hostile.base + "/") for u in transport.sent)


@pytest.mark.parametrize(("name", "index"), [(m[0], i) for i, m in enumerate(MISLABELLED)])
async def test_mislabelled_charsets_are_read_correctly(
    hostile: LocalServer, name: str, index: int
) -> None:
    async with Fetcher(POLICY) as fetcher:
        words = await fetch_and_extract(fetcher, f"{hostile.base}/odd/{index}")
    assert words == "The harbour council met on Tuesday to discuss", name
    async with Fetcher(POLICY) as fetcher:
        page = await fetcher.fetch(f"{hostile.base}/odd/{index}")
    assert "Residents of Île Verte" in page.text() and "café" in page.text(), name
