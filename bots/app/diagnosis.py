"""`factbot doctor`: the facts of this set-up, and each problem with the command that fixes it.

A new user who runs checks against an empty index with live search off gets "unverifiable"
for everything and no hint why. `diagnose` gathers what decides whether checks can work: the
settings in force (secrets masked), each evidence source and whether it answers (the local
index's size, every live search provider probed with short timeouts), the model path checks
will take, which platforms have credentials, and the database's health (read-only: it opens,
its migrations are current, `quick_check` passes). The CLI (`bots.cli.doctor`), `factbot serve`
at start and /readyz only render the `Diagnosis` this module returns.

Failure policy: `diagnose` never raises; whatever cannot be checked becomes a `Problem`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx

from bots.app.model_choice import choose, uses_model
from bots.app.search import build_providers, live_enabled, new_probe, off_reason, probe_targets
from bots.runtime.platform.contract import PLATFORMS
from bots.settings import Settings
from pipeline.errors import ConfigError
from pipeline.llm.local import llama_cpp_installed
from pipeline.llm.models import DEFAULT_MODEL
from pipeline.search.probe import SearchProbe
from storage.health import DatabaseHealth, database_health

log = logging.getLogger(__name__)

Severity = Literal["error", "warning"]
CORPUS_HINT = "factbot ingest ../shared/data/corpus/recovery/articles.jsonl"
# The setting that gives each platform its credentials (the first one `configured` needs).
_CREDENTIALS = {
    "discord": "FACTBOT_DISCORD__TOKEN",
    "slack": "FACTBOT_SLACK__BOT_TOKEN, or FACTBOT_SLACK__CLIENT_ID for OAuth",
}


@dataclass(frozen=True)
class Problem:
    """Something that keeps checks from working as they should, and how to fix it."""

    severity: Severity  # error: checks fail or cannot find evidence; warning: they are weaker
    what: str
    fix: str

    def to_json(self) -> dict[str, str]:
        """Return the problem as a JSON object."""
        return {"severity": self.severity, "what": self.what, "fix": self.fix}


@dataclass(frozen=True)
class Source:
    """One evidence source: the local index or a live search provider."""

    name: str
    kind: Literal["local index", "live search", "reverse image search"]
    answers: bool
    detail: str
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """Return the source as a JSON object."""
        return {
            "name": self.name,
            "kind": self.kind,
            "answers": self.answers,
            "detail": self.detail,
            "seconds": self.seconds,
        }


@dataclass(frozen=True)
class Diagnosis:
    """Every fact `factbot doctor` reports."""

    settings: dict[str, Any]  # in force, secrets masked
    sources: tuple[Source, ...]
    live_search: str  # "on" or why it is off
    model: dict[str, Any]  # choice, path checks use, status
    embedder: dict[str, Any]
    platforms: dict[str, dict[str, Any]]
    database: DatabaseHealth
    problems: tuple[Problem, ...] = field(default=())
    web_citations: str = ""  # which publishers a page found by live search may be cited from
    queue_engine: dict[str, Any] = field(default_factory=lambda: {"engine": "builtin"})

    @property
    def errors(self) -> tuple[Problem, ...]:
        """Return the problems that are errors."""
        return tuple(p for p in self.problems if p.severity == "error")

    def to_json(self, *, with_settings: bool = True) -> dict[str, Any]:
        """Return the diagnosis as a JSON object (without settings for /readyz)."""
        body: dict[str, Any] = {
            "status": "ok" if not self.problems else ("error" if self.errors else "warning"),
            "sources": [s.to_json() for s in self.sources],
            "live_search": self.live_search,
            "web_citations": self.web_citations,
            "index": {
                "documents": self.database.documents,
                "passages": self.database.passages,
            },
            "model": self.model,
            "embedder": self.embedder,
            "platforms": self.platforms,
            "database": self.database.to_json(),
            "queue_engine": self.queue_engine,
            "problems": [p.to_json() for p in self.problems],
        }
        if with_settings:
            body["settings"] = self.settings
        return body


def masked_settings(settings: Settings) -> dict[str, Any]:
    """Return the settings in force as JSON, every secret shown as "**********" or null."""
    data = settings.model_dump(mode="json")  # SecretStr dumps as "**********"
    return dict(data)


async def diagnose(
    settings: Settings,
    *,
    probe: SearchProbe | None = None,
    integrity: bool = True,
    http: httpx.AsyncClient | None = None,
) -> Diagnosis:
    """Return the facts of this set-up; probe (default: a fresh one) asks the providers."""
    problems: list[Problem] = []
    url = settings.database_url.get_secret_value() if settings.database_url else None
    database = await asyncio.to_thread(
        database_health, settings.database_path, integrity=integrity, database_url=url
    )
    problems += _database_problems(database)
    async with contextlib.AsyncExitStack() as stack:
        client = http if http is not None else await stack.enter_async_context(httpx.AsyncClient())
        probe = probe or new_probe(settings.search)
        sources, live = await _sources(settings, database, probe, client)
        sources = (*sources, *reverse_image_sources(settings))
        model = await _model(settings, client, problems)
    problems += _source_problems(settings, sources)
    engine: dict[str, Any] = {"engine": "builtin"}
    if settings.queue.engine == "saq":
        from bots.runtime.workers.saq_engine import depth

        engine = await depth(settings)
        if "error" in engine:
            problems.append(
                Problem(
                    "error",
                    f"saq's backend {engine['backend']} does not answer: {engine['error']}",
                    "check FACTBOT_QUEUE__URL (or FACTBOT_DATABASE_URL) and that the server runs",
                )
            )
    return Diagnosis(
        settings=masked_settings(settings),
        sources=sources,
        live_search=live,
        web_citations=web_citations(settings.retrieval.unrated_sources) if live == "on" else "",
        model=model,
        embedder=_embedder(settings, problems),
        platforms=_with_notes(settings, _platforms(settings, problems)),
        database=database,
        problems=tuple(problems),
        queue_engine=engine,
    )


async def _sources(
    settings: Settings, database: DatabaseHealth, probe: SearchProbe, http: httpx.AsyncClient
) -> tuple[tuple[Source, ...], str]:
    documents = database.documents
    local = Source(
        "local index",
        "local index",
        answers=bool(documents),
        detail=(
            f"{documents} documents, {database.passages} passages"
            + (f", version {database.index_version}" if database.index_version else "")
            if documents is not None
            else ("empty (no database yet)" if not database.exists else "not readable")
        ),
    )
    search = settings.search
    if not live_enabled(search):
        return (local,), f"off: {off_reason(search)}"
    providers = build_providers(search, http)
    statuses = await probe.check(probe_targets(providers), http)
    live = [
        Source(
            st.provider,
            "live search",
            answers=st.reachable,
            detail="answers" if st.reachable else st.reason,
            seconds=st.seconds,
        )
        for st in statuses
    ]
    return (local, *live), "on"


def web_citations(unrated: str) -> str:
    """Say which pages found by live search can become references, under the unrated policy."""
    if unrated == "allow":
        return "any publisher not rated unusable or blocked (unrated ones after every rated tier)"
    return (
        "rated publishers only (high, medium, low; wikipedia.org is seeded as low): pages of "
        "unrated publishers are skipped before fetching "
        f"(FACTBOT_RETRIEVAL__UNRATED_SOURCES={unrated}; more: factbot sources import)"
    )


def reverse_image_sources(settings: Settings) -> tuple[Source, ...]:
    """Return each reverse image provider as a source: on when its key is set (not probed:
    every look-up is a paid request)."""
    ri = settings.reverse_image
    keyed = set(ri.keyed())
    on = settings.images.enabled and ri.pages_per_image > 0
    found = []
    for name, sends in _REVERSE_SENDS.items():
        setting = f"FACTBOT_REVERSE_IMAGE__{name.upper()}_API_KEY"
        if name not in keyed:
            detail = f"off: no key ({setting})"
        elif not on:
            detail = "key set, but images are not read (FACTBOT_IMAGES__ENABLED) or looked up"
        else:
            detail = f"key set: a post's images are sent to it ({sends})"
        found.append(
            Source(name, "reverse image search", answers=on and name in keyed, detail=detail)
        )
    return tuple(found)


_REVERSE_SENDS = {
    "serpapi": "image URL only",
    "vision": "image URL, or its bytes when it has no public URL",
    "tineye": "image URL, or its bytes when it has no public URL",
}


def _source_problems(settings: Settings, sources: tuple[Source, ...]) -> list[Problem]:
    problems = []
    local, live = sources[0], [s for s in sources[1:] if s.kind == "live search"]
    down = [s for s in live if not s.answers]
    for source in down:
        problems.append(
            Problem(
                "warning" if len(down) < len(live) else "error",
                f"live search provider {source.name} does not answer: {source.detail}",
                "check the network (or a proxy: HTTPS_PROXY), or leave it out of "
                "FACTBOT_SEARCH__PROVIDERS",
            )
        )
    if not local.answers:
        reachable = any(s.answers for s in live)
        if reachable:
            problems.append(
                Problem(
                    "warning",
                    "the local evidence index is empty: checks rely on live search alone",
                    CORPUS_HINT,
                )
            )
        else:
            how = "live search is off" if not live else "no live search provider answers"
            problems.append(
                Problem(
                    "error",
                    f"no evidence source: the local index is empty and {how}, so every check "
                    "will answer 'factbot could not search'",
                    f"{CORPUS_HINT}"
                    + ("" if live else ", or turn live search on: FACTBOT_SEARCH__ENABLED=true"),
                )
            )
    return problems


def _database_problems(database: DatabaseHealth) -> list[Problem]:
    if not database.exists:
        return [
            Problem(
                "warning",
                f"no database yet at {database.path}",
                f"{CORPUS_HINT} (any factbot command creates it)",
            )
        ]
    if not database.opens or database.error:
        return [
            Problem(
                "error",
                f"the database at {database.path} cannot be read: {database.error}",
                "check its permissions and FACTBOT_DATA_DIR; a damaged file: move it away and "
                f"rebuild the index ({CORPUS_HINT})",
            )
        ]
    problems = []
    if database.integrity not in ("ok", ""):
        problems.append(
            Problem(
                "error",
                f"the database fails its integrity check: {database.integrity}",
                f"sqlite3 {database.path} '.recover' > recovered.sql, or rebuild it "
                f"({CORPUS_HINT})",
            )
        )
    if database.pending:
        problems.append(
            Problem(
                "warning",
                f"{len(database.pending)} database migrations are pending "
                f"({', '.join(database.pending)})",
                "they are applied on the next start: factbot serve (or any factbot command)",
            )
        )
    return problems


VERIFIER_PATH = "verifier judge (factbot's stance model and fact-check reviews; template replies)"


async def _model(
    settings: Settings, http: httpx.AsyncClient, problems: list[Problem]
) -> dict[str, Any]:
    ms = settings.model
    try:
        choice = choose(settings)
    except ConfigError as exc:
        problems.append(Problem("error", str(exc).split(": run")[0], "make model"))
        return {"mode": ms.mode, "choice": None, "path": "none", "status": str(exc)}
    if choice == "endpoint":
        status = await _endpoint_answers(settings, http)
        if status != "answers":
            problems.append(
                Problem(
                    "error",
                    f"the model endpoint {ms.base_url} {status}",
                    "check FACTBOT_MODEL__BASE_URL and FACTBOT_MODEL__API_KEY",
                )
            )
        path = f"model endpoint {ms.base_url} ({ms.model})"
    elif choice == "local":
        status, path = "pulled", f"local model {DEFAULT_MODEL.name} ({settings.models_dir})"
    else:
        status = "no model" if ms.mode == "none" else "no model found"
        path = VERIFIER_PATH
        if ms.mode == "auto" and settings.verifier.judge in ("model", "hybrid"):
            why = "" if llama_cpp_installed() else " and llama-cpp-python is not installed"
            problems.append(
                Problem(
                    "warning",
                    f"no language model: the local model is not pulled in {settings.models_dir}"
                    f"{why}, so the verifier judges instead of the {settings.verifier.judge} "
                    "judge FACTBOT_VERIFIER__JUDGE asks for",
                    "make model (or pip install '.[local]' && factbot models pull), or set "
                    "FACTBOT_MODEL__BASE_URL to an OpenAI-compatible endpoint",
                )
            )
    if choice != "none" and not uses_model(settings, choice):
        # e.g. the local default: the model is there, but the verifier judges heuristic claims
        path = f"{VERIFIER_PATH}; {path} is ready, not called (FACTBOT_VERIFIER__JUDGE)"
    return {
        "mode": ms.mode,
        "choice": choice,
        "path": path,
        "status": status,
        # hashing the 23 MB model takes tens of ms: off the event loop (/readyz runs this)
        "verifier": await asyncio.to_thread(_verifier, settings, problems),
    }


def _verifier(settings: Settings, problems: list[Problem]) -> dict[str, Any]:
    """Return the stance model's facts; a missing or altered model is an error with its fix."""
    from pipeline.verifier.stance import bundled_model_dir, read_manifest

    directory = settings.verifier.model_dir or bundled_model_dir()
    try:
        manifest = read_manifest(directory)
    except ConfigError as exc:
        problems.append(Problem("error", str(exc).split(": ", 1)[0], str(exc).split(": ", 1)[-1]))
        return {"judge": settings.verifier.judge, "model": str(directory), "status": "broken"}
    return {
        "judge": settings.verifier.judge,
        "model": str(directory),
        "name": manifest.get("name"),
        "status": "verified",
    }


