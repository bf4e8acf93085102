"""What one check needs: its knobs and the dependencies the composition root builds once.

Kept apart from the order of the stages (`pipeline.run`) so the stage helpers in this package
can name them without importing the orchestration.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import timedelta

from pipeline.embedding.embedder import Embedder
from pipeline.evidence.ranking import Rater
from pipeline.evidence.web import WebDeps
from pipeline.factchecks.matching import FactCheckMatcher
from pipeline.fetch.fetcher import Fetcher
from pipeline.graph.verify import GraphVerifier
from pipeline.image.stage import ImageDeps
from pipeline.inputs.language import LanguageIdentifier
from pipeline.judge.claimreview import Judge
from pipeline.judge.model import ModelJudge
from pipeline.llm.client import LLMClient
from pipeline.ports import EvidenceIndex, ReachabilityCache
from pipeline.records.search_status import SearchStatus
from pipeline.util.cpu import CpuPool
from pipeline.util.i18n import Catalogues
from pipeline.verifier.verdict import VerifierJudge

# Told (stage, None) when a stage starts and (stage, seconds) when it ends; must not raise.
# Awaited, so a caller that records it (in a database) can do so off the event loop.
Progress = Callable[[str, float | None], Awaitable[None]]


@dataclass(frozen=True)
class CheckConfig:
    """Tunable knobs of one check."""

    max_claims: int = 5
    candidates: int = 40
    relevance_threshold: float = 0.60
    max_evidence: int = 5
    undated: str = "include"


@dataclass(frozen=True)
class ReferenceDeps:
    """What the reachability check of cited references needs."""

    fetcher: Fetcher
    cache: ReachabilityCache
    ttl: timedelta


@dataclass(frozen=True)
class CheckDeps:
    """What the stages need, built once by the composition root."""

    index: EvidenceIndex
    embedder: Embedder
    rater: Rater
    judge: Judge
    web: WebDeps | None = None  # live web search; None keeps to the local index
    references: ReferenceDeps | None = None  # reachability check; None skips it
    cpu: CpuPool | None = None  # CPU-bound work; None: the event loop's default executor
    images: ImageDeps | None = None  # the image stage; None ignores a post's images
    graphs: GraphVerifier | None = None  # RAV's graph verification; None turns it off
    sources: SearchStatus | None = None  # what evidence sources the check starts with
    # factbot's trained verifier: decides claims on the path without a language model
    verifier: VerifierJudge | None = None
    # the language model that splits posts into claims and queries for the verifier (one call);
    # None: the heuristic claims stage, no model at all
    claims_llm: LLMClient | None = None
    # identifies the post's and each claim's language; None: scripts alone keep the English-only
    # stance model off claims in other scripts (pipeline.checking.languages)
    languages: LanguageIdentifier | None = None
    # the reply catalogues in use (FACTBOT_LANGUAGES): a reply is in the post's language where
    # one has it, else in English with a notice
    replies: Catalogues = field(default_factory=Catalogues)
    # the operator's index of published fact-checks, matched before evidence retrieval
    # (pipeline.checking.published); None: no fact-check index
    factchecks: FactCheckMatcher | None = None
    # fetches the pages suggested as evidence (`Post.leads`, pipeline.evidence.suggested) beside
    # the search results; None: a post's leads are not read
    lead_fetcher: Fetcher | None = None


@dataclass(frozen=True)
class ModelDeps:
    """The language-model path: its client and judge, and how far refinement may go."""

    llm: LLMClient
    judge: ModelJudge
    name: str = "model"
    docs_per_call: int = 4
    refine_rounds: int = 2
    # The hybrid judge: where the verifier is confident and disagrees, code takes its verdict.
    verifier: VerifierJudge | None = None
