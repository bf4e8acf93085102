"""The evidence-gathering and graph steps of one check, and the clock on every stage.

Both the first pass and each refinement round gather evidence the same way (web search when
configured -> retrieval -> relevance -> page screening -> ranking -> reachability) and verify
graphs the same way; a `Stages` object holds what they share for one check: the timings, the
page screen (a page with instruction-like text is never evidence) and the claim graphs so far.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from dataclasses import replace
from datetime import datetime
from typing import TypeVar

from pipeline.checking.deps import CheckConfig, CheckDeps, Progress
from pipeline.checking.languages import graph_reads
from pipeline.claims.queries import Query
from pipeline.evidence.ingest import Ingester
from pipeline.evidence.ranking import rank_evidence
from pipeline.evidence.reachability import keep_reachable
from pipeline.evidence.relevance import filter_relevant
from pipeline.evidence.retrieval import retrieve
from pipeline.evidence.suggested import gather_leads
from pipeline.evidence.web import gather_web_evidence
from pipeline.inputs.injection import PageScreen
from pipeline.records.domain import Claim, ClaimGraph, Evidence, Post, StageTiming
from pipeline.records.factchecks import ClaimMatch
from pipeline.records.search_status import LeadStatus, SearchStatus

T = TypeVar("T")


class Stages:
    """Run one check's timed stages and keep what they share (timings, page screen, graphs)."""

    def __init__(
        self,
        post: Post,
        *,
        deps: CheckDeps,
        config: CheckConfig,
        before: datetime | None,
        reference: datetime,
        progress: Progress | None = None,
    ) -> None:
        self.post = post
        self.deps = deps
        self.config = config
        self.before = before
        # Relative dates in a claim ("last week") are resolved against this time.
        self.reference = reference
        self.progress = progress
        self.timings: list[StageTiming] = []
        self.pages = PageScreen()
        self.graphs: dict[str, ClaimGraph] = {}
        self.outcomes: list[tuple[str, bool, str, float]] = []  # each live provider's answers
        self.matches: list[ClaimMatch] = []  # the published fact-checks matched to the claims
        self.leads: tuple[LeadStatus, ...] | None = None  # the post's leads, once read

    async def timed(self, stage: str, work: Awaitable[T]) -> T:
        """Return the result of `work`, recording how long `stage` took."""
        if self.progress is not None:
            await self.progress(stage, None)
        start = time.perf_counter()
        result = await work
        seconds = round(time.perf_counter() - start, 4)
        self.timings.append(StageTiming(stage=stage, seconds=seconds))
        if self.progress is not None:
            await self.progress(stage, seconds)
        return result

    async def gather(
        self, claims: list[Claim], queries: list[Query], suffix: str = ""
    ) -> list[Evidence]:
        """Return ranked, screened evidence for `queries` (searching the web first if set up)."""
        deps, config, post = self.deps, self.config, self.post
        leads_read = await self.read_leads()
        if deps.web is not None:
            web = deps.web
            with web.search.check_budget():
                searched = await self.timed(
                    "web" + suffix,
                    gather_web_evidence(
                        queries,
                        search=web.search,
                        fetcher=web.fetcher,
                        rater=deps.rater,
                        ingester=Ingester(
                            deps.index,
                            deps.embedder,
                            cpu=deps.cpu,
                            images=deps.images.page_images if deps.images else None,
                        ),
                        before=self.before,
                        pages_per_claim=web.pages_per_claim,
                        fact_check_sites=web.fact_check_sites,
                        sites_by_language=web.sites_by_language,
                        limit=web.results_per_provider,
                        cpu=deps.cpu,
                    ),
                )
            self.outcomes.extend(searched.outcomes())
        elif deps.sources is not None and deps.sources.blind and not leads_read:
            return []  # an empty index and no live search: nothing to retrieve, no model to load
        candidates = await self.timed(
            "retrieval" + suffix,
            retrieve(
                queries,
                index=deps.index,
                embedder=deps.embedder,
                limit=config.candidates,
                before=self.before,
                undated=config.undated,
            ),
        )
        relevant = await self.timed(
            "relevance" + suffix,
            filter_relevant(
                candidates,
                min_score=config.relevance_threshold,
                # A post is not evidence about itself.
                exclude_urls=frozenset(filter(None, (post.url, *post.links))),
            ),
        )
        relevant = self.pages.keep(relevant)
        evidence = await self.timed(
            "ranking" + suffix,
            rank_evidence(relevant, rater=deps.rater, max_per_claim=config.max_evidence),
        )
        if deps.references is not None:
            refs = deps.references
            evidence = await self.timed(
                "reachability" + suffix,
                keep_reachable(evidence, fetcher=refs.fetcher, cache=refs.cache, ttl=refs.ttl),
            )
        return evidence

    async def read_leads(self) -> bool:
        """Fetch the post's leads into the index once a check; return whether any was read.

        They go where search results go, through the same fetcher and credibility policy
        (`pipeline.evidence.suggested`); a refinement round does not fetch them again.
        """
        deps, post = self.deps, self.post
        if self.leads is None:
            self.leads = ()
            if post.leads and deps.lead_fetcher is not None:
                self.leads = await self.timed(
                    "leads",
                    gather_leads(
                        post.leads,
                        fetcher=deps.lead_fetcher,
                        rater=deps.rater,
                        ingester=Ingester(deps.index, deps.embedder, cpu=deps.cpu),
                        before=self.before,
                        own=[u for u in (post.url, *post.links) if u],
                        cpu=deps.cpu,
                    ),
                )
        return any(lead.read for lead in self.leads)

    async def verify(self, claims: list[Claim], evidence: list[Evidence], suffix: str = "") -> None:
        """Build and verify the claims' graphs against `evidence` when graphs are switched on.

        Only claims the graph parser reads (`graph_reads`: English) get a graph.
        """
        deps = self.deps
        claims = [c for c in claims if graph_reads(c)]  # English spaCy parses English only
        if deps.graphs is not None and evidence and claims:
            found = await self.timed(
                "graphs" + suffix,
                deps.graphs.verify_claims(claims, evidence, reference=self.reference, cpu=deps.cpu),
            )
            self.graphs.update({g.claim_id: g for g in found})

    def search_status(self) -> SearchStatus:
        """Return the evidence sources the check reached: the start, updated by its searches."""
        start = self.deps.sources
        status = start.after(self.outcomes) if start is not None else SearchStatus()
        return replace(status, leads=self.leads) if self.leads else status

    def claim_graphs(self, claims: list[Claim]) -> tuple[ClaimGraph, ...]:
        """Return the graphs found so far, in claim order."""
        return tuple(self.graphs[c.id] for c in claims if c.id in self.graphs)
