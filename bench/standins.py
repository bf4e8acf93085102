"""Local stand-ins for the services a check talks to, with realistic delays (benchmarks only).

- `ModelStandin`: an OpenAI-compatible chat completions server that answers every stage as a
  capable model would (claims, extraction, judge; see `ScriptedModel`), from the scripted posts;
- `SearchStandin`: a SearXNG-compatible `GET /search?format=json` whose results are the article
  pages of the scripted claim a query is about;
- `PageStandin`: one publisher site serving those articles and a robots.txt.

Servers listen on loopback addresses, port 0, and wait their delay before answering. Every
request is recorded in a shared `CallLog` with its kind and its start and end on the monotonic
clock, so a benchmark can tell what ran in parallel and what waited for what.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol, TypeVar
from urllib.parse import parse_qs, urlsplit

from bench.prompt_reading import quotes_of

T = TypeVar("T")

_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "the and that this with from have has was were are for not you your their its into about "
    "over only than then them they what when where which while who how did does can could "
    "site".split()
)
_CLAIM_BLOCK = re.compile(r'<claim(?: id="(C\w+)")?>\n(.*?)\n</claim>', re.S)
_NARRATIVE = re.compile(r'narrative="((C\w+)\.N\w+)"')
_LEADS = (
    "A claim shared widely on social media says that",
    "Readers asked us to look into the claim that",
    "Posts viewed thousands of times this week assert that",
    "A viral message circulating in several countries states that",
    "We were asked whether it is true that",
    "An often repeated story holds that",
)
_ROBOTS = b"User-agent: *\nAllow: /\n"


@dataclass(frozen=True)
class ScriptedClaim:
    """A check-worthy claim, what a capable model says about it, and what articles report."""

    text: str
    queries: tuple[str, ...]
    accurate: bool
    fact: str  # the sentence every article about the claim states (the model quotes it)
    context: tuple[str, ...]  # more sentences of those articles
    explanation: str

    @property
    def slug(self) -> str:
        """Return a short path-safe name of the claim."""
        return "-".join(_words(self.text)[:6])

    @property
    def vocabulary(self) -> frozenset[str]:
        """Return the content words a search about the claim is likely to use."""
        return frozenset(_words(" ".join((self.text, *self.queries))))


@dataclass(frozen=True)
class ScriptedPost:
    """A text post and the claims a capable model finds in it."""

    text: str
    claims: tuple[ScriptedClaim, ...]


def _words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.casefold()) if len(w) > 2 and w not in _STOP]


def _squash(text: str) -> str:
    return " ".join(text.split())


def _best(
    text: str, candidates: Sequence[T], vocabulary: Callable[[T], frozenset[str]]
) -> T | None:
    """Return the candidate whose vocabulary shares the most words with text, or None."""
    words = set(_words(text))
    scored = [(len(words & vocabulary(c)), n) for n, c in enumerate(candidates)]
    score, n = max(scored, default=(0, -1))
    return candidates[n] if score > 0 else None


@dataclass(frozen=True)
class Call:
    """One request a stand-in answered."""

    kind: str  # "model:<stage>", "search", "page" or "robots"
    start: float  # time.monotonic() when the request arrived
    end: float  # time.monotonic() when the answer was sent

    @property
    def seconds(self) -> float:
        """Return how long the request took."""
        return self.end - self.start


class CallLog:
    """Every request every stand-in answered, thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: list[Call] = []
        self._serial = False
        self._turn = threading.Lock()  # held by the one request in flight, when serial

    @contextlib.contextmanager
    def one_at_a_time(self) -> Iterator[None]:
        """Within the block, every stand-in serves one request at a time, all together."""
        self._serial = True
        try:
            yield
        finally:
            self._serial = False

    def turn(self) -> contextlib.AbstractContextManager[object]:
        """Return what a request holds while it is served (the shared turn, when serial)."""
        return self._turn if self._serial else contextlib.nullcontext()

    def add(self, call: Call) -> None:
        """Record one answered request."""
        with self._lock:
            self._calls.append(call)

    def between(self, start: float, end: float) -> list[Call]:
        """Return the requests that started inside [start, end], in order of arrival."""
        with self._lock:
            calls = [c for c in self._calls if start <= c.start <= end]
        return sorted(calls, key=lambda c: c.start)