async def _endpoint_answers(settings: Settings, http: httpx.AsyncClient) -> str:
    """Return "answers", or what went wrong asking the endpoint for its models."""
    ms = settings.model
    key = ms.api_key.get_secret_value() if ms.api_key else ""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    url = f"{(ms.base_url or '').rstrip('/')}/models"
    try:
        response = await http.get(url, headers=headers, timeout=httpx.Timeout(5.0, connect=2.0))
    except httpx.HTTPError as exc:
        return f"does not answer ({type(exc).__name__})"
    if response.status_code in (401, 403):
        return f"refuses the API key (HTTP {response.status_code})"
    if response.status_code >= 500:
        return f"fails (HTTP {response.status_code})"
    return "answers"


def _embedder(settings: Settings, problems: list[Problem]) -> dict[str, Any]:
    ref = settings.embedding.model
    if ref == "bundled":
        try:
            if settings.embedding.backend == "onnx":  # the default: no torch package needed
                from pipeline.embedding.onnx import bundled_onnx_path

                path = bundled_onnx_path()
            elif settings.embedding.backend == "e5":
                from pipeline.embedding.e5 import bundled_e5_path

                path = bundled_e5_path()
            else:
                from pipeline.embedding.embedder import bundled_model_path

                path = bundled_model_path()
        except ConfigError as exc:
            problems.append(Problem("error", str(exc), "pip install -c constraints.txt -e ."))
            return {"model": ref, "path": None, "status": "missing"}
    else:
        path = Path(ref)
    if not path.exists():
        problems.append(
            Problem(
                "error",
                f"the embedding model {ref} is not at {path}",
                "set FACTBOT_EMBEDDING__MODEL to a local model folder, or to 'bundled'",
            )
        )
        return {"model": ref, "path": str(path), "status": "missing"}
    return {"model": ref, "path": str(path), "status": "present"}


def _platforms(settings: Settings, problems: list[Problem]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name in PLATFORMS:
        group = getattr(settings, name, None)
        if group is None:
            out[name] = {"available": False, "credentials": False, "detail": "not in this build"}
            continue
        configured = bool(getattr(group, "configured", False))
        detail = "credentials set" if configured else f"no credentials: set {_setting_for(name)}"
        problem = group.problem() if hasattr(group, "problem") else None
        if problem:
            problems.append(Problem("error", f"{name}: {problem}", problem.split(": ", 1)[-1]))
            detail = problem
        out[name] = {"available": True, "credentials": configured, "detail": detail}
    return out


def _with_notes(
    settings: Settings, platforms: dict[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """Add the X Community Notes standing (admission, the day's limit) when X is configured."""
    from storage.x_notes import standing_at

    x = platforms.get("x")
    if not x or not x.get("credentials"):
        return platforms
    url = settings.database_url.get_secret_value() if settings.database_url else None
    summary = standing_at(settings.database_path, database_url=url)
    if summary is not None:
        x["notes"] = summary.to_json()
    return platforms


def _setting_for(platform: str) -> str:
    return _CREDENTIALS.get(platform, f"FACTBOT_{platform.upper()}__*")
