"""The composition root: builds the store, embedder, fetcher, rater and judge once per process.

Open it once per process — a CLI command, the server, a worker — as an async context manager:

    async with App(settings) as app:        # opens the store, warms the embedder off the loop
        check = await app.check(post)
    # closed in reverse order: fetcher, local model server, store

Dependencies can be injected through the constructor (`store=`, `embedder=`, `clock=`), so tests
share one loaded embedder or a hand-moved clock. Everything heavy is otherwise created lazily on
first use, so `factbot --help` and `factbot show` stay fast.

The fetcher (its robots.txt cache, per-host and global limits and connection pool) is shared by
every check, page and reference fetch of the App. It belongs to the event loop that opened it:
`close_fetcher()` closes it there (the CLI before `asyncio.run` returns, the API at shutdown),
and a fetcher whose loop has ended is replaced, never reused.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import ssl
from datetime import datetime, timedelta
from functools import cached_property
from types import TracebackType
from typing import Literal, Self

import httpx

from bots.app.image_index import keep_check_images, page_keeper
from bots.app.models import Choice, LocalModel, choose, endpoint_from, stage_endpoints
from bots.app.search import live_enabled, live_web, new_probe, off_reason, reverse_image
from bots.logs import configure as configure_logging
from bots.runtime.candidates import CandidateSource
from bots.runtime.intake import PlatformService
from bots.runtime.monitor import gather_sources, monitor_handlers
from bots.runtime.monitor.scheduler import MonitorScheduler, Periodic
from bots.runtime.platform import (
    HandlesJobs,
    PlatformAdapter,
    PlatformContext,
    ReplySender,
    load_adapters,
)
from bots.runtime.requests import CheckRequests
from bots.runtime.reuse import ReuseIndex
from bots.runtime.review import ReviewQueue
from bots.runtime.worker import JobHandler
from bots.settings import Settings
from pipeline.credibility.importers import load_seed
from pipeline.credibility.policy import SourcePolicy
from pipeline.embedding.backends import build_embedder
from pipeline.embedding.embedder import LocalEmbedder
from pipeline.evidence.web import WebDeps
from pipeline.fetch.fetcher import Fetcher, FetchPolicy
from pipeline.graph.build import GraphBuilder
from pipeline.graph.verify import GraphVerifier
from pipeline.image.caption import STAGE as CAPTION_STAGE
from pipeline.image.caption import LocalCaptioner, VisionCaptioner
from pipeline.image.faces import DlibFaces, FaceDeps
from pipeline.image.gallery import FaceMatching
from pipeline.image.intake import ImageLimits
from pipeline.image.ocr import OcrEngine, ocr_engine
from pipeline.image.reverse.multi import ReverseDeps
from pipeline.image.stage import Captioner, ImageDeps
from pipeline.inputs.posts import (
    linked_page,
    requested_page,
    with_linked_page,
    with_requested_page,
)
from pipeline.judge.claimreview import Judge, ReviewMatchJudge
from pipeline.judge.model import ModelJudge
from pipeline.llm.client import LLMClient
from pipeline.records.domain import Check, Post
from pipeline.records.search_status import LiveSearch, SearchStatus
from pipeline.run import CheckConfig, CheckDeps, ModelDeps, Progress, ReferenceDeps, run_check
from pipeline.util.clock import SYSTEM, Clock
from pipeline.util.cpu import CpuPool
from pipeline.verifier.stance import StanceModel
from pipeline.verifier.verdict import Thresholds, VerifierJudge
from storage import Store
from storage.pagecache import StorePageCache
from storage.x_notes import NOTES_STATUS_KIND

log = logging.getLogger(__name__)


class App:
    """Long-lived services shared by the CLI, the HTTP API and (later) the workers."""

    def __init__(
        self,
        settings: Settings,
        *,
        store: Store | None = None,
        embedder: LocalEmbedder | None = None,
        clock: Clock = SYSTEM,
    ) -> None:
        self.settings = settings
        self.clock = clock
        self._store = store
        self._embedder = embedder
        self.local_model = LocalModel(settings)
        self.cpu = CpuPool(settings.cpu_threads)  # threads start on first use
        self._fetcher: Fetcher | None = None
        self._ocr: OcrEngine | None = None
        self._captioner: LocalCaptioner | None = None
        self._face_reader: DlibFaces | None = None
        self._fetcher_loop: asyncio.AbstractEventLoop | None = None
        self._tls: ssl.SSLContext | None = None
        self._closing: set[asyncio.Task[None]] = set()
        # Shared by every check: an offline machine probes each provider once per probe_ttl.
        self.search_probe = new_probe(settings.search)
        configure_logging(settings.log_level)

    @cached_property
    def model_choice(self) -> Choice:
        """Return which model path checks use: an endpoint, the local model, or none."""
        return choose(self.settings)

    @property
    def store(self) -> Store:
        """Return the database, opening it (and refreshing the built-in seed sources) once."""
        if self._store is None:
            store = Store.open(self.settings.database_path, clock=self.clock)
            load_seed(store.sources)
            self._store = store
        return self._store

    @property
    def embedder(self) -> LocalEmbedder:
        """Return the sentence embedder (the model loads on first use or at warm-up)."""
        if self._embedder is None:
            embedding = self.settings.embedding
            threads = embedding.threads
            if threads is None and self.model_choice == "local":
                threads = 1  # the llama.cpp server uses every core: see EmbeddingSettings.threads
            self._embedder = build_embedder(
                embedding.backend,
                embedding.model,
                batch_size=embedding.batch_size,
                threads=threads,
                cpu=self.cpu,
            )
        return self._embedder

    @property
    def judge_choice(self) -> Literal["verifier", "model", "hybrid"]:
        """Return which judge decides claims: the settings', `auto` resolved.

        `auto` is the language-model judge when an endpoint is configured, else the verifier
        (the local default). `model` or `hybrid` without any model falls back to the verifier.
        """
        wanted = self.settings.verifier.judge
        if wanted == "auto":
            return "model" if self.model_choice == "endpoint" else "verifier"
        if wanted != "verifier" and self.model_choice == "none":
            return "verifier"
        return wanted

    @cached_property
    def verifier(self) -> VerifierJudge:
        """Return factbot's trained verifier (the stance model loads on first use)."""
        vs = self.settings.verifier
        return VerifierJudge(
            StanceModel(vs.model_dir, batch_size=vs.batch_size),
            thresholds=Thresholds(
                support=vs.support, refute=vs.refute, mixed=vs.mixed, confident=vs.confident
            ),
            cpu=self.cpu,
        )

    @cached_property
    def graphs(self) -> GraphVerifier | None:
        """Return the graph verifier, or None when FACTBOT_GRAPH__ENABLED is false."""
        gs = self.settings.graph
        if not gs.enabled:
            return None
        return GraphVerifier(
            GraphBuilder(model=gs.model),
            self.embedder,
            threshold=gs.match_threshold,
            action_threshold=gs.action_threshold,
            threads=gs.threads,
        )

    @cached_property
    def reuse(self) -> ReuseIndex:
        """Return the index that answers repeated and near-duplicate posts from stored checks."""
        return ReuseIndex(self.store.reuse, self.embedder, self.settings.reuse, clock=self.clock)

    @cached_property
    def requests(self) -> CheckRequests:
        """Return the one way in: reuse a stored check, else submit a check job (and its pair)."""
        return CheckRequests(
            self.store,
            self.reuse if self.settings.reuse.enabled else None,
            max_attempts=self.settings.jobs.max_attempts,
        )

    @cached_property
    def service(self) -> PlatformService:
        """Return the service platform adapters hand their requests to."""
        return PlatformService(self.store, self.settings, clock=self.clock, requests=self.requests)

    @cached_property
    def adapters(self) -> dict[str, PlatformAdapter]:
        """Return the adapter of every platform whose credentials are set (imported lazily)."""
        context = PlatformContext(self.settings, self.store, self.service, self.clock)
        return load_adapters(context)

    def senders(self) -> dict[str, ReplySender]:
        """Return the outbound half of every configured platform, by name."""
        return {name: adapter.sender() for name, adapter in self.adapters.items()}

    def job_handlers(self) -> dict[str, JobHandler]:
        """Return the job handlers beyond checks and replies: each adapter's own job kinds.

        An adapter may be a `HandlesJobs` (e.g. X's Community Notes jobs); service parts such
        as the monitor and the review queue add theirs here.
        """
        handlers: dict[str, JobHandler] = {}
        for adapter in self.adapters.values():
            if isinstance(adapter, HandlesJobs):
                handlers.update(adapter.job_handlers())
        if self.settings.monitor.enabled:
            handlers.update(
                monitor_handlers(
                    self.store,
                    self.settings,
                    self.monitor_sources,
                    requests=self.requests,
                    review=ReviewQueue(self.store, self.settings, clock=self.clock),
                    clock=self.clock,
                )
            )
        return handlers

    @cached_property
    def monitor_sources(self) -> dict[str, CandidateSource]:
        """Return the proactive monitor's sources: what the configured adapters offer."""
        return gather_sources(self.adapters.values())

    def monitor_scheduler(self) -> MonitorScheduler:
        """Return the monitor's scheduler over its sources (run it with `run(stop)`)."""
        periodic = []
        x = self.settings.x
        if "x" in self.adapters and x.notes_enabled:  # notes' later status: helpful or not
            periodic.append(Periodic("x-notes-status", NOTES_STATUS_KIND, x.notes_status_seconds))
        return MonitorScheduler(
            self.store,
            self.settings.monitor,
            sorted(self.monitor_sources),
            clock=self.clock,
            max_attempts=self.settings.jobs.max_attempts,
            periodic=periodic,
        )

    @property
    def embedder_loaded(self) -> bool:
        """Return whether the embedder's model is loaded (warm-up done)."""
        return self._embedder is not None and self._embedder.loaded

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def start(self, *, warm: bool = True) -> None:
        """Open the store and, with warm, load the embedder and start the local model server.

        Both happen off the event loop: the embedder loads in the CPU pool, and the local
        server is forked from the loop's thread (it dies with that thread) and awaited.
        """
        _ = self.store
        if warm:
            await self.cpu.run(self.embedder.warm_up)
            if self.settings.reuse.enabled:
                await self.cpu.run(self.reuse.warm)
            if self.model_choice == "local":
                await self.local_model.endpoint_async()

    async def aclose(self) -> None:
        """Close in reverse order of opening: fetcher, local model server, store."""
        await self.close_fetcher()
        self.close()

    async def fetcher(self) -> Fetcher:
        """Return the shared SSRF-safe fetcher, opening it in the running event loop if needed."""
        loop = asyncio.get_running_loop()
        await self.tls()  # before the test below: no await between it and the new fetcher
        stale = None
        if self._fetcher is not None and (self._fetcher_loop is not loop or self._fetcher.closed):
            # Closed, or opened in another event loop (an earlier asyncio.run's, now ended): its
            # slots and robots.txt loads belong to that loop, so it is replaced, never reused.
            stale, self._fetcher = self._fetcher, None
        fetcher = self._fetcher
        if fetcher is None:
            # No await between the test above and here: concurrent checks get one fetcher.
            fetcher = self._fetcher = self._new_fetcher()
            self._fetcher_loop = loop
        if stale is not None:
            await stale.aclose()
        return fetcher

    async def close_fetcher(self) -> None:
        """Close the shared fetcher (call it before its event loop ends); next use reopens it."""
        fetcher, self._fetcher = self._fetcher, None
        if fetcher is not None:
            await fetcher.aclose()

    async def tls(self) -> ssl.SSLContext:
        """Return the TLS context every HTTP client of the App shares, built once off the loop."""
        if self._tls is None:
            # Loading the CA bundle takes 0.1-0.2 s: once per client, on the loop, it held it.
            context = await self.cpu.run(httpx.create_ssl_context, trust_env=False)
            self._tls = self._tls or context
        return self._tls

    def _new_fetcher(self) -> Fetcher:
        fs = self.settings.fetch
        return Fetcher(
            FetchPolicy(
                max_bytes=fs.max_bytes,
                connect_timeout=fs.connect_timeout,
                total_timeout=fs.total_timeout,
                max_redirects=fs.max_redirects,
                allow_private=fs.allow_private,
                allowed_networks=fs.allowed_networks,
                user_agent=fs.user_agent,
                max_concurrency=fs.max_concurrency,
                per_host=fs.per_host,
                respect_robots=fs.respect_robots,
                robots_timeout=fs.robots_timeout,
                robots_max_bytes=fs.robots_max_bytes,
                robots_ttl=fs.robots_ttl,
                robots_error_ttl=fs.robots_error_ttl,
            ),
            cache=StorePageCache(
                self.store.web,
                ttl=timedelta(hours=self.settings.references.page_cache_ttl_hours),
            ),
            verify=self._tls or True,
        )

    @property
    def rater(self) -> SourcePolicy:
        """Return the credibility policy over the sources table."""
        return SourcePolicy(self.store.sources, unrated=self.settings.retrieval.unrated_sources)

    def check_config(self) -> CheckConfig:
        """Return the per-check knobs from settings."""
        rs = self.settings.retrieval
        return CheckConfig(
            max_claims=self.settings.max_claims,
            candidates=rs.candidates,
            relevance_threshold=rs.relevance_threshold,
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

    def deps(
        self,
        *,
        web: WebDeps | None = None,
        references: ReferenceDeps | None = None,
        images: ImageDeps | None = None,
        sources: SearchStatus | None = None,
    ) -> CheckDeps:
        """Return the dependencies of a check."""
        return CheckDeps(
            index=self.store.documents,
            embedder=self.embedder,
            rater=self.rater,
            judge=ReviewMatchJudge(
                self.embedder, match_threshold=self.settings.retrieval.review_match_threshold
            ),
            web=web,
            references=references,
            cpu=self.cpu,
            images=images,
            graphs=self.graphs,
            sources=sources,
            verifier=self.verifier if self.judge_choice == "verifier" else None,
        )

    def ocr(self) -> OcrEngine | None:
        """Return the OCR engine of the image stage, built once (rapidocr loads models)."""
        name = self.settings.images.ocr
        if name == "none":
            return None
        if self._ocr is None or self._ocr.name != name:
            self._ocr = ocr_engine(name)
        return self._ocr

    async def image_deps(self, post: Post, *, llm: LLMClient | None = None) -> ImageDeps | None:
        """Return what the image stage needs for post, or None when it has nothing to read.

        Linked pages are read for their og:image only with live web search, which fetches
        pages anyway; a post's own attachments are always read. `llm` is the check's model
        client, for captions from a vision endpoint.
        """
        s = self.settings.images
        pages = s.linked_pages if self.web_enabled else 0
        if not s.enabled or not (post.image_refs or (pages and (post.links or post.url))):
            return None
        limits = ImageLimits(
            max_images=s.max_images,
            max_bytes=s.max_bytes,
            max_pixels=s.max_pixels,
            max_pages=pages,
        )
        fetcher = await self.fetcher()
        return ImageDeps(
            fetcher=fetcher,
            ocr=self.ocr(),
            captioner=self.captioner(llm),
            limits=limits,
            index=self.store.images,
            faces=self.face_deps(),
            page_images=page_keeper(
                self.store.images,
                fetcher,
                per_page=self.settings.image_index.search_page_images,
                limits=limits,
                cpu=self.cpu,
            )
            if self.web_enabled
            else None,
        )

    def face_reader(self) -> DlibFaces:
        """Return the face detector and embedder, built once (its models load on first use)."""
        side = self.settings.faces.detect_side
        if self._face_reader is None or self._face_reader.detect_side != side:
            self._face_reader = DlibFaces(detect_side=side)
        return self._face_reader

    def face_deps(self) -> FaceDeps | None:
        """Return what the image stage needs to find and name faces, or None (off, no gallery).

        With an empty gallery no face could be named, so none is looked for.
        """
        s = self.settings.faces
        if not s.enabled or not self.store.faces.count():
            return None
        return FaceDeps(
            reader=self.face_reader(),
            gallery=self.store.faces,
            matching=FaceMatching(threshold=s.threshold, margin=s.margin),
            max_faces=s.max_faces,
        )

    async def reverse(self, stack: contextlib.AsyncExitStack) -> ReverseDeps | None:
        """Return reverse image search over the keyed providers (its client closed with stack)."""
        settings = self.settings.reverse_image
        timeout = httpx.Timeout(settings.request_timeout, connect=settings.connect_timeout)
        http = await stack.enter_async_context(
            httpx.AsyncClient(timeout=timeout, verify=await self.tls())
        )
        return reverse_image(settings, http=http, cache=self.store.web)

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
            return self.local_captioner()
        return None

    def local_captioner(self) -> LocalCaptioner | None:
        """Return the local captioning model when one is configured (loaded on first use)."""
        directory = self.settings.images.caption_model_dir
        if directory is None:
            if self.settings.images.caption == "local":
                log.warning(
                    "no local captions: FACTBOT_IMAGES__CAPTION_MODEL_DIR is not set",
                    extra={"fix": "FACTBOT_IMAGES__CAPTION_MODEL_DIR=/path/to/model"},
                )
            return None
        if self._captioner is None or self._captioner.directory != directory:
            self._captioner = LocalCaptioner(directory)
        return self._captioner

    async def check(self, post: Post, *, before: datetime | None = None) -> Check:
        """Run a check (with web search and reference checks when configured) and store it."""
        result = await self.run_check(post, before=before)
        self.store.checks.save(result)
        return result

    async def run_check(
        self,
        post: Post,
        *,
        before: datetime | None = None,
        progress: Progress | None = None,
    ) -> Check:
        """Run a check and return it unsaved (a worker stores it with its job).

        A page given by URL (`pipeline.inputs.posts.page_request`) is fetched here and becomes
        the post. A post that is little more than a link is checked with the text of the page
        it shares (`with_linked_page`); the check keeps the post as it was given.
        """
        if requested_page(post) is not None:  # a page given by URL: the page is the post
            post = await with_requested_page(
                post,
                fetcher=await self.fetcher(),
                max_chars=self.settings.max_post_chars,
                cpu=self.cpu,
            )
        given = post
        if linked_page(post) is not None:
            post = await with_linked_page(
                post,
                fetcher=await self.fetcher(),
                max_chars=self.settings.max_post_chars,
                cpu=self.cpu,
            )
        async with contextlib.AsyncExitStack() as stack:
            web: WebDeps | None = None
            references: ReferenceDeps | None = None
            s = self.settings.search
            sources = SearchStatus(
                local_documents=self.store.documents.document_count(), off_reason=off_reason(s)
            )
            if self.web_enabled or self.checks_references:
                fetcher = await self.fetcher()
                if self.web_enabled:
                    timeout = httpx.Timeout(s.request_timeout, connect=s.connect_timeout)
                    http = await stack.enter_async_context(
                        httpx.AsyncClient(timeout=timeout, verify=await self.tls())
                    )
                    web, sources = await live_web(
                        s,
                        http=http,
                        cache=self.store.web,
                        fetcher=fetcher,
                        probe=self.search_probe,
                        local_documents=sources.local_documents,
                    )
                # Offline, every cited page would look dead: do not drop evidence for that.
                offline = sources.live is LiveSearch.UNREACHABLE
                mode = self.settings.references.check_reachable
                if self.checks_references and not (offline and mode == "auto"):
                    references = ReferenceDeps(
                        fetcher=fetcher,
                        cache=self.store.web,
                        ttl=timedelta(hours=self.settings.references.reachability_ttl_hours),
                    )
            deps = self.deps(web=web, references=references, sources=sources)
            model = await self.model_deps(stack, fallback=deps.judge)
            # after the model client: a vision endpoint may write the captions
            images = await self.image_deps(post, llm=model.llm if model else None)
            if images is not None and self.settings.reverse_image.keyed():
                images = dataclasses.replace(images, reverse=await self.reverse(stack))
            deps = dataclasses.replace(deps, images=images)
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
            keep_check_images(self.store.images, check)  # found again if a later post reuses one
        return check

    async def model_deps(
        self,
        stack: contextlib.AsyncExitStack,
        *,
        fallback: Judge,
        judge: Literal["verifier", "model", "hybrid"] | None = None,
    ) -> ModelDeps | None:
        """Return the model path's dependencies (closed with stack), or None without a model.

        None too when the verifier judges (`judge`, default `judge_choice`): no language model
        takes part in such a check, so none is started for it.
        """
        judge = judge or self.judge_choice
        choice = self.model_choice
        if choice == "none" or judge == "verifier":
            return None
        if choice == "endpoint":
            default = endpoint_from(self.settings.model)
            stages = stage_endpoints(self.settings.model, default)
        else:
            # Started from the event loop's own thread on purpose: the server is tied to the
            # thread that starts it (it dies with it), and a pool thread may go away. Only the
            # wait until it answers is asynchronous.
            default = await self.local_model.endpoint_async()
            stages = {}
        # Built in the pool: it imports the SDK and loads CA files (half a second on the loop).
        client = await self.cpu.run(LLMClient, default, stages=stages)
        llm = await stack.enter_async_context(client)
        return ModelDeps(
            llm=llm,
            judge=ModelJudge(llm, fallback=fallback, embedder=self.embedder),
            name=f"model:{default.model}",
            docs_per_call=self.settings.model.docs_per_call,
            refine_rounds=self.settings.model.refine_rounds,
            verifier=self.verifier if judge == "hybrid" else None,
        )

    def close(self) -> None:
        """Close the fetcher, stop the local model server and close the store if started.

        From async code, `await close_fetcher()` first: here the fetcher can only be closed in
        a loop of its own, or (inside its running loop) at that loop's next turn.
        """
        self._close_fetcher_outside()
        self.local_model.stop()
        self.cpu.close()
        graphs = self.__dict__.get("graphs")  # only when built (a cached property)
        if graphs is not None:
            graphs.close()
        if self._store is not None:
            self._store.close()
            self._store = None

    def _close_fetcher_outside(self) -> None:
        fetcher, loop = self._fetcher, self._fetcher_loop
        self._fetcher = None
        if fetcher is None:
            return
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not None:
            # Called from async code that did not await close_fetcher(): at the next turn.
            task = running.create_task(fetcher.aclose())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)
        elif loop is not None and not loop.is_closed():
            loop.run_until_complete(fetcher.aclose())  # an idle loop the caller drives by hand
        else:
            # Its loop has ended, and asyncio.run cancelled all it ran: nothing is in flight.
            asyncio.run(fetcher.aclose())
