"""A local OpenAI-compatible chat completions server for tests (127.0.0.1, port 0).

It serves `POST /v1/chat/completions` and `GET /v1/models`, records every request, and answers
from a script (in order) or from a router (a callable on the request, e.g. by stage):

    with serve_openai([{"label": "false"}, error(429, retry_after=0)]) as fake:
        endpoint = ModelEndpoint(base_url=fake.base_url, api_key="test", model=fake.model)

A scripted item is a `Reply` (see `answer`, `error`, `malformed`, `truncated`, `slow`), a string
(sent as the message content as it is), a callable on the request that returns one of those (an
answer read off the prompt) or any other JSON value (sent JSON-encoded). When the script runs
out the server answers 400 and counts it in `unscripted`.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from tests.support.httpserver import Request, Response, serve

STAGE_HEADER = "x-factbot-stage"
ScriptItem = Any  # Reply | str | JSON value | Router (a reply read off the request)
Router = Callable[["Seen"], ScriptItem]


@dataclass(frozen=True)
class Reply:
    """One scripted answer: a completion, or an error status with headers."""

    content: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    finish_reason: str = "stop"
    delay: float = 0.0  # seconds to wait before answering
    prompt_tokens: int | None = None  # None: estimated from the request
    completion_tokens: int | None = None  # None: estimated from the content
    body: bytes | None = None  # sent as it is instead of a completion or error body


def answer(value: Any, **options: Any) -> Reply:
    """Return a completion whose content is value (a string as it is, else JSON-encoded)."""
    content = value if isinstance(value, str) else json.dumps(value)
    return Reply(content=content, **options)


def error(status: int, *, retry_after: float | str | None = None, delay: float = 0.0) -> Reply:
    """Return an OpenAI-style error answer, with a Retry-After header when given."""
    headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
    return Reply(status=status, headers=headers, delay=delay)


def malformed(text: str = '{"label": "false", "rationale": ') -> Reply:
    """Return a completion whose content is not valid JSON."""
    return Reply(content=text)


def truncated(value: Any = None) -> Reply:
    """Return a completion cut off mid-JSON with finish_reason "length"."""
    full = json.dumps(value if value is not None else {"rationale": "x" * 200})
    return Reply(content=full[: len(full) // 2], finish_reason="length")


def slow(seconds: float, value: Any = None) -> Reply:
    """Return a completion sent only after seconds."""
    base = value if isinstance(value, Reply) else answer(value if value is not None else {})
    return replace(base, delay=seconds)


def as_reply(item: ScriptItem) -> Reply:
    """Return item as a Reply."""
    return item if isinstance(item, Reply) else answer(item)


@dataclass(frozen=True)
class Seen:
    """One request as the server received it."""

    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: dict[str, Any]

    @property
    def stage(self) -> str | None:
        """Return the stage the client named in its stage header."""
        return self.headers.get(STAGE_HEADER)

    @property
    def messages(self) -> list[dict[str, Any]]:
        """Return the chat messages sent."""
        return list(self.body.get("messages", []))

    @property
    def system(self) -> str:
        """Return the first system message's text."""
        return next((m["content"] for m in self.messages if m["role"] == "system"), "")


@dataclass
class FakeOpenAI:
    """The server's state: the script or router, what it saw, and how busy it got."""

    script: deque[ScriptItem] = field(default_factory=deque)
    router: Router | None = None
    model: str = "fake-model"
    base_url: str = ""
    requests: list[Seen] = field(default_factory=list)
    unscripted: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    closing: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, *items: ScriptItem) -> None:
        """Queue more scripted answers."""
        self.script.extend(items)

    @property
    def completions(self) -> list[Seen]:
        """Return the chat completion requests received, in order."""
        return [seen for seen in self.requests if seen.path.endswith("/chat/completions")]

    def record(self, seen: Seen) -> None:
        """Remember a request that is not answered from the script."""
        with self.lock:
            self.requests.append(seen)

    def next_reply(self, seen: Seen) -> Reply | None:
        """Return the answer to seen, or None when nothing is scripted."""
        with self.lock:
            self.requests.append(seen)
            if self.router is not None:
                return as_reply(self.router(seen))
            if not self.script:
                self.unscripted += 1
                return None
            item = self.script.popleft()
            return as_reply(item(seen) if callable(item) else item)  # a reply read off seen

    def enter(self) -> None:
        """Count a request as in flight."""
        with self.lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def leave(self) -> None:
        """Count a request as answered."""
        with self.lock:
            self.in_flight -= 1


