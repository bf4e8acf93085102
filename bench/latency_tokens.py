"""`factbot bench latency-tokens`: where a local-model check's tokens go, without running it.

On 2 cores the local Qwen model reads ~93 prompt tokens/s and writes 25-27 tokens/s (MODELS.md),
so a check's model seconds are set by how many prompt tokens the server must evaluate and how
many it writes. Those counts are deterministic, so they can be measured on a busy machine where
seconds cannot: the benchmark posts run through the real pipeline against the stand-ins of
`bench.latency` (a scripted capable model, loopback search and publishers), with the model
endpoint configured as the local one is (schema in the system prompt, one request at a time).
Every request is recorded and tokenised with the real model's tokenizer (the GGUF's vocabulary
only, in ChatML as the server renders it); the scripted answers stand for the model's output.

llama-cpp-python reuses the KV cache of the longest common prefix of the previous request
only; with its RAM cache (`LocalModelServer(prompt_cache=True)`) it reuses the longest prefix
among the states of earlier requests. Both are simulated on the recorded token sequences, so
`evaluated_*` is what each would have to evaluate. `estimated_seconds` applies the idle-machine
rates above; it is an estimate, not a measurement (see `bench latency-local` for seconds).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
from collections import defaultdict
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import click

from bench.latency_posts import POSTS, max_evidence_option
from bench.standins import CallLog, ModelStandin, ScriptedModel, SearchStandin, page_site, serving
from pipeline.llm.local import LocalTokenizer

PROMPT_TOKENS_PER_SECOND = 93.0
OUTPUT_TOKENS_PER_SECOND = 26.0


@dataclass(frozen=True)
class Request:
    """One recorded model request: its stage, messages and the answer it got."""

    stage: str
    system: str
    user: str
    answer: str


class RecordingStandin(ModelStandin):
    """A scripted model stand-in that records every chat completion it answers."""

    def __init__(self, log: CallLog, model: ScriptedModel) -> None:
        super().__init__("127.0.0.1", log, model=model, delay=0.0)
        self.scripted = model
        self.requests: list[Request] = []

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Any:
        """Answer as the stand-in does, and record the request."""
        if method == "POST":
            request = json.loads(body or b"{}")
            roles = {m["role"]: str(m.get("content", "")) for m in request.get("messages", [])}
            stage = headers.get("x-factbot-stage", "unknown")
            content = self.scripted.answer(stage, roles.get("user", ""))
            # the local server's grammar lets the model write only what the schema has
            schema = (request.get("response_format") or {}).get("schema") or _SCHEMAS.get(stage)
            if schema and content is not None:
                content = conform(content, schema, schema.get("$defs", {}))
            self.requests.append(
                Request(stage, roles.get("system", ""), roles.get("user", ""), json.dumps(content))
            )
        return super().answer(method, path, headers, body)


def _stage_schemas() -> dict[str, dict[str, Any]]:
    from pipeline.claims.decompose import _ClaimsAnswer
    from pipeline.judge.model import JudgeOutput
    from pipeline.judge.quotes import _QuotesAnswer

    return {
        "claims": _ClaimsAnswer.model_json_schema(),
        "extraction": _QuotesAnswer.model_json_schema(),
        "judge": JudgeOutput.model_json_schema(),
    }


_SCHEMAS = _stage_schemas()


def conform(value: Any, schema: dict[str, Any], defs: dict[str, Any]) -> Any:
    """Return value without the object keys schema does not allow (as a grammar would)."""
    while "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    if "anyOf" in schema:  # the variants of one answer differ in enums, not in keys
        schema = schema["anyOf"][0]
        while "$ref" in schema:
            schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    if isinstance(value, dict) and "properties" in schema:
        props = schema["properties"]
        return {k: conform(v, props[k], defs) for k, v in value.items() if k in props}
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        return [conform(v, schema["items"], defs) for v in value]
    return value


def _settings(
    data_dir: Path, search: SearchStandin, model: ModelStandin, hosts: list[str], max_evidence: int
) -> Any:
    from pydantic import SecretStr

    from bots.settings import (
        FetchSettings,
        ModelSettings,
        RetrievalSettings,
        SearchSettings,
        Settings,
    )

    return Settings(
        data_dir=data_dir,
        log_level="WARNING",
        # The stand-in publishers are unrated loopback hosts found by web search.
        retrieval=RetrievalSettings(unrated_sources="allow", max_evidence=max_evidence),
        search=SearchSettings(providers=["searxng"], searxng_url=search.base),
        fetch=FetchSettings(allowed_networks=tuple(f"{h}/32" for h in hosts)),
        model=ModelSettings(
            mode="endpoint",
            base_url=model.base_url,
            api_key=SecretStr("standin"),
            model="standin",
            supports_json_schema=False,  # as the local server: the schema goes in the prompt
            max_concurrency=1,
        ),
    )


def _common(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


class Tokens(Protocol):
    """What the accounting needs of a tokenizer (`LocalTokenizer` has it)."""

    def tokens(self, text: str) -> list[int]:
        """Return the tokens of text."""
        ...

    def chat_prompt(self, system: str, user: str) -> list[int]:
        """Return the tokens of a chat prompt up to the answer."""
        ...


def account(
    requests: list[Request], tokens: Tokens, states: list[list[int]]
) -> list[dict[str, Any]]:
    """Return each request's prompt, output and evaluated tokens (last-prefix and RAM cache).

    `states` holds the prompt and answer tokens of every earlier request of the server, oldest
    first; the requests are added to it.
    """
    rows = []
    for request in requests:
        prompt = tokens.chat_prompt(request.system, request.user)
        output = tokens.tokens(request.answer)
        last = _common(states[-1], prompt) if states else 0
        best = max((_common(s, prompt) for s in states), default=0)
        rows.append(
            {
                "stage": request.stage,
                "prompt_tokens": len(prompt),
                "system_tokens": len(tokens.tokens(request.system)),
                "output_tokens": len(output),
                "evaluated_no_cache": len(prompt) - last,
                "evaluated_ram_cache": len(prompt) - best,
            }
        )
        states.append(prompt + output)
    return rows


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    by_stage: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row in rows:
        stage = by_stage[row["stage"]]
        stage["calls"] += 1
        for key in ("prompt_tokens", "output_tokens", "evaluated_no_cache", "evaluated_ram_cache"):
            stage[key] += row[key]
    total: dict[str, float] = {
        k: sum(s[k] for s in by_stage.values()) for k in next(iter(by_stage.values()), {})
    }
    for cache in ("no_cache", "ram_cache"):
        total[f"estimated_seconds_{cache}"] = round(
            total.get(f"evaluated_{cache}", 0) / PROMPT_TOKENS_PER_SECOND
            + total.get("output_tokens", 0) / OUTPUT_TOKENS_PER_SECOND,
            1,
        )
    return {"total": total, "by_stage": {s: dict(v) for s, v in sorted(by_stage.items())}}


def measure(
    posts: int, model_path: Path, *, undecided: bool, max_evidence: int = 5
) -> dict[str, Any]:
    """Check the first `posts` benchmark posts against the stand-ins; return the token figures."""
    from bots.app.root import App
    from pipeline.inputs.posts import post_from_text

    tokens = LocalTokenizer(model_path)
    states: list[list[int]] = []
    log = CallLog()
    claims = [c for p in POSTS for c in p.claims]
    scripted = ScriptedModel(POSTS)
    scripted.undecided = undecided
    per_post = []
    with ExitStack() as stack:
        pages = [page_site(n, log, claims=claims, delay=0.0, robots_delay=0.0) for n in range(4)]
        search = SearchStandin(
            "127.0.0.1", log, claims=claims, sites=[p.base for p in pages], results=4, delay=0.0
        )
        model = RecordingStandin(log, scripted)
        stack.enter_context(serving(*pages, search, model))
        hosts = sorted({str(p.server_address[0]) for p in pages} | {"127.0.0.1"})
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="factbot-tokens-")))
        app = App(_settings(tmp, search, model, hosts, max_evidence))
        stack.callback(app.close)

        async def go() -> None:
            await app.start(warm=True)
            try:
                for scripted_post in POSTS[:posts]:
                    model.requests.clear()
                    text = scripted_post.text
                    check = await app.check(post_from_text(text, max_chars=2000))
                    figures = _summary(account(list(model.requests), tokens, states))
                    figures["claims"] = len(check.claims)
                    figures["label"] = check.verdict.label.value
                    per_post.append(figures)
            finally:
                await app.close_fetcher()

        asyncio.run(go())
    means = {
        key: round(statistics.fmean(p["total"].get(key, 0) for p in per_post), 1)
        for key in per_post[0]["total"]
    }
    return {
        "posts": len(per_post),
        "undecided": undecided,
        "max_evidence": max_evidence,
        "mean_per_post": means,
        "per_post": per_post,
    }


@click.command("latency-tokens")
@click.option("--posts", type=click.IntRange(1, len(POSTS)), default=len(POSTS), show_default=True)
@click.option(
    "--undecided/--decided",
    default=False,
    help="The judge finds nothing relevant, so refinement runs every round (the worst case).",
)
@max_evidence_option
@click.option(
    "--models-dir",
    type=click.Path(path_type=Path),
    default=Path(".models"),
    show_default=True,
    help="Where `factbot models pull` put the GGUF (only its vocabulary is read).",
)
@click.option("--report", "report_path", type=click.Path(path_type=Path), help="Write JSON here.")
def latency_tokens(
    posts: int, undecided: bool, max_evidence: int, models_dir: Path, report_path: Path | None
) -> None:
    """Count the local model's calls, prompt, evaluated and output tokens per post and stage.

    \b
    Examples:
      factbot bench latency-tokens --models-dir .models
      factbot bench latency-tokens --undecided --posts 3
    """
    from pipeline.llm.models import DEFAULT_MODEL

    path = models_dir / DEFAULT_MODEL.filename
    if not path.exists():
        raise click.ClickException(f"no {path}: run `factbot models pull`")
    figures = measure(posts, path, undecided=undecided, max_evidence=max_evidence)
    judged = sum("judge" in p["by_stage"] for p in figures["per_post"])
    if not undecided and judged < figures["posts"]:
        # a check that never reached the judge counts only its claims call: not a check's tokens
        raise click.ClickException(
            f"only {judged} of {figures['posts']} posts reached the judge: the stand-ins' pages "
            "were not read as evidence, so these figures are not a check's"
        )
    click.echo(json.dumps(figures, indent=2))
    if report_path:
        report_path.write_text(json.dumps(figures, indent=2), encoding="utf-8")
