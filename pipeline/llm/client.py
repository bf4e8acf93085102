"""The one module that talks to language models: every model call goes through `LLMClient`.

`LLMClient.complete()` sends a system and a user message to the stage's endpoint (any
OpenAI-compatible chat completions API: OpenAI, llama-cpp-python's server, vLLM, ...), asks for
JSON matching a pydantic schema, and returns the validated object. It owns:

- one `openai.AsyncOpenAI` per distinct endpoint, with the SDK's own retries off (`max_retries=0`)
  so the policy below is the only one;
- a per-call timeout and per-endpoint bounded concurrency (an `asyncio.Semaphore`);
- retries of 429, 408 and 5xx answers, timeouts and connection errors with jittered exponential
  backoff (`pipeline.util.retrying`), honouring `Retry-After` and `retry-after-ms`
  (`pipeline.util.retry_after`) up to `RetryPolicy.max_wait`;
- one retry after invalid output (bad or truncated JSON, a schema violation, `finish_reason`
  "length"), telling the model what was wrong;
- token, cost and time accounting per stage (see `pipeline.llm.usage`).

Failure policy: `complete()` raises `ModelOutputError` when the answer is still invalid after the
retry, and `ModelUnavailableError` when no answer could be had (retries spent, or an error that
retrying cannot fix, such as 400 or 401). Nothing else escapes it. Messages and logs carry the
stage, model, status and reason only: never keys, base URLs, prompts or model output.

Exceptions (to join the tree in `pipeline.errors`):

    FactbotError
    └── ModelError               a model call failed (stage, reason)
        ├── ModelOutputError     the answer was invalid twice (raw: the last answer)
        └── ModelUnavailableError  no answer could be had (status, retry_after)
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from pipeline.errors import FactbotError
from pipeline.llm import output
from pipeline.llm.endpoint import ModelEndpoint, RetryPolicy
from pipeline.llm.usage import MeterScope, StageUsage, UsageMeter, metering, open_meters
from pipeline.util.retry_after import retry_after
from pipeline.util.retrying import Retryable, retried

if TYPE_CHECKING:  # the SDK is imported when a client is built: processes without one skip it
    import openai
    from openai.types.chat import ChatCompletionMessageParam
    from openai.types.chat.completion_create_params import ResponseFormat

__all__ = [
    "STAGE_HEADER",
    "LLMClient",
    "ModelEndpoint",
    "ModelError",
    "ModelOutputError",
    "ModelUnavailableError",
    "RetryPolicy",
]

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

STAGE_HEADER = "X-Factbot-Stage"  # lets a test server (or a proxy) tell stages apart
_RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
_TRUNCATION_GROWTH = 2  # a retry after a cut-off answer gets this many times the max_tokens
_NO_KEY = "no-key"  # local servers take no key, but the SDK refuses an empty one


class ModelError(FactbotError):
    """A model call failed."""

    def __init__(self, stage: str, reason: str) -> None:
        super().__init__(f"{stage}: {reason}")
        self.stage = stage
        self.reason = reason


class ModelOutputError(ModelError):
    """The model's answer was invalid, and still invalid after one retry."""

    def __init__(self, stage: str, reason: str, raw: str) -> None:
        super().__init__(stage, reason)
        self.raw = raw


class ModelUnavailableError(ModelError):
    """No answer could be had from the model (retries spent, or a non-retryable error)."""

    def __init__(
        self,
        stage: str,
        reason: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        timed_out: bool = False,
    ) -> None:
        super().__init__(stage, reason)
        self.status = status
        self.retry_after = retry_after
        self.timed_out = timed_out


def _answer_of(completion: object) -> _Answer | None:
    """Return the answer in completion, or None when it is not a readable chat completion."""
    from openai.types.chat import ChatCompletion

    if not isinstance(completion, ChatCompletion):
        return None
    try:  # the SDK builds responses without validating them: fields may be missing
        usage = completion.usage
        choice = completion.choices[0] if completion.choices else None
        content = choice.message.content if choice else None
        return _Answer(
            content=content if isinstance(content, str) else "",
            finish_reason=choice.finish_reason if choice else None,
            input_tokens=int(usage.prompt_tokens) if usage else 0,
            output_tokens=int(usage.completion_tokens) if usage else 0,
        )
    except (AttributeError, TypeError, ValueError):
        return None


@dataclass(frozen=True)
class _Answer:
    content: str
    finish_reason: str | None
    input_tokens: int
    output_tokens: int