def completion_body(reply: Reply, seen: Seen, model: str) -> dict[str, Any]:
    """Return the chat.completion JSON the real API would send for reply."""
    content = reply.content or ""
    prompt_chars = sum(len(str(m.get("content", ""))) for m in seen.messages)
    prompt = reply.prompt_tokens if reply.prompt_tokens is not None else prompt_chars // 4 + 1
    done = reply.completion_tokens if reply.completion_tokens is not None else len(content) // 4 + 1
    return {
        "id": f"chatcmpl-fake{len(seen.body)}{int(time.time() * 1000)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": seen.body.get("model", model),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "logprobs": None,
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": done,
            "total_tokens": prompt + done,
        },
    }


def error_body(status: int, message: str) -> dict[str, Any]:
    """Return an OpenAI-style error JSON."""
    kind = "rate_limit_error" if status == 429 else "server_error" if status >= 500 else "invalid"
    return {"error": {"message": message, "type": kind, "param": None, "code": str(status)}}


def _json(status: int, payload: Any, headers: dict[str, str] | None = None) -> Response:
    data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return Response(status, data, "application/json", headers or {})


def _answer(fake: FakeOpenAI, request: Request) -> Response:
    """Answer one request as the OpenAI API would, from the script or the router."""
    body = json.loads(request.body or b"{}") if request.method == "POST" else {}
    seen = Seen(request.method, request.target, request.headers, body)
    route = request.path.rstrip("/")
    if request.method == "GET" and route.endswith("/models"):
        fake.record(seen)
        models = [{"id": fake.model, "object": "model", "created": 0, "owned_by": "fake"}]
        return _json(200, {"object": "list", "data": models})
    if request.method != "POST" or not route.endswith("/chat/completions"):
        fake.record(seen)
        return _json(404, error_body(404, f"no route {request.target}"))
    fake.enter()
    try:
        reply = fake.next_reply(seen)
        if reply is not None and reply.delay:
            fake.closing.wait(reply.delay)
        if reply is None:
            return _json(400, error_body(400, "the fake server has no answer scripted"))
        if reply.body is not None:
            return _json(reply.status, reply.body, reply.headers)
        if reply.status != 200:
            return _json(reply.status, error_body(reply.status, "scripted"), reply.headers)
        return _json(200, completion_body(reply, seen, fake.model), reply.headers)
    finally:
        fake.leave()


def judge_labels(user: str) -> dict[str, str]:
    """Map positional names ("C1", "C1.N2") to the judge prompt's random labels, in order.

    The judge labels claims and narratives afresh for every call; scripted answers name them by
    position and translate here.
    """
    names: dict[str, str] = {}
    for i, c_label in enumerate(re.findall(r'<claim id="(C\w+)">', user), start=1):
        names[f"C{i}"] = c_label
        found = re.findall(rf'narrative="({re.escape(c_label)}\.N\w+)"', user)
        for j, label in enumerate(found, start=1):
            names[f"C{i}.N{j}"] = label
    return names


@contextmanager
def serve_openai(
    script: Iterable[ScriptItem] = (),
    *,
    router: Router | None = None,
    model: str = "fake-model",
) -> Iterator[FakeOpenAI]:
    """Run a fake OpenAI API until the block ends; base_url ends in /v1."""
    fake = FakeOpenAI(script=deque(script), router=router, model=model)
    with serve(default=lambda request: _answer(fake, request)) as server:
        fake.base_url = f"{server.base}/v1"
        fake.closing = server.closing  # slow answers wake when the block ends
        yield fake
