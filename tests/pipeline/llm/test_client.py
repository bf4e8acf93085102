"""LLMClient through the real openai SDK against a local fake OpenAI server."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal

import openai
import pytest
from pydantic import BaseModel

from pipeline.llm.client import (
    LLMClient,
    ModelEndpoint,
    ModelOutputError,
    ModelUnavailableError,
    RetryPolicy,
)
from pipeline.llm.usage import UsageMeter
from tests.pipeline.llm.fake_openai import (
    FakeOpenAI,
    Reply,
    Seen,
    answer,
    error,
    malformed,
    serve_openai,
    slow,
    truncated,
)

GOOD = {"label": "false", "rationale": "The report says otherwise."}


class Verdict(BaseModel):
    label: Literal["accurate", "false", "unverifiable"]
    rationale: str


class Sleeps:
    """A sleep that records the waits asked for and returns at once."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await asyncio.sleep(0)


def endpoint(fake: FakeOpenAI, **options: Any) -> ModelEndpoint:
    return ModelEndpoint(base_url=fake.base_url, api_key="sk-test-secret", model="m1", **options)


def client_for(
    fake: FakeOpenAI,
    *,
    sleeps: Sleeps | None = None,
    attempts: int = 3,
    max_wait: float = 5.0,
    stages: dict[str, ModelEndpoint] | None = None,
    **options: Any,
) -> LLMClient:
    retry = RetryPolicy(
        attempts=attempts, backoff=0.001, max_wait=max_wait, sleep=sleeps or Sleeps()
    )
    return LLMClient(endpoint(fake, **options), stages=stages, retry=retry)


async def judge(client: LLMClient, *, stage: str = "judge", **options: Any) -> Verdict:
    return await client.complete(
        stage=stage, system="You judge claims.", user="Claim: x.", schema=Verdict, **options
    )


async def test_valid_answer_is_parsed_and_metered() -> None:
    script = [answer(GOOD, prompt_tokens=1000, completion_tokens=500)]
    with serve_openai(script) as fake:
        async with client_for(fake, input_price_per_mtok=2.0, output_price_per_mtok=10.0) as client:
            verdict = await judge(client, max_tokens=300)
    assert verdict == Verdict(**GOOD)
    usage = client.usage()["judge"]
    assert (usage.calls, usage.input_tokens, usage.output_tokens) == (1, 1000, 500)
    assert usage.failures == 0
    assert usage.cost_usd == pytest.approx(0.002 + 0.005)
    assert usage.seconds > 0
    (seen,) = fake.completions
    assert seen.body["model"] == "m1"
    assert seen.body["max_tokens"] == 300
    assert seen.body["temperature"] == 0.0
    assert [m["role"] for m in seen.messages] == ["system", "user"]
    assert seen.stage == "judge"
    assert seen.headers["authorization"] == "Bearer sk-test-secret"
    client.reset_usage()
    assert client.usage() == {}


