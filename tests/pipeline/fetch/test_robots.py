"""robots.txt: RFC 9309 matching, the per-origin cache, and the fetcher obeying it over HTTP."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from dataclasses import replace

import pytest

from pipeline.errors import FetchError, RobotsDisallowedError, UnsafeURLError
from pipeline.fetch.fetcher import Fetcher, FetchPolicy
from pipeline.fetch.robots import (
    RobotsCache,
    RobotsRules,
    parse_robots,
    product_token,
    rules_for_status,
)
from tests.support.clock import FakeClock
from tests.support.httpserver import LocalServer, Request, Response

PAGE = b"<html><body><p>A page.</p></body></html>"


def allowed(robots: str, path: str, product: str = "factbot") -> bool:
    return parse_robots(robots, product).refusal(path) is None


# --- matching (RFC 9309) ---------------------------------------------------------------------


def test_the_longest_match_wins_whatever_the_order() -> None:
    # The standard library takes the first match: it gets both of these wrong.
    assert allowed("User-agent: *\nDisallow: /\nAllow: /public", "/public/page")
    assert not allowed("User-agent: *\nDisallow: /\nAllow: /public", "/private")
    assert not allowed("User-agent: *\nAllow: /\nDisallow: /search", "/search?q=x")
    assert allowed("User-agent: *\nAllow: /\nDisallow: /search", "/news")


def test_allow_wins_a_tie() -> None:
    assert allowed("User-agent: *\nDisallow: /page\nAllow: /page", "/page")


@pytest.mark.parametrize(
    ("rule", "path", "ok"),
    [
        ("Disallow: /*.pdf$", "/files/report.pdf", False),
        ("Disallow: /*.pdf$", "/files/report.pdf?download=1", True),
        ("Disallow: /*?sessionid=", "/a?sessionid=42", False),
        ("Disallow: /*?sessionid=", "/a?page=2", True),
        ("Disallow: /private$", "/private", False),
        ("Disallow: /private$", "/private/x", True),
        ("Disallow: /a*b*c", "/a-x-b-y-c-z", False),
        ("Disallow: /a*b*c", "/a-x-c-y-b", True),
        ("Disallow: /caf%C3%A9", "/caf%C3%A9/menu", False),
        ("Disallow:", "/anything", True),
        ("Disallow: /", "/robots.txt", True),  # always allowed
    ],
)
def test_patterns(rule: str, path: str, ok: bool) -> None:
    assert allowed(f"User-agent: *\n{rule}", path) is ok


def test_our_group_is_chosen_by_product_token() -> None:
    robots = "User-agent: FactBot/2.0\nDisallow: /private\n\nUser-agent: *\nDisallow: /\n"
    assert allowed(robots, "/public")
    assert not allowed(robots, "/private/x")
    assert not allowed(robots, "/public", product="otherbot")
    # "bot" is not our token (the standard library matches it as a substring of "factbot").
    assert allowed("User-agent: bot\nDisallow: /\n", "/x")


def test_product_token() -> None:
    assert product_token("factbot/0.1 (+https://github.com/factbot/factbot)") == "factbot"
    assert product_token("FactBot") == "factbot"
    assert product_token("") == ""
    assert product_token(" /1.0") == ""


def test_a_hostile_pattern_does_not_backtrack() -> None:
    robots = "User-agent: *\nDisallow: /" + "*a" * 2000 + "b\n"
    started = time.perf_counter()
    assert allowed(robots, "/" + "a" * 2000)
    # Backtracking over 2,000 wildcards would not end; generous for a loaded machine.
    assert time.perf_counter() - started < 5.0


def test_answers_without_a_file() -> None:
    assert rules_for_status(404).blanket is True
    assert rules_for_status(410).blanket is True
    assert rules_for_status(401).blanket is False
    assert rules_for_status(403).blanket is False
    for status in (429, 500, 503):
        rules = rules_for_status(status)
        assert rules.blanket is False and rules.temporary
        assert (
            rules.refusal("/x")
            == f"robots.txt is unreachable (HTTP {status}): nothing may be fetched"
        )


# --- the cache -------------------------------------------------------------------------------


async def test_concurrent_callers_share_one_load_and_it_is_kept_for_the_ttl() -> None:
    fetched: list[str] = []

    async def fetch_file(url: str) -> bytes:
        fetched.append(url)
        await asyncio.sleep(0.01)
        return b"User-agent: *\nDisallow: /x\n"

    clock = FakeClock()
    cache = RobotsCache(fetch_file, user_agent="factbot/1", ttl=60, error_ttl=5, clock=clock)
    results = await asyncio.gather(*(cache.rules_for("http://a.test") for _ in range(20)))

    assert fetched == ["http://a.test/robots.txt"]
    assert all(r == results[0] for r in results)
    clock.advance(59)
    await cache.rules_for("http://a.test")
    assert len(fetched) == 1
    clock.advance(2)
    await cache.rules_for("http://a.test")
    assert len(fetched) == 2


async def test_unreachable_robots_are_asked_again_sooner_and_origins_are_bounded() -> None:
    calls: list[str] = []

    async def failing(url: str) -> bytes:
        calls.append(url)
        raise FetchError(url, "HTTP status 503", status=503)

    clock = FakeClock()
    cache = RobotsCache(
        failing, user_agent="factbot", ttl=60, error_ttl=5, max_origins=2, clock=clock
    )
    rules = await cache.rules_for("http://a.test")
    assert rules.temporary and rules.blanket is False
    clock.advance(4)
    await cache.rules_for("http://a.test")
    assert len(calls) == 1  # still within the error TTL
    clock.advance(2)
    await cache.rules_for("http://a.test")
    assert len(calls) == 2
    for origin in ("http://b.test", "http://c.test", "http://a.test"):
        await cache.rules_for(origin)  # three origins, room for two: a.test was evicted
    assert len(calls) == 5


async def test_a_refused_origin_is_an_unsafe_url_but_a_refused_redirect_is_unreachable() -> None:
    async def refuse(url: str) -> bytes:
        if "a.test" in url:
            raise UnsafeURLError(url, "a.test is at non-public address 10.0.0.1")
        raise UnsafeURLError("http://10.0.0.1/robots.txt", "non-public address 10.0.0.1")

    cache = RobotsCache(refuse, user_agent="factbot", ttl=60, error_ttl=5)
    with pytest.raises(UnsafeURLError):
        await cache.rules_for("http://a.test")
    rules = await cache.rules_for("http://b.test")
    assert rules.blanket is False and rules.temporary
    assert "redirect refused" in rules.source


# --- the fetcher obeying robots.txt over HTTP --------------------------------------------------


class Server(LocalServer):
    """Answers from routes by target, and with PAGE for any other."""

    def __init__(self) -> None:
        super().__init__(default=self.answer)
        self.routes: dict[str, tuple[int, dict[str, str], bytes]] = {}

    def robots(self, body: str, status: int = 200, content_type: str = "text/plain") -> None:
        self.routes["/robots.txt"] = (status, {"Content-Type": content_type}, body.encode())

    def answer(self, request: Request) -> Response:
        default = (200, {"Content-Type": "text/html"}, PAGE)
        status, headers, body = self.routes.get(request.target, default)
        return Response(status, body, headers=headers)


@pytest.fixture(scope="module")
def shared_server() -> Iterator[Server]:
    with Server() as started:
        assert isinstance(started, Server)
        yield started


@pytest.fixture
def server(shared_server: Server) -> Server:
    shared_server.routes.clear()
    shared_server.forget()
    return shared_server


POLICY = FetchPolicy(allowed_networks=("127.0.0.1/32",), user_agent="factbot/0.1")


async def test_disallowed_pages_are_never_requested(server: Server) -> None:
    server.robots("User-agent: factbot\nDisallow: /private\n")
    async with Fetcher(POLICY) as fetcher:
        for path in ("/a", "/b", "/c"):
            await fetcher.fetch(server.base + path)
        with pytest.raises(RobotsDisallowedError) as caught:
            await fetcher.fetch(server.base + "/private/page")

    assert server.seen == ["/robots.txt", "/a", "/b", "/c"]  # robots.txt once per origin
    assert caught.value.url == server.base + "/private/page"
    assert caught.value.reason == "robots.txt disallows '/private'"
    assert isinstance(caught.value, FetchError)


async def test_a_redirect_into_a_disallowed_path_is_refused(server: Server) -> None:
    server.robots("User-agent: *\nDisallow: /members\n")
    server.routes["/old"] = (301, {"Location": "/members/story"}, b"")
    async with Fetcher(POLICY) as fetcher:
        with pytest.raises(RobotsDisallowedError) as caught:
            await fetcher.fetch(server.base + "/old")
    assert caught.value.url == server.base + "/members/story"
    assert "/members/story" not in server.seen


@pytest.mark.parametrize(
    ("status", "outcome"),
    [
        (404, None),
        (410, None),
        (401, "robots.txt answered HTTP 401: nothing may be fetched"),
        (403, "robots.txt answered HTTP 403: nothing may be fetched"),
        (500, "robots.txt is unreachable (HTTP 500): nothing may be fetched"),
        (503, "robots.txt is unreachable (HTTP 503): nothing may be fetched"),
    ],
)
async def test_robots_statuses(server: Server, status: int, outcome: str | None) -> None:
    server.robots("Disallow: /", status=status)
    async with Fetcher(POLICY) as fetcher:
        if outcome is None:
            await fetcher.fetch(server.base + "/page")
        else:
            with pytest.raises(RobotsDisallowedError) as caught:
                await fetcher.fetch(server.base + "/page")
            assert caught.value.reason == outcome
            assert "/page" not in server.seen


async def test_unreachable_robots_are_asked_again_after_the_error_ttl(server: Server) -> None:
    server.robots("", status=503)
    clock = FakeClock()
    async with Fetcher(replace(POLICY, robots_error_ttl=300.0), clock=clock) as fetcher:
        with pytest.raises(RobotsDisallowedError):
            await fetcher.fetch(server.base + "/page")
        server.robots("User-agent: *\nAllow: /\n")
        clock.advance(299)
        with pytest.raises(RobotsDisallowedError):  # the error is kept for the error TTL
            await fetcher.fetch(server.base + "/page")
        clock.advance(2)
        page = await fetcher.fetch(server.base + "/page")
    assert page.body == PAGE
    assert server.seen.count("/robots.txt") == 2


async def test_a_big_robots_file_is_read_up_to_the_cap_in_any_type(server: Server) -> None:
    filler = "# " + "x" * 98 + "\n"
    body = "User-agent: *\nDisallow: /early\n" + filler * 100 + "Disallow: /late\n"
    server.robots(body, content_type="text/html")
    async with Fetcher(replace(POLICY, robots_max_bytes=2000)) as fetcher:
        with pytest.raises(RobotsDisallowedError):
            await fetcher.fetch(server.base + "/early")
        await fetcher.fetch(server.base + "/late")  # past the cap: not read


async def test_a_robots_redirect_to_a_refused_address_means_disallow(server: Server) -> None:
    server.routes["/robots.txt"] = (302, {"Location": "http://10.0.0.1/robots.txt"}, b"")
    async with Fetcher(POLICY) as fetcher:
        with pytest.raises(RobotsDisallowedError, match="redirect refused"):
            await fetcher.fetch(server.base + "/page")


async def test_robots_can_be_turned_off(server: Server) -> None:
    server.robots("User-agent: *\nDisallow: /\n")
    async with Fetcher(replace(POLICY, respect_robots=False)) as fetcher:
        await fetcher.fetch(server.base + "/page")
    assert server.seen == ["/page"]


def test_blanket_rules() -> None:
    assert RobotsRules(blanket=True).refusal("/x") is None
    assert RobotsRules(blanket=False, source="s").refusal("/x") == "s: nothing may be fetched"


async def test_robots_txt_is_read_while_the_pages_host_is_resolved(server: Server) -> None:
    server.robots("User-agent: *\nAllow: /\n")
    lookups: list[str] = []

    async def resolve(host: str, port: int) -> list[str]:
        lookups.append(host)
        if len(lookups) == 1:
            # The page's own lookup answers only once robots.txt has been read: one after the
            # other, this would never happen.
            deadline = time.monotonic() + 5
            while "/robots.txt" not in server.seen:
                assert time.monotonic() < deadline, "robots.txt waited for the page's lookup"
                await asyncio.sleep(0.01)
        return ["127.0.0.1"]

    port = server.port
    async with Fetcher(POLICY, resolver=resolve) as fetcher:
        page = await fetcher.fetch(f"http://site.test:{port}/page")
    assert page.body == PAGE
    assert lookups == ["site.test", "site.test"]  # the page's, then robots.txt's
    assert server.seen == ["/robots.txt", "/page"]  # and nothing reached the page before it


async def test_a_url_refused_as_unsafe_is_refused_for_that_whatever_robots_txt_says(
    server: Server,
) -> None:
    server.robots("User-agent: *\nDisallow: /\n")

    async def resolve(host: str, port: int) -> list[str]:
        return ["10.0.0.1"]  # not allowed by POLICY

    async with Fetcher(POLICY, resolver=resolve) as fetcher:
        with pytest.raises(UnsafeURLError, match=r"non-public address 10\.0\.0\.1"):
            await fetcher.fetch("http://sneaky.test/page")
    assert server.seen == []