def waves(calls: Sequence[Call]) -> int:
    """Return the longest chain of calls in which each starts after the previous one ended."""
    ordered = sorted(calls, key=lambda c: c.end)
    depth: list[int] = []
    for n, call in enumerate(ordered):
        before = (depth[m] for m in range(n) if ordered[m].end <= call.start)
        depth.append(1 + max(before, default=0))
    return max(depth, default=0)


def busy_seconds(calls: Sequence[Call], start: float, end: float) -> float:
    """Return the time in [start, end] during which at least one call was in flight."""
    total, reach = 0.0, start
    for call in sorted(calls, key=lambda c: c.start):
        lo, hi = max(call.start, reach), min(call.end, end)
        if hi > lo:
            total += hi - lo
            reach = hi
    return total


@dataclass(frozen=True)
class _Answer:
    status: int
    content_type: str
    body: bytes
    delay: float
    kind: str


class _Standin(ThreadingHTTPServer):
    """A threaded server that answers after a delay and logs every request."""

    daemon_threads = True
    request_queue_size = 256

    def __init__(self, host: str, log: CallLog) -> None:
        super().__init__((host, 0), _Handler)
        self.log = log
        self.closing = threading.Event()  # set on shutdown: delays end early
        self.instant = threading.Event()  # set while warming up: no delays
        # Set to a lock to serve one request at a time, as a one-slot llama.cpp server does.
        self.one_at_a_time: threading.Lock | None = None

    def slot(self) -> contextlib.AbstractContextManager[object]:
        """Return what a request holds while this server serves it."""
        return self.one_at_a_time or contextlib.nullcontext()

    @property
    def base(self) -> str:
        """Return the server's base URL."""
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> _Answer:
        """Return the answer to one request."""
        raise NotImplementedError


class _Handler(BaseHTTPRequestHandler):
    server: _Standin

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def _handle(self, method: str) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0") or 0))
        headers = {name.lower(): value for name, value in self.headers.items()}
        with self.server.log.turn(), self.server.slot():
            start = time.monotonic()
            answer = self.server.answer(method, self.path, headers, body)
            if answer.delay > 0 and not self.server.instant.is_set():
                self.server.closing.wait(answer.delay)
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.content_type)
            self.send_header("Content-Length", str(len(answer.body)))
            self.end_headers()
            # the client may have given up: then there is no one to answer
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(answer.body)
            self.server.log.add(Call(answer.kind, start, time.monotonic()))


def _json(value: Any, delay: float, kind: str, status: int = 200) -> _Answer:
    return _Answer(status, "application/json", json.dumps(value).encode(), delay, kind)


class PageStandin(_Standin):
    """One publisher site: article pages about the scripted claims, and a robots.txt."""

    def __init__(
        self,
        host: str,
        log: CallLog,
        *,
        number: int,
        claims: Sequence[ScriptedClaim],
        delay: float,
        robots_delay: float,
    ) -> None:
        super().__init__(host, log)
        self.number = number
        self.claims = {c.slug: c for c in claims}
        self.delay = delay
        self.robots_delay = robots_delay

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> _Answer:
        """Return robots.txt or an article page (404 for anything else)."""
        if path == "/robots.txt":
            return _Answer(200, "text/plain", _ROBOTS, self.robots_delay, "robots")
        match = re.fullmatch(r"/([a-z0-9-]+)/(\d+)\.html", urlsplit(path).path)
        claim = self.claims.get(match.group(1)) if match else None
        if match is None or claim is None:
            return _Answer(404, "text/plain", b"not found", self.delay, "page")
        html = article(claim, int(match.group(2)), site=self.number)
        return _Answer(200, "text/html; charset=utf-8", html.encode(), self.delay, "page")