async def test_json_schema_response_format_when_supported() -> None:
    with serve_openai([GOOD]) as fake:
        async with client_for(fake) as client:
            await judge(client)
    fmt = fake.completions[0].body["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "Verdict"
    assert fmt["json_schema"]["strict"] is True
    schema = fmt["json_schema"]["schema"]
    assert schema["additionalProperties"] is False
    assert sorted(schema["required"]) == ["label", "rationale"]
    assert schema["properties"]["label"]["enum"] == ["accurate", "false", "unverifiable"]


async def test_json_object_and_schema_in_prompt_when_not_supported() -> None:
    with serve_openai([GOOD]) as fake:
        async with client_for(fake, supports_json_schema=False) as client:
            verdict = await judge(client)
    assert verdict.label == "false"
    seen = fake.completions[0]
    assert seen.body["response_format"] == {"type": "json_object"}
    assert seen.system.startswith("You judge claims.")
    assert '"rationale"' in seen.system and "JSON Schema" in seen.system


async def test_schema_rides_in_json_mode_for_a_grammar_endpoint() -> None:
    narrowed = Verdict.model_json_schema()
    narrowed["properties"]["label"]["enum"] = ["false"]
    with serve_openai([GOOD, GOOD]) as fake:
        async with client_for(
            fake, supports_json_schema=False, schema_in_json_object=True
        ) as client:
            await judge(client)
            await judge(client, json_schema=narrowed)
    plain, narrow = (seen.body["response_format"] for seen in fake.completions)
    assert plain == {"type": "json_object", "schema": Verdict.model_json_schema()}
    assert narrow == {"type": "json_object", "schema": narrowed}
    # the prompt keeps the model's own schema, the same for every call (a cached prefix)
    assert fake.completions[0].system == fake.completions[1].system


async def test_a_narrowed_schema_is_sent_as_structured_output() -> None:
    narrowed = Verdict.model_json_schema()
    narrowed["properties"]["label"]["enum"] = ["false"]
    with serve_openai([GOOD]) as fake:
        async with client_for(fake) as client:
            await judge(client, json_schema=narrowed)
    fmt = fake.completions[0].body["response_format"]
    assert fmt["json_schema"]["schema"]["properties"]["label"]["enum"] == ["false"]
    assert fmt["json_schema"]["schema"]["additionalProperties"] is False


@pytest.mark.parametrize(
    "content",
    [
        "```json\n" + json.dumps(GOOD) + "\n```",
        "```\n" + json.dumps(GOOD) + "\n```\n",
        "Here is the answer:\n```JSON\n" + json.dumps(GOOD, indent=2) + "\n```",
        "  " + json.dumps(GOOD) + "\n",
    ],
)
async def test_markdown_fences_are_stripped(content: str) -> None:
    with serve_openai([content]) as fake:
        async with client_for(fake) as client:
            assert await judge(client) == Verdict(**GOOD)
    assert len(fake.completions) == 1


async def test_malformed_then_valid_retries_once_with_a_note() -> None:
    with serve_openai([malformed(), GOOD]) as fake:
        async with client_for(fake) as client:
            assert await judge(client) == Verdict(**GOOD)
    second = fake.completions[1]
    assert len(second.messages) == 4
    assert second.messages[2] == {"role": "assistant", "content": malformed().content}
    assert second.messages[3]["role"] == "user"
    assert "not valid JSON" in second.messages[3]["content"]
    usage = client.usage()["judge"]
    assert (usage.calls, usage.failures) == (2, 0)


async def test_malformed_twice_raises_model_output_error() -> None:
    with serve_openai([malformed(), malformed("nope")]) as fake:
        async with client_for(fake) as client:
            with pytest.raises(ModelOutputError) as caught:
                await judge(client)
    assert caught.value.stage == "judge"
    assert caught.value.raw == "nope"
    assert "not valid JSON" in caught.value.reason
    assert len(fake.completions) == 2
    usage = client.usage()["judge"]
    assert (usage.calls, usage.failures) == (2, 1)


async def test_schema_violation_twice_raises_model_output_error() -> None:
    wrong = {"label": "maybe", "rationale": "?"}
    with serve_openai([wrong, {"rationale": "no label"}]) as fake:
        async with client_for(fake) as client:
            with pytest.raises(ModelOutputError) as caught:
                await judge(client)
    assert caught.value.reason.startswith("does not match the schema: label")
    assert "does not match the schema: label" in fake.completions[1].messages[3]["content"]


async def test_truncated_answer_is_retried_with_more_tokens() -> None:
    with serve_openai([truncated(GOOD), GOOD]) as fake:
        async with client_for(fake) as client:
            assert await judge(client, max_tokens=100) == Verdict(**GOOD)
    first, second = fake.completions
    assert first.body["max_tokens"] == 100
    assert second.body["max_tokens"] == 200
    assert [m["role"] for m in second.messages] == ["system", "user", "user"]
    assert "cut off" in second.messages[2]["content"]


async def test_truncated_twice_raises_model_output_error() -> None:
    with serve_openai([truncated(GOOD), truncated(GOOD)]) as fake:
        async with client_for(fake) as client:
            with pytest.raises(ModelOutputError, match="cut off"):
                await judge(client)


@pytest.mark.parametrize(("retry_after", "waited"), [("0", 0.0), ("1", 1.0), ("60", 5.0)])
async def test_rate_limit_honours_retry_after_up_to_cap(retry_after: str, waited: float) -> None:
    sleeps = Sleeps()
    with serve_openai([error(429, retry_after=retry_after), GOOD]) as fake:
        async with client_for(fake, sleeps=sleeps, max_wait=5.0) as client:
            assert await judge(client) == Verdict(**GOOD)
    assert sleeps.waits == [waited]
    assert len(fake.completions) == 2
    assert client.usage()["judge"].calls == 1


@pytest.mark.parametrize(
    ("headers", "waited"),
    [
        ({"retry-after-ms": "1500", "Retry-After": "2"}, 1.5),  # OpenAI's milliseconds first
        ({"x-ratelimit-reset-tokens": "250ms", "x-ratelimit-remaining-tokens": "0"}, 0.25),
        ({"Retry-After": "Wed, 01 Jan 2020 00:00:00 GMT"}, 0.0),  # a date gone by: at once
    ],
)
async def test_rate_limit_reads_every_form_of_the_wait(
    headers: dict[str, str], waited: float
) -> None:
    sleeps = Sleeps()
    with serve_openai([Reply(status=429, headers=headers), GOOD]) as fake:
        async with client_for(fake, sleeps=sleeps) as client:
            assert await judge(client) == Verdict(**GOOD)
    assert sleeps.waits == [waited]


@pytest.mark.parametrize("status", [408, 502, 504])
async def test_timeouts_and_gateway_errors_are_retried(status: int) -> None:
    sleeps = Sleeps()
    with serve_openai([error(status), GOOD]) as fake:
        async with client_for(fake, sleeps=sleeps) as client:
            assert await judge(client) == Verdict(**GOOD)
    assert len(fake.completions) == 2 and len(sleeps.waits) == 1


async def test_backoff_doubles_with_jitter_between_attempts() -> None:
    sleeps = Sleeps()
    with serve_openai([error(500)] * 3 + [GOOD]) as fake:
        retry = RetryPolicy(attempts=4, backoff=0.1, max_wait=5.0, sleep=sleeps)
        async with LLMClient(endpoint(fake), retry=retry) as client:
            assert await judge(client) == Verdict(**GOOD)
    first, second, third = sleeps.waits
    assert 0.075 <= first <= 0.1 and 0.15 <= second <= 0.2 and 0.3 <= third <= 0.4


async def test_a_bad_request_is_not_retried() -> None:
    sleeps = Sleeps()
    with serve_openai([error(400), GOOD]) as fake:
        async with client_for(fake, sleeps=sleeps) as client:
            with pytest.raises(ModelUnavailableError, match="HTTP 400") as caught:
                await judge(client)
    assert caught.value.status == 400 and len(fake.completions) == 1 and sleeps.waits == []


async def test_rate_limit_retry_really_waits() -> None:
    with serve_openai([error(429, retry_after="0.2"), GOOD]) as fake:
        retry = RetryPolicy(attempts=2, max_wait=1.0)
        async with LLMClient(endpoint(fake), retry=retry) as client:
            loop = asyncio.get_running_loop()
            started = loop.time()
            await judge(client)
            assert loop.time() - started >= 0.2


async def test_server_error_then_success() -> None:
    sleeps = Sleeps()
    with serve_openai([error(500), GOOD]) as fake:
        async with client_for(fake, sleeps=sleeps) as client:
            assert await judge(client) == Verdict(**GOOD)
    assert len(sleeps.waits) == 1 and 0 < sleeps.waits[0] <= 0.001


async def test_persistent_503_raises_model_unavailable() -> None:
    with serve_openai([error(503, retry_after=1)] * 5) as fake:
        async with client_for(fake, attempts=3) as client:
            with pytest.raises(ModelUnavailableError) as caught:
                await judge(client)
    assert caught.value.status == 503
    assert caught.value.retry_after == 1.0
    assert len(fake.completions) == 3
    usage = client.usage()["judge"]
    assert (usage.calls, usage.failures) == (0, 1)


async def test_client_errors_are_not_retried_and_leak_no_key() -> None:
    with serve_openai([error(401), GOOD]) as fake:
        async with client_for(fake) as client:
            with pytest.raises(ModelUnavailableError) as caught:
                await judge(client)
    assert caught.value.status == 401
    assert len(fake.completions) == 1
    assert "sk-test-secret" not in str(caught.value)
    assert "sk-test-secret" not in repr(client.default)


async def test_unreadable_body_is_retried() -> None:
    with serve_openai([Reply(body=b"<html>bad gateway</html>"), GOOD]) as fake:
        async with client_for(fake) as client:
            assert await judge(client) == Verdict(**GOOD)
    assert len(fake.completions) == 2


async def test_empty_answers_raise_model_output_error() -> None:
    with serve_openai([Reply(content=None), ""]) as fake:
        async with client_for(fake) as client:
            with pytest.raises(ModelOutputError, match="empty answer"):
                await judge(client)


async def test_slow_answer_times_out_and_is_retried() -> None:
    with serve_openai([slow(5, GOOD), GOOD]) as fake:
        async with client_for(fake, timeout=0.3) as client:
            assert await judge(client) == Verdict(**GOOD)
    assert len(fake.completions) == 2


async def test_slow_answers_beyond_the_timeout_raise_model_unavailable() -> None:
    with serve_openai([slow(5, GOOD)] * 2) as fake:
        async with client_for(fake, timeout=0.3, attempts=2) as client:
            with pytest.raises(ModelUnavailableError, match="timed out"):
                await judge(client)


async def test_a_timeout_is_final_where_the_server_would_keep_generating() -> None:
    with serve_openai([slow(5, GOOD), GOOD]) as fake:
        async with client_for(fake, timeout=0.3, retry_timeouts=False) as client:
            with pytest.raises(ModelUnavailableError, match="timed out"):
                await judge(client)
    assert len(fake.completions) == 1


async def test_concurrency_is_bounded_per_endpoint() -> None:
    with serve_openai(router=lambda seen: slow(0.2, GOOD)) as fake:
        async with client_for(fake, max_concurrency=2) as client:
            results = await asyncio.gather(*(judge(client) for _ in range(6)))
    assert len(results) == 6
    assert fake.max_in_flight == 2


async def test_stage_endpoints_route_to_their_own_server() -> None:
    with serve_openai(router=lambda seen: GOOD) as first, serve_openai([GOOD]) as second:
        judge_endpoint = ModelEndpoint(base_url=second.base_url, api_key="k2", model="big")
        async with client_for(first, stages={"judge": judge_endpoint}) as client:
            await judge(client, stage="judge")
            await judge(client, stage="claims")
    assert [(s.stage, s.body["model"]) for s in second.completions] == [("judge", "big")]
    assert [(s.stage, s.body["model"]) for s in first.completions] == [("claims", "m1")]
    assert client.endpoint_for("judge") is judge_endpoint


def by_stage(seen: Seen) -> Any:
    tokens = {"one": 100, "two": 7}[seen.stage or ""]
    return slow(0.1, answer(GOOD, prompt_tokens=tokens, completion_tokens=tokens))


async def test_concurrent_meters_keep_their_own_usage() -> None:
    async def check(client: LLMClient, stage: str) -> UsageMeter:
        async with client.meter() as meter:
            await asyncio.gather(judge(client, stage=stage), judge(client, stage=stage))
            return meter

    with serve_openai(router=by_stage) as fake:
        async with client_for(fake) as client, client.meter() as everything:
            one, two = await asyncio.gather(check(client, "one"), check(client, "two"))
    assert one.to_dict().keys() == {"one"}
    assert two.to_dict().keys() == {"two"}
    assert (one.total().calls, one.total().input_tokens) == (2, 200)
    assert (two.total().calls, two.total().output_tokens) == (2, 14)
    assert everything.total().input_tokens == 214
    assert client.usage().keys() == {"one", "two"}


async def test_explicit_meter_and_usage_round_trip_as_json() -> None:
    meter = UsageMeter()
    script = [answer(GOOD, prompt_tokens=3, completion_tokens=4), malformed(), malformed()]
    with serve_openai(script) as fake:
        async with client_for(fake, output_price_per_mtok=1.0) as client:
            await judge(client, meter=meter)
            with pytest.raises(ModelOutputError):
                await judge(client, stage="claims", meter=meter)
    stored = json.loads(json.dumps(meter.to_dict()))
    again = UsageMeter.from_dict(stored).by_stage()
    assert again == meter.by_stage()
    assert again["judge"].calls == 1
    assert again["judge"].cost_usd == pytest.approx(4e-6)
    assert (again["claims"].calls, again["claims"].failures) == (2, 1)


async def test_fake_server_lists_its_model() -> None:
    with serve_openai(model="qwen2.5-1.5b") as fake:
        async with openai.AsyncOpenAI(base_url=fake.base_url, api_key="k", max_retries=0) as sdk:
            models = await sdk.models.list()
    assert [model.id for model in models.data] == ["qwen2.5-1.5b"]
    assert [(seen.method, seen.path) for seen in fake.requests] == [("GET", "/v1/models")]
