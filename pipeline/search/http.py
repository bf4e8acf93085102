"""The one HTTP helper every search provider speaks through.

`ProviderClient` wraps a shared `httpx.AsyncClient` for one provider: it bounds concurrency, applies
a timeout, retries 429 and 5xx answers (and network errors) with exponential backoff
(`pipeline.util.retrying`), honours `Retry-After` (`pipeline.util.retry_after`) up to
`max_retry_wait` and fails at once when the server asks for longer, and spends the caller's
per-check request budget.

Budgets are scoped, not global: `request_budgets({"brave": 5})` (or `client.budget(5)`) opens a
fresh budget for the code inside the block, including tasks it starts. Every request sent, retries
included, spends one unit; outside any block requests are unbounded.

Keys never leave through logs or errors: every message built here is redacted of the secrets the
client was given, requests are logged by provider, method and status only (never by URL), and
keyed providers send their keys in headers so httpx's own request log shows no key either.

Failure policy: the request methods raise `SearchError` for every failure (status, network,
timeout, unreadable body) and `BudgetExceededError` when the budget is spent; nothing else
escapes them.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from types import MappingProxyType
from typing import Any

import httpx
from pydantic import SecretStr

from pipeline.errors import BudgetExceededError, SearchError
from pipeline.util.retry_after import retry_after
from pipeline.util.retrying import Backoff, Retryable, Sleep, retried

log = logging.getLogger(__name__)

Headers = Mapping[str, str] | None

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
_EXCERPT = 200

_BUDGETS: ContextVar[Mapping[str, Budget]] = ContextVar(
    "factbot_search_budgets", default=MappingProxyType({})
)


class Budget:
    """The requests one check may still send to one provider."""

    def __init__(self, provider: str, limit: int) -> None:
        if limit < 0:
            raise ValueError("a budget cannot be negative")
        self.provider = provider
        self.limit = limit
        self.used = 0

    @property
    def remaining(self) -> int:
        """Return how many requests are left."""
        return self.limit - self.used

    def spend(self) -> None:
        """Take one request from the budget; raise BudgetExceededError when none is left."""
        if self.used >= self.limit:
            raise BudgetExceededError(
                self.provider, f"the budget of {self.limit} requests for this check is spent"
            )
        self.used += 1


@contextmanager
def request_budgets(limits: Mapping[str, int]) -> Iterator[Mapping[str, Budget]]:
    """Give the code inside the block a fresh request budget for each provider in limits."""
    fresh = {name: Budget(name, limit) for name, limit in limits.items()}
    token = _BUDGETS.set(MappingProxyType({**_BUDGETS.get(), **fresh}))
    try:
        yield MappingProxyType(fresh)
    finally:
        _BUDGETS.reset(token)


def current_budget(provider: str) -> Budget | None:
    """Return the budget open for provider in this context, if any."""
    return _BUDGETS.get().get(provider)


class ProviderClient:
    """HTTP for one search provider: bounded, timed, retried, budgeted and redacted."""

    def __init__(
        self,
        name: str,
        http: httpx.AsyncClient,
        *,
        secrets: Iterable[SecretStr | None] = (),
        max_concurrency: int = 4,
        timeout: float = 10.0,
        connect_timeout: float | None = None,
        max_retries: int = 2,
        backoff: float = 0.5,
        max_retry_wait: float = 30.0,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if max_concurrency < 1 or max_retries < 0:
            raise ValueError("max_concurrency must be >= 1 and max_retries >= 0")
        self.name = name
        self.http = http
        self.timeout = timeout
        # A short connect timeout makes an unreachable host fail fast; reads may take longer.
        self._timeout = httpx.Timeout(timeout, connect=min(connect_timeout or timeout, timeout))
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_retry_wait = max_retry_wait
        self._secrets = tuple(s.get_secret_value() for s in secrets if s and s.get_secret_value())
        self._slots = asyncio.Semaphore(max_concurrency)
        self._policy = Backoff(
            attempts=max_retries + 1, backoff=backoff, max_wait=max_retry_wait, sleep=sleep
        )

    def budget(self, requests: int) -> AbstractContextManager[Mapping[str, Budget]]:
        """Open a fresh budget of requests for this provider for the block (one check)."""
        return request_budgets({self.name: requests})

    def add_secret(self, secret: SecretStr | None) -> None:
        """Redact secret from every message this client builds."""
        if secret is not None and secret.get_secret_value():
            self._secrets = (*self._secrets, secret.get_secret_value())

    def redact(self, text: str) -> str:
        """Return text with every secret of this client masked."""
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    async def get_json(
        self, url: str, *, params: Mapping[str, str | int] | None = None, headers: Headers = None
    ) -> Any:
        """GET url and return its decoded JSON body."""
        return self._decode_json(await self.send("GET", url, params=params, headers=headers))

    async def post_json(self, url: str, *, body: Mapping[str, Any], headers: Headers = None) -> Any:
        """POST body as JSON to url and return the decoded JSON answer."""
        return self._decode_json(await self.send("POST", url, json_body=body, headers=headers))

    async def post_files(
        self,
        url: str,
        *,
        files: Mapping[str, tuple[str, bytes, str]],
        data: Mapping[str, str] | None = None,
        headers: Headers = None,
    ) -> Any:
        """POST a multipart form (files and fields) to url and return the decoded JSON answer."""
        response = await self.send("POST", url, headers=headers, files=files, form=data)
        return self._decode_json(response)

    async def get_bytes(
        self, url: str, *, params: Mapping[str, str | int] | None = None, headers: Headers = None
    ) -> bytes:
        """GET url and return its raw body."""
        return (await self.send("GET", url, params=params, headers=headers)).content

    async def send(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, str | int] | None = None,
        headers: Headers = None,
        json_body: Mapping[str, Any] | None = None,
        files: Mapping[str, tuple[str, bytes, str]] | None = None,
        form: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """Send one request, retrying as configured; return the 2xx response."""
        budget = current_budget(self.name)

        async def once() -> httpx.Response:
            if budget is not None:
                budget.spend()
            try:
                async with self._slots:
                    response = await self.http.request(
                        method,
                        url,
                        params=params,
                        headers=headers,
                        json=json_body,
                        files=files,
                        data=form,
                        timeout=self._timeout,
                    )
            except httpx.RequestError as exc:
                reason = self.redact(f"network error: {type(exc).__name__}: {exc}".rstrip(": "))
                raise Retryable(SearchError(self.name, reason), reason=reason) from None
            if response.is_success:
                return response
            raise self._failure(response)

        def on_retry(failure: Retryable, delay: float) -> None:
            if budget is not None and budget.remaining == 0:
                raise BudgetExceededError(self.name, "the budget ran out before a retry")
            log.info(
                "search request retried",
                extra={
                    "provider": self.name,
                    "status": failure.status,
                    "reason": failure.reason,
                    "delay": delay,
                },
            )

        return await retried(self._policy, once, on_retry=on_retry)

    def _failure(self, response: httpx.Response) -> Exception:
        """Return the error for a non-2xx response: Retryable when another request may help."""
        status = response.status_code
        if status not in RETRY_STATUSES:
            return SearchError(self.name, self._describe(response), status=status)
        wait = retry_after(response.headers)
        if wait is not None and wait > self.max_retry_wait:
            reason = f"HTTP {status}: asked to retry after {wait:.0f} s"
            return SearchError(self.name, reason, status=status, retry_after=wait)
        attempts = self.max_retries + 1
        spent = f"{self._describe(response)} (gave up after {attempts} attempts)"
        return Retryable(
            SearchError(self.name, spent, status=status, retry_after=wait),
            reason=f"HTTP {status}",
            status=status,
            retry_after=wait,
        )

    def _describe(self, response: httpx.Response) -> str:
        status = response.status_code
        what = {401: "the API key was refused", 403: "access forbidden (check the API key)"}.get(
            status, response.reason_phrase or "error"
        )
        excerpt = " ".join(response.text[:_EXCERPT].split())
        return self.redact(f"HTTP {status}: {what}" + (f": {excerpt}" if excerpt else ""))

    def _decode_json(self, response: httpx.Response) -> Any:
        try:
            return json.loads(response.content)
        except (ValueError, UnicodeDecodeError) as exc:
            reason = self.redact(f"the answer is not valid JSON: {exc}")
            raise SearchError(self.name, reason, status=response.status_code) from None