def article(claim: ScriptedClaim, n: int, *, site: int) -> str:
    """Return a news article (page n) about claim, as the site numbered site publishes it."""
    lead = _LEADS[n % len(_LEADS)]
    said = claim.text[0].lower() + claim.text[1:]
    context = [claim.context[(n + i) % len(claim.context)] for i in range(len(claim.context))]
    verdict = "That is accurate." if claim.accurate else "That is not true."
    paragraphs = [f"{lead} {said} {verdict} {claim.fact}", *context]
    title = f"{'Yes' if claim.accurate else 'No'}: {claim.text.rstrip('.')}"
    published = f"2024-{1 + (n + site) % 12:02d}-{1 + (3 * n + site) % 28:02d}T09:30:00Z"
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        f'<meta property="og:site_name" content="The Daily Record {site}">'
        f'<meta name="author" content="Staff reporter {n}">'
        f'<meta property="article:published_time" content="{published}"></head><body>'
        f'<nav><a href="/">Home</a> <a href="/fact-checks">Fact checks</a></nav>'
        f"<article><h1>{title}</h1>{body}</article>"
        f"<footer>The Daily Record {site}. All rights reserved.</footer></body></html>"
    )


def page_site(
    n: int, log: CallLog, *, claims: Sequence[ScriptedClaim], delay: float, robots_delay: float
) -> PageStandin:
    """Return publisher site n on its own loopback address (127.0.0.1 where only that works)."""
    for host in (f"127.0.0.{2 + n}", "127.0.0.1"):
        try:
            return PageStandin(
                host, log, number=n + 1, claims=claims, delay=delay, robots_delay=robots_delay
            )
        except OSError:  # not Linux: one loopback address, so all sites are one host to fetch
            continue
    raise OSError("cannot listen on 127.0.0.1")


class SearchStandin(_Standin):
    """A SearXNG instance whose results are the article pages of the claim a query is about."""

    def __init__(
        self,
        host: str,
        log: CallLog,
        *,
        claims: Sequence[ScriptedClaim],
        sites: Sequence[str],
        results: int,
        delay: float,
    ) -> None:
        super().__init__(host, log)
        self.claims = list(claims)
        self.sites = list(sites)
        self.results = results
        self.delay = delay

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> _Answer:
        """Return the JSON results for the query in the URL."""
        query = parse_qs(urlsplit(path).query).get("q", [""])[0]
        # The pages are local and no fact-checker's site is: a site: search finds nothing.
        claim = None if "site:" in query else _best(query, self.claims, lambda c: c.vocabulary)
        hits = []
        if claim is not None:
            spread = zlib.crc32(claim.slug.encode())
            for n in range(self.results):
                site = (spread + n) % len(self.sites)
                hits.append(
                    {
                        "url": f"{self.sites[site]}/{claim.slug}/{n}.html",
                        "title": f"{'Yes' if claim.accurate else 'No'}: {claim.text}",
                        "content": claim.fact,
                        "engine": "standin",
                        "score": 1.0 / (n + 1),
                    }
                )
        return _json({"query": query, "results": hits}, self.delay, "search")