class LLMClient:
    """Structured, retried, bounded and metered calls to chat models, routed by stage."""

    def __init__(
        self,
        default: ModelEndpoint,
        *,
        stages: Mapping[str, ModelEndpoint] | None = None,
        retry: RetryPolicy | None = None,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.default = default
        self.stages = dict(stages or {})
        self.retry = retry or RetryPolicy()
        import openai

        self._meter = UsageMeter()
        self._sdk: dict[ModelEndpoint, openai.AsyncOpenAI] = {}
        self._slots: dict[ModelEndpoint, asyncio.Semaphore] = {}
        for endpoint in (default, *self.stages.values()):
            if endpoint not in self._sdk:
                self._sdk[endpoint] = openai.AsyncOpenAI(
                    api_key=endpoint.secret() or _NO_KEY,
                    base_url=endpoint.base_url,
                    timeout=endpoint.timeout,
                    max_retries=0,
                    # The caller's shared TLS context: each client's own reads the CA bundle.
                    http_client=openai.DefaultAsyncHttpxClient(verify=tls) if tls else None,
                )
                self._slots[endpoint] = asyncio.Semaphore(endpoint.max_concurrency)

    def endpoint_for(self, stage: str) -> ModelEndpoint:
        """Return the endpoint that serves stage."""
        return self.stages.get(stage, self.default)

    async def complete(
        self,
        *,
        stage: str,
        system: str,
        user: str,
        schema: type[T],
        max_tokens: int = 800,
        temperature: float = 0.0,
        meter: UsageMeter | None = None,
        json_schema: dict[str, Any] | None = None,
        images: Sequence[str] = (),
    ) -> T:
        """Ask stage's model for an answer matching schema; return it validated.

        `images` (data: or https: URLs) go with the user message as image content parts, for
        an endpoint that reads images (`ModelEndpoint.supports_images`).

        `json_schema` is what the model is asked for when it is narrower than the pydantic
        schema (enums of this call's labels, length bounds); the answer is validated against
        `schema` either way.
        """
        endpoint = self.endpoint_for(stage)
        # dict.fromkeys: a meter both open and passed in is counted once
        extra = [meter] if meter is not None else []
        meters = list(dict.fromkeys([self._meter, *open_meters(), *extra]))
        if not endpoint.supports_json_schema:
            # the model's own schema, not this call's narrowed one: the system prompt stays the
            # same from call to call, so a local server reuses its cached prefix
            system = f"{system}\n\n{output.schema_instructions(schema)}"
        if images and not endpoint.supports_images:
            raise ModelUnavailableError(stage, "the endpoint does not read images")
        content: Any = user
        if images:
            content = [
                {"type": "text", "text": user},
                *({"type": "image_url", "image_url": {"url": url}} for url in images),
            ]
        messages: list[ChatCompletionMessageParam] = [
            {"role": "system", "content": system},
            {"role": "user", "content": content},
        ]
        request = _Request(stage, endpoint, messages, schema, max_tokens, temperature, json_schema)
        started = time.monotonic()
        failed, timed_out, invalid = False, False, False
        try:
            return await self._complete(request, meters)
        except ModelError as exc:
            failed = True
            timed_out = isinstance(exc, ModelUnavailableError) and exc.timed_out
            invalid = isinstance(exc, ModelOutputError)
            raise
        finally:
            spent = StageUsage(
                seconds=time.monotonic() - started,
                failures=int(failed),
                timeouts=int(timed_out),
                invalid=int(invalid),
            )
            for each in meters:
                each.add(stage, spent)

    async def _complete(self, request: _Request[T], meters: list[UsageMeter]) -> T:
        endpoint, stage = request.endpoint, request.stage
        fmt = output.response_format(
            request.schema,
            json_schema=endpoint.supports_json_schema,
            strict=endpoint.strict_schema,
            schema_in_json_object=endpoint.schema_in_json_object,
            body=request.json_schema,
        )
        messages, max_tokens = list(request.messages), request.max_tokens
        reason, raw = "", ""
        for attempt in (1, 2):
            answer = await self._send(request, messages, fmt, max_tokens)
            cost = endpoint.cost(answer.input_tokens, answer.output_tokens)
            used = StageUsage(
                calls=1,
                input_tokens=answer.input_tokens,
                output_tokens=answer.output_tokens,
                cost_usd=cost,
            )
            for each in meters:
                each.add(stage, used)
            raw = answer.content
            truncated = answer.finish_reason == "length"
            if truncated:
                reason = f"cut off at max_tokens={max_tokens}"
            elif not raw.strip():
                reason = "empty answer"
            else:
                try:
                    return output.parse_output(answer.content, request.schema)
                except ValidationError as exc:
                    reason = output.describe_invalid(exc)
            log.warning(
                "invalid model output",
                extra={
                    "stage": stage,
                    "model": endpoint.model,
                    "attempt": attempt,
                    "reason": reason,
                },
            )
            if attempt == 1:
                if not truncated:
                    messages.append({"role": "assistant", "content": answer.content})
                else:
                    max_tokens *= _TRUNCATION_GROWTH
                note = output.correction_note(reason, truncated=truncated)
                messages.append({"role": "user", "content": note})
        raise ModelOutputError(stage, reason, raw)

    async def _send(
        self,
        request: _Request[T],
        messages: list[ChatCompletionMessageParam],
        fmt: ResponseFormat,
        max_tokens: int,
    ) -> _Answer:
        """Send one completion request, retrying what is worth retrying."""
        import openai

        endpoint, stage = request.endpoint, request.stage
        sdk, slots = self._sdk[endpoint], self._slots[endpoint]
        attempts = max(1, self.retry.attempts)
        tried = f"{attempts} attempt{'s' if attempts > 1 else ''}"

        def retry(
            reason: str,
            status: int | None = None,
            wait: float | None = None,
            *,
            timed_out: bool = False,
        ) -> Retryable:
            final = ModelUnavailableError(
                stage, f"{reason} ({tried})", status=status, retry_after=wait, timed_out=timed_out
            )
            return Retryable(final, reason=reason, status=status, retry_after=wait)

        async def once() -> _Answer:
            try:
                async with slots, asyncio.timeout(endpoint.timeout):
                    completion = await sdk.chat.completions.create(
                        model=endpoint.model,
                        messages=messages,
                        response_format=fmt,
                        max_tokens=max_tokens,
                        temperature=request.temperature,
                        extra_headers={STAGE_HEADER: stage},
                    )
            except openai.APIStatusError as exc:
                status = exc.status_code
                if status not in _RETRY_STATUSES:
                    raise ModelUnavailableError(stage, f"HTTP {status}", status=status) from None
                raise retry(f"HTTP {status}", status, retry_after(exc.response.headers)) from None
            except (openai.APITimeoutError, TimeoutError):
                reason = f"timed out after {endpoint.timeout:g}s"
                if not endpoint.retry_timeouts:
                    raise ModelUnavailableError(stage, reason, timed_out=True) from None
                raise retry(reason, timed_out=True) from None
            except openai.APIConnectionError:
                raise retry("connection failed") from None
            except (openai.APIError, ValueError) as exc:
                # a body that is not a completion: a proxy's page, a broken server
                raise retry(f"unreadable answer ({type(exc).__name__})") from None
            answer = _answer_of(completion)
            if answer is None:
                raise retry("unreadable answer (not a chat completion)")
            log.info(
                "model call",
                extra={
                    "stage": stage,
                    "model": endpoint.model,
                    "input_tokens": answer.input_tokens,
                    "output_tokens": answer.output_tokens,
                    "finish_reason": answer.finish_reason,
                },
            )
            return answer

        def on_retry(failure: Retryable, delay: float) -> None:
            log.info(
                "model call retried",
                extra={
                    "stage": stage,
                    "model": endpoint.model,
                    "reason": failure.reason,
                    "delay": delay,
                },
            )

        return await retried(self.retry, once, on_retry=on_retry)

    def usage(self) -> dict[str, StageUsage]:
        """Return the usage by stage of every call since start (or the last reset)."""
        return self._meter.by_stage()

    def reset_usage(self) -> None:
        """Forget the usage counted by `usage()`; scoped meters are not touched."""
        self._meter.reset()

    def meter(self) -> MeterScope:
        """Count the calls made inside the block (and the tasks it starts) in a fresh meter."""
        return metering()

    async def aclose(self) -> None:
        """Close every SDK client and its connections."""
        for sdk in self._sdk.values():
            await sdk.close()

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


@dataclass(frozen=True)
class _Request(Generic[T]):
    stage: str
    endpoint: ModelEndpoint
    messages: list[ChatCompletionMessageParam]
    schema: type[T]
    max_tokens: int
    temperature: float
    json_schema: dict[str, Any] | None = None
