"""What one check needs, made from the settings and the process's shared resources.

`CheckFactory.run_check(post)` assembles a check's dependencies (`CheckDeps`, `ModelDeps`,
`ImageDeps`, web search, reference checks) from `bots.app.resources.Resources` and runs the
pipeline. It builds no client: the fetcher, the search and reverse-image HTTP clients and the
model client are the process's (one per event loop), so a check costs no connection set-up,
no CA-bundle load and no SDK import.
"""

from __future__ import annotations

import dataclasses
import logging
from datetime import datetime, timedelta

from bots.app.image_index import keep_check_images, page_keeper
from bots.app.model_choice import JudgeChoice, judge_for
from bots.app.resources import Resources
from bots.app.search import live_enabled, live_web, off_reason, reverse_image
from bots.settings import Settings
from pipeline.credibility.policy import SourcePolicy
from pipeline.evidence.web import WebDeps
from pipeline.image.caption import STAGE as CAPTION_STAGE
from pipeline.image.caption import VisionCaptioner
from pipeline.image.faces import FaceDeps
from pipeline.image.gallery import FaceMatching
from pipeline.image.intake import ImageLimits
from pipeline.image.reverse.multi import ReverseDeps
from pipeline.image.stage import Captioner, ImageDeps
from pipeline.inputs.posts import linked_page, requested_page, with_linked_page, with_requested_page
from pipeline.judge.claimreview import Judge, ReviewMatchJudge
from pipeline.judge.model import ModelJudge
from pipeline.llm.client import LLMClient
from pipeline.records.domain import Check, Post
from pipeline.records.search_status import LiveSearch, SearchStatus
from pipeline.run import CheckConfig, CheckDeps, ModelDeps, Progress, ReferenceDeps, run_check

log = logging.getLogger(__name__)