class ScriptedModel:
    """Answers every stage as a capable model would, reading the data blocks it was sent."""

    def __init__(self, posts: Sequence[ScriptedPost]) -> None:
        self.posts = list(posts)
        self.claims = [claim for post in posts for claim in post.claims]
        # True: the judge finds every narrative irrelevant, so each claim stays unverifiable
        # with all its facts missing and refinement runs for as long as the searches bring
        # new passages (the worst case).
        self.undecided = False

    def answer(self, stage: str, user: str) -> dict[str, Any] | None:
        """Return the JSON answer for stage, or None for a stage it does not know."""
        if stage == "claims":
            return self._claims(user)
        if stage == "extraction":
            return self._extraction(user)
        if stage == "judge":
            return self._judge(user)
        return None

    def _claim(self, text: str) -> ScriptedClaim | None:
        exact = next((c for c in self.claims if _squash(c.text) == _squash(text)), None)
        return exact or _best(text, self.claims, lambda c: c.vocabulary)

    def _claims(self, user: str) -> dict[str, Any]:
        post = _best(user, self.posts, lambda p: frozenset(_words(p.text)))
        if post is None:
            return {"checkable": False, "reason": "no check-worthy claim", "claims": []}
        return {
            "checkable": True,
            "reason": "The post states facts that sources can confirm or refute.",
            "claims": [{"text": c.text, "queries": list(c.queries)} for c in post.claims],
        }

    def _extraction(self, user: str) -> dict[str, Any]:
        found = _CLAIM_BLOCK.search(user)
        claim = self._claim(found.group(2)) if found else None
        if claim is None:
            return {"quotes": []}
        stance = "supports" if claim.accurate else "refutes"
        return {"quotes": quotes_of(user, claim.fact, stance)}

    def _judge(self, user: str) -> dict[str, Any]:
        labels: dict[str, list[str]] = {}
        for label, claim_id in _NARRATIVE.findall(user):
            labels.setdefault(claim_id, []).append(label)
        answers = []
        for claim_id, text in ((m.group(1), m.group(2)) for m in _CLAIM_BLOCK.finditer(user)):
            claim = self._claim(text)
            if claim is None or claim_id is None:
                continue
            if self.undecided:
                missing = "missing"
                facets = dict.fromkeys(("who", "what", "when", "where", "why", "how"), missing)
                answers.append(
                    {
                        "claim": claim_id,
                        "narratives": [
                            {
                                "narrative": label,
                                "relation": "irrelevant",
                                "facets": facets,
                                "rationale": "the passages are about something else",
                            }
                            for label in dict.fromkeys(labels.get(claim_id, []))
                        ],
                        "explanation": "No passage addresses the claim.",
                    }
                )
                continue
            same = "consistent"
            what = same if claim.accurate else "conflicting"
            facets = {"who": same, "what": what, "when": same, "where": same}
            facets |= {"why": same, "how": same}
            answers.append(
                {
                    "claim": claim_id,
                    "narratives": [
                        {
                            "narrative": label,
                            "relation": "supports" if claim.accurate else "conflicts",
                            "facets": facets,
                            "rationale": claim.fact,
                        }
                        for label in dict.fromkeys(labels.get(claim_id, []))
                    ],
                    "explanation": claim.explanation,
                }
            )
        return {"claims": answers}


class Answers(Protocol):
    """What a model stand-in answers from: JSON per stage and user message, None if unknown."""

    def answer(self, stage: str, user: str) -> dict[str, Any] | None:
        """Return the JSON answer for stage, or None for a stage it does not know."""
        ...


class ModelStandin(_Standin):
    """An OpenAI-compatible chat completions API answering from a `ScriptedModel` (or any
    `Answers`, such as `bench.gullible.GullibleReader`)."""

    def __init__(self, host: str, log: CallLog, *, model: Answers, delay: float) -> None:
        super().__init__(host, log)
        self.model = model
        self.delay = delay

    @property
    def base_url(self) -> str:
        """Return the API's base URL (ends in /v1)."""
        return f"{self.base}/v1"

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> _Answer:
        """Return a chat completion (or the model list)."""
        if method == "GET" and path.rstrip("/").endswith("/models"):
            data = [{"id": "standin", "object": "model", "created": 0, "owned_by": "factbot"}]
            return _json({"object": "list", "data": data}, 0.0, "model:list")
        stage = headers.get("x-factbot-stage", "unknown")
        request = json.loads(body or b"{}")
        user = "\n".join(
            str(m.get("content", "")) for m in request.get("messages", []) if m["role"] == "user"
        )
        content = self.model.answer(stage, user)
        if content is None:
            error = {"message": f"no answer for stage {stage}", "type": "invalid", "code": "400"}
            return _json({"error": error}, self.delay, f"model:{stage}", status=400)
        text = json.dumps(content)
        prompt, done = len(user) // 4 + 1, len(text) // 4 + 1
        completion = {
            "id": f"chatcmpl-standin{time.monotonic_ns()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model", "standin"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": done,
                "total_tokens": prompt + done,
            },
        }
        return _json(completion, self.delay, f"model:{stage}")


@contextlib.contextmanager
def instant(*servers: _Standin) -> Iterator[None]:
    """Answer without delays until the block ends (to warm up what a first check loads)."""
    for server in servers:
        server.instant.set()
    try:
        yield
    finally:
        for server in servers:
            server.instant.clear()


@contextlib.contextmanager
def serving(*servers: _Standin) -> Iterator[None]:
    """Serve every server in a background thread until the block ends."""
    threads = [threading.Thread(target=s.serve_forever, args=(0.05,), daemon=True) for s in servers]
    for thread in threads:
        thread.start()
    try:
        yield
    finally:
        for server in servers:
            server.closing.set()
            server.shutdown()
            server.server_close()
        for thread in threads:
            thread.join()