class CheckFactory:
    """Makes each check's dependencies from settings and shared resources, and runs checks."""

    def __init__(self, settings: Settings, resources: Resources) -> None:
        self.settings = settings
        self.resources = resources
        self.replies = settings.reply_catalogues()  # FACTBOT_LANGUAGES, loaded once

    @property
    def judge_choice(self) -> JudgeChoice:
        """Return which judge decides claims: the settings', `auto` resolved (`judge_for`)."""
        return judge_for(self.settings, self.resources.model_choice)

    @property
    def rater(self) -> SourcePolicy:
        """Return the credibility policy over the sources table."""
        store = self.resources.store
        return SourcePolicy(store.sources, unrated=self.settings.retrieval.unrated_sources)

    def check_config(self, judge: JudgeChoice | None = None) -> CheckConfig:
        """Return the per-check knobs from settings for a judge (default: the configured one).

        The verifier reads passages down to its own relevance gate (FACTBOT_VERIFIER__RELEVANCE,
        fitted on AVeriTeC train): the stance model, not the bi-encoder's cosine, decides what
        bears on a claim. The language-model judges keep the retrieval gate.
        """
        rs = self.settings.retrieval
        judge = judge or self.judge_choice
        gate = self.settings.verifier.relevance if judge == "verifier" else rs.relevance_threshold
        return CheckConfig(
            max_claims=self.settings.max_claims,
            candidates=rs.candidates,
            relevance_threshold=gate,
            max_evidence=rs.max_evidence,
            undated=rs.undated_documents,
        )

    @property
    def web_enabled(self) -> bool:
        """Return whether live web search is configured."""
        return live_enabled(self.settings.search)

    @property
    def checks_references(self) -> bool:
        """Return whether cited URLs are checked to be reachable before a reply."""
        mode = self.settings.references.check_reachable
        return mode == "always" or (mode == "auto" and self.web_enabled)

    def deps(self, *, sources: SearchStatus | None = None) -> CheckDeps:
        """Return the dependencies of a check (without web search, references or images)."""
        r = self.resources
        return CheckDeps(
            index=r.store.documents,
            embedder=r.embedder,
            rater=self.rater,
            judge=ReviewMatchJudge(
                r.embedder, match_threshold=self.settings.retrieval.review_match_threshold
            ),
            cpu=r.cpu,
            graphs=r.graphs,
            sources=sources,
            verifier=r.verifier if self.judge_choice == "verifier" else None,
            languages=r.languages,
            replies=self.replies,
            factchecks=r.fact_checks if self.settings.factchecks.enabled else None,
        )

    async def image_deps(self, post: Post, *, llm: LLMClient | None = None) -> ImageDeps | None:
        """Return what the image stage needs for post, or None when it has nothing to read.

        Linked pages are read for their og:image only with live web search, which fetches
        pages anyway; a post's own attachments are always read. `llm`, the model client, may
        write captions from a vision endpoint.
        """
        s, r = self.settings.images, self.resources
        pages = s.linked_pages if self.web_enabled else 0
        if not s.enabled or not (post.image_refs or (pages and (post.links or post.url))):
            return None
        limits = ImageLimits(
            max_images=s.max_images, max_bytes=s.max_bytes, max_pixels=s.max_pixels, max_pages=pages
        )
        fetcher = await r.fetcher()
        keeper = page_keeper(
            r.store.images,
            fetcher,
            per_page=self.settings.image_index.search_page_images,
            limits=limits,
            cpu=r.cpu,
        )
        images = ImageDeps(
            fetcher=fetcher,
            ocr=r.ocr(),
            captioner=self.captioner(llm),
            limits=limits,
            index=r.store.images,
            faces=self.face_deps(),
            page_images=keeper if self.web_enabled else None,
        )
        if self.settings.reverse_image.keyed():
            images = dataclasses.replace(images, reverse=await self.reverse())
        return images

    def face_deps(self) -> FaceDeps | None:
        """Return what the image stage needs to name faces, or None (off, or no gallery)."""
        s, store = self.settings.faces, self.resources.store
        if not s.enabled or not store.faces.count():  # with no gallery no face could be named
            return None
        return FaceDeps(
            reader=self.resources.face_reader(),
            gallery=store.faces,
            matching=FaceMatching(threshold=s.threshold, margin=s.margin),
            max_faces=s.max_faces,
        )

    async def reverse(self) -> ReverseDeps | None:
        """Return reverse image search over the keyed providers (the shared HTTP client)."""
        http = await self.resources.reverse_http()
        return reverse_image(self.settings.reverse_image, http=http, cache=self.resources.store.web)

    def captioner(self, llm: LLMClient | None = None) -> Captioner | None:
        """Return the captioner FACTBOT_IMAGES__CAPTION chooses, or None.

        `vision`: the model client's caption-stage endpoint, when it declares image support;
        `local`: the caption model directory (loaded on first use); `auto`: the first of these
        that is configured; `off`: none. A choice that cannot be had is logged, and the images
        are read without captions.
        """
        mode = self.settings.images.caption
        if mode in ("auto", "vision"):
            if llm is not None and llm.endpoint_for(CAPTION_STAGE).supports_images:
                return VisionCaptioner(llm)
            if mode == "vision":
                log.warning(
                    "no vision captions: no model endpoint, or it does not read images",
                    extra={"fix": "FACTBOT_MODEL__SUPPORTS_IMAGES=true for a vision model"},
                )
                return None
        if mode in ("auto", "local"):
            return self.resources.local_captioner()
        return None

    async def claims_llm(self, judge: JudgeChoice | None = None) -> LLMClient | None:
        """Return the model that splits posts for the verifier, or None for heuristic claims.

        Only where the verifier judges (`judge`, default `judge_choice`) and
        FACTBOT_VERIFIER__CLAIMS is `model`; None too when no model can be had.
        """
        if (judge or self.judge_choice) != "verifier" or self.settings.verifier.claims != "model":
            return None
        return await self.resources.llm()

    async def model_deps(
        self, *, fallback: Judge, judge: JudgeChoice | None = None
    ) -> ModelDeps | None:
        """Return the model path's dependencies, or None without a model.

        None too when the verifier judges (`judge`, default `judge_choice`): no language model
        takes part in such a check, so none is started for it.
        """
        judge = judge or self.judge_choice
        if judge == "verifier":
            return None
        llm = await self.resources.llm()
        if llm is None:
            return None
        model = self.settings.model
        return ModelDeps(
            llm=llm,
            judge=ModelJudge(llm, fallback=fallback, embedder=self.resources.embedder),
            name=f"model:{llm.default.model}",
            docs_per_call=model.docs_per_call,
            refine_rounds=model.refine_rounds,
            verifier=self.resources.verifier if judge == "hybrid" else None,
        )

    async def _web(self, sources: SearchStatus) -> tuple[WebDeps | None, SearchStatus]:
        if not self.web_enabled:
            return None, sources
        r = self.resources
        web, status = await live_web(
            self.settings.search,
            http=await r.search_http(),
            cache=r.store.web,
            fetcher=await r.fetcher(),
            probe=r.search_probe,
            local_documents=sources.local_documents,
            sink=r.fact_check_cache.put if self.settings.factchecks.enabled else None,
        )
        return web, dataclasses.replace(status, fact_checks=sources.fact_checks)

    async def run_check(
        self, post: Post, *, before: datetime | None = None, progress: Progress | None = None
    ) -> Check:
        """Run a check and return it unsaved (a worker stores it with its job).

        A post of kind `page` (`pipeline.inputs.posts.page_request`) is fetched here and
        becomes the post. A post that is little more than a link is checked with the text of
        the page it shares (`with_linked_page`); the check keeps the post as it was given.
        """
        r, max_chars = self.resources, self.settings.max_post_chars
        if requested_page(post) is not None:  # kind `page`: the page is the post
            post = await with_requested_page(
                post, fetcher=await r.fetcher(), max_chars=max_chars, cpu=r.cpu
            )
        given = post
        if linked_page(post) is not None:
            post = await with_linked_page(
                post, fetcher=await r.fetcher(), max_chars=max_chars, cpu=r.cpu
            )
        sources = SearchStatus(
            local_documents=await r.store.call(r.store.documents.document_count),
            off_reason=off_reason(self.settings.search),
            fact_checks=(
                await r.store.call(r.store.fact_checks.fact_check_count)
                if self.settings.factchecks.enabled
                else None
            ),
        )
        web, sources = await self._web(sources)
        references = None
        # Offline, every cited page would look dead: do not drop evidence for that.
        offline = sources.live is LiveSearch.UNREACHABLE
        mode = self.settings.references.check_reachable
        if self.checks_references and not (offline and mode == "auto"):
            references = ReferenceDeps(
                fetcher=await r.fetcher(),
                cache=r.store.web,
                ttl=timedelta(hours=self.settings.references.reachability_ttl_hours),
            )
        deps = self.deps(sources=sources)
        model = await self.model_deps(fallback=deps.judge)
        # after the model client: a vision endpoint may write the captions
        images = await self.image_deps(post, llm=model.llm if model else None)
        deps = dataclasses.replace(
            deps,
            web=web,
            references=references,
            images=images,
            claims_llm=await self.claims_llm(),
            # pages suggested as evidence, read like search results (pipeline.evidence.suggested)
            lead_fetcher=await r.fetcher() if post.leads else None,
        )
        check = await run_check(
            post,
            deps=deps,
            config=self.check_config(),
            before=before,
            model=model,
            progress=progress,
        )
        check = check if post is given else dataclasses.replace(check, post=given)
        if self.settings.image_index.check_images and check.images.descriptions:
            keep_check_images(r.store.images, check)  # found again if a later post reuses one
        return check
