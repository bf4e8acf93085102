"""What a process opens once and every check shares, closed in reverse order of opening.

`Resources` owns the process-lifetime parts: the store, the CPU pool, the embedder, the local
model server, the image readers (OCR, captioner, faces), the trained verifier and the graph
verifier, and the clients bound to an event loop (`LoopClients`): the SSRF-safe fetcher, ONE
search HTTP client, ONE reverse-image HTTP client and ONE model (LLM) client. Each is made on
first use and its closer pushed on one `contextlib.AsyncExitStack`, so `aclose()` closes them
all, newest first; nothing a check uses is built per check.

A loop's clients (their connection pools, robots.txt loads and semaphores) belong to the event
loop that opened them: asked for from another loop (the CLI runs one `asyncio.run` after
another), they are closed and made again, never reused. `close()` is the synchronous way out
for code that holds no loop (tests, the CLI after its loop ended).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import logging
import ssl
from collections.abc import Awaitable, Callable
from datetime import timedelta
from functools import cached_property
from typing import Any, TypeVar

import httpx

from bots.app.factcheck_cache import FactCheckCache
from bots.app.model_choice import (
    Choice,
    LocalModel,
    choose,
    endpoint_from,
    stage_endpoints,
    uses_model,
)
from bots.app.search import new_probe
from bots.logs import configure as configure_logging
from bots.settings import Settings
from pipeline.credibility.importers import load_seed
from pipeline.embedding.backends import build_embedder
from pipeline.embedding.e5 import E5_MODEL_NAME
from pipeline.embedding.embedder import LocalEmbedder
from pipeline.embedding.onnx import ONNX_MODEL_NAME
from pipeline.factchecks.matching import FactCheckMatcher, MatchConfig
from pipeline.fetch.fetcher import Fetcher
from pipeline.graph.build import GraphBuilder
from pipeline.graph.verify import GraphVerifier
from pipeline.image.caption import LocalCaptioner
from pipeline.image.faces import DlibFaces
from pipeline.image.ocr import OcrEngine, ocr_engine
from pipeline.inputs.language import LanguageIdentifier
from pipeline.llm.client import LLMClient
from pipeline.util.clock import SYSTEM, Clock
from pipeline.util.cpu import CpuPool
from pipeline.verifier.stance import StanceModel
from pipeline.verifier.verdict import VerifierJudge
from storage import Store
from storage.pagecache import StorePageCache

log = logging.getLogger(__name__)
T = TypeVar("T")


class LoopClients:
    """The clients of one event loop, by name, closed together (in that loop when it runs)."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None
        self.made: dict[str, Any] = {}
        self.stack = contextlib.AsyncExitStack()
        self.constructed = 0  # clients made since the process started (a test counts them)
        self._making: dict[str, asyncio.Lock] = {}  # concurrent first uses make one client
        self._closing: set[asyncio.Task[None]] = set()

    async def get(self, name: str, make: Callable[[], Awaitable[Any]]) -> Any:
        """Return the running loop's client `name`, making it (and closing a stale set) once."""
        loop = asyncio.get_running_loop()
        if self.loop is not loop:
            await self.aclose()  # opened in another (ended) loop: replaced, never reused
            self.loop, self._making = loop, {}
        async with self._making.setdefault(name, asyncio.Lock()):
            found = self.made.get(name)
            if found is None or _closed(found):
                found = self.made[name] = await make()
                self.constructed += 1
                self.stack.push_async_callback(_close_client, found, loop)
        return found

    async def aclose(self) -> None:
        """Close every client in the running loop; the next `get` makes new ones."""
        stack, self.stack, self.made = self.stack, contextlib.AsyncExitStack(), {}
        await stack.aclose()

    def close(self) -> None:
        """Close every client from synchronous code (at the running loop's next turn)."""
        if not self.made:
            return
        loop = self.loop
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not None:
            task = running.create_task(self.aclose())
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)
        elif loop is not None and not loop.is_closed() and not loop.is_running():
            loop.run_until_complete(self.aclose())  # an idle loop the caller drives by hand
        else:
            # Its loop has ended, and asyncio.run cancelled all it ran: nothing is in flight.
            asyncio.run(self.aclose())


async def _close_client(client: Any, loop: asyncio.AbstractEventLoop) -> None:
    """Close `client`; one whose loop has ended can no longer close its connections, so it is
    dropped (its sockets go with the objects) rather than failing the close of everything else."""
    try:
        await client.aclose()
    except RuntimeError:
        if not loop.is_closed():
            raise
        log.debug("%s of an ended event loop dropped", type(client).__name__)


def _closed(client: Any) -> bool:
    if isinstance(client, Fetcher):
        return client.closed
    return isinstance(client, httpx.AsyncClient) and client.is_closed


@functools.cache
def process_tls() -> ssl.SSLContext:
    """Return the process's one TLS client context (the CA bundle read once per process).

    Shared by every App of the process (the eval harness and the tests build many): a context
    is safe to share across clients and threads, and nothing changes it after it is made.
    """
    return httpx.create_ssl_context(trust_env=False)


class Resources:
    """The process-lifetime resources of one App (module doc)."""

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
        self.stack = contextlib.AsyncExitStack()  # everything below, closed newest first
        self._process = self.stack.enter_context(contextlib.ExitStack())  # the synchronous ones
        self.clients = LoopClients()
        self.stack.push_async_callback(self.clients.aclose)
        self._store = store
        self._embedder = embedder
        self.local_model = LocalModel(settings)
        self.cpu = CpuPool(settings.cpu_threads)  # threads start on first use
        self._arm()
        self._readers: dict[str, Any] = {}
        self._tls: ssl.SSLContext | None = None
        # Shared by every check: an offline machine probes each provider once per probe_ttl.
        self.search_probe = new_probe(settings.search)
        configure_logging(settings.log_level)

    def _arm(self) -> None:
        """Register the closers of what lives as long as the process (again after a close)."""
        self._process.callback(self.cpu.close)
        self._process.callback(self.local_model.stop)

    @cached_property
    def model_choice(self) -> Choice:
        """Return which model path checks use: an endpoint, the local model, or none."""
        return choose(self.settings)

    @cached_property
    def runs_local_model(self) -> bool:
        """Return whether checks call the local model (`uses_model`): only then is its server
        started at warm-up, and only then do the embedder and the stance model leave it the
        CPU (one thread each unless their settings say otherwise)."""
        return self.model_choice == "local" and uses_model(self.settings, self.model_choice)

    @property
    def store(self) -> Store:
        """Return the database, opening it (and refreshing the built-in seed sources) once."""
        if self._store is None:
            url = self.settings.database_url
            store = Store.open(
                self.settings.database_path,
                clock=self.clock,
                database_url=url.get_secret_value() if url is not None else None,
                threads=self.settings.storage_threads,
            )
            load_seed(store.sources)
            self._store = store
        return self._store

    @property
    def embedder(self) -> LocalEmbedder:
        """Return the sentence embedder (the model loads on first use or at warm-up)."""
        if self._embedder is None:
            embedding = self.settings.embedding
            threads = embedding.threads
            if threads is None and self.runs_local_model:
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
    def embedder_loaded(self) -> bool:
        """Return whether the embedder's model is loaded (warm-up done)."""
        return self._embedder is not None and self._embedder.loaded

    @cached_property
    def fact_check_embedders(self) -> tuple[LocalEmbedder, ...]:
        """Return the fact-check matcher's embedders: English MiniLM, then multilingual e5.

        The check's own embedder serves where it is the same model; nothing loads until used.
        """
        embedding, threads = self.settings.embedding, self.settings.embedding.threads
        if threads is None and self.runs_local_model:
            threads = 1  # the llama.cpp server uses every core: see EmbeddingSettings.threads
        own = self.embedder if embedding.model == "bundled" else None

        def made(backend: str, name: str) -> LocalEmbedder:
            if own is not None and own.name == name:
                return own
            return build_embedder(backend, threads=threads, cpu=self.cpu)

        chosen = [made("onnx", ONNX_MODEL_NAME)]
        if self.settings.factchecks.multilingual:
            chosen.append(made("e5", E5_MODEL_NAME))
        return tuple(chosen)

    @cached_property
    def fact_checks(self) -> FactCheckMatcher:
        """Return the matcher over the store's fact-check index (its snapshot loads on use)."""
        s = self.settings.factchecks
        config = MatchConfig(candidates=s.candidates)
        if s.accept is not None:
            config = dataclasses.replace(config, accept=s.accept)
        return FactCheckMatcher(
            self.store.fact_checks,
            self.fact_check_embedders,
            config=config,
            cpu=self.cpu,
            reader=self.verifier.stance,  # confirms a negation before it refuses a match
        )

    @cached_property
    def fact_check_cache(self) -> FactCheckCache:
        """Return the queue that keeps Google Fact Check Tools answers in the index (imported
        off the loop; what is queued is imported when the resources close)."""
        cache = FactCheckCache(
            self.store,
            lambda: self.fact_check_embedders,
            batch_size=self.settings.factchecks.batch_size,
        )
        self.stack.push_async_callback(cache.drain)
        return cache

    @cached_property
    def verifier(self) -> VerifierJudge:
        """Return factbot's trained verifier (the stance model loads on first use)."""
        vs = self.settings.verifier
        threads = vs.threads
        if threads is None and self.runs_local_model:
            threads = 1  # the llama.cpp server uses every core, as for the embedder
        return VerifierJudge(
            StanceModel(vs.model_dir, batch_size=vs.batch_size, threads=threads),
            thresholds=vs.thresholds(),
            cpu=self.cpu,
        )

    @cached_property
    def languages(self) -> LanguageIdentifier | None:
        """Return the language identifier (lingua loads on first use), or None when it is off."""
        ls = self.settings.language_id
        if not ls.enabled:
            return None
        return LanguageIdentifier(
            min_confidence=ls.min_confidence,
            low_accuracy=ls.accuracy == "low",
            long_text=ls.long_text,
        )

    @cached_property
    def graphs(self) -> GraphVerifier | None:
        """Return the graph verifier, or None when FACTBOT_GRAPH__ENABLED is false."""
        gs = self.settings.graph
        if not gs.enabled:
            return None
        graphs = GraphVerifier(
            GraphBuilder(model=gs.model),
            self.embedder,
            threshold=gs.match_threshold,
            action_threshold=gs.action_threshold,
            threads=gs.threads,
        )
        self._process.callback(graphs.close)
        return graphs

    def ocr(self) -> OcrEngine | None:
        """Return the OCR engine of the image stage, built once (rapidocr loads models)."""
        name = self.settings.images.ocr
        if name == "none":
            return None
        return self._reader("ocr", name, lambda: ocr_engine(name))

    def face_reader(self) -> DlibFaces:
        """Return the face detector and embedder, built once (its models load on first use)."""
        side = self.settings.faces.detect_side
        return self._reader("faces", side, lambda: DlibFaces(detect_side=side))

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
        return self._reader("captioner", directory, lambda: LocalCaptioner(directory))

    def _reader(self, kind: str, key: object, make: Callable[[], T]) -> T:
        found = self._readers.get(kind)
        if found is None or found[0] != key:  # the settings changed: a reader for the new ones
            found = self._readers[kind] = (key, make())
        reader: T = found[1]
        return reader

    async def tls(self) -> ssl.SSLContext:
        """Return the TLS context every HTTP client shares, built once off the loop."""
        if self._tls is None:
            # Loading the CA bundle takes 0.1-0.2 s: once per client, on the loop, it held it.
            context = await self.cpu.run(process_tls)
            self._tls = self._tls or context
        return self._tls

    async def fetcher(self) -> Fetcher:
        """Return the shared SSRF-safe fetcher of the running event loop."""
        fetcher: Fetcher = await self.clients.get("fetcher", self._new_fetcher)
        return fetcher

    async def close_fetcher(self) -> None:
        """Close the running loop's clients (before the loop ends); next use reopens them."""
        await self.clients.aclose()

    async def search_http(self) -> httpx.AsyncClient:
        """Return the one HTTP client of the search providers (and their probe)."""
        s = self.settings.search
        timeout = httpx.Timeout(s.request_timeout, connect=s.connect_timeout)
        return await self._http("search", limits=timeout)

    async def reverse_http(self) -> httpx.AsyncClient:
        """Return the one HTTP client of the reverse image search providers."""
        s = self.settings.reverse_image
        timeout = httpx.Timeout(s.request_timeout, connect=s.connect_timeout)
        return await self._http("reverse", limits=timeout)

    async def _http(self, name: str, *, limits: httpx.Timeout) -> httpx.AsyncClient:
        async def make() -> httpx.AsyncClient:
            return httpx.AsyncClient(timeout=limits, verify=await self.tls())

        client: httpx.AsyncClient = await self.clients.get(name, make)
        return client

    async def llm(self) -> LLMClient | None:
        """Return the one model client (None without a model), made on first use."""
        if self.model_choice == "none":
            return None
        if self.model_choice == "endpoint":
            default = endpoint_from(self.settings.model)
            stages = stage_endpoints(self.settings.model, default)
        else:
            # Started from the event loop's own thread on purpose: the server is tied to the
            # thread that starts it (it dies with it). Only the wait is asynchronous. A server
            # started again answers elsewhere: its client is a new one.
            default, stages = await self.local_model.endpoint_async(), {}

        async def make() -> LLMClient:
            # Built in the pool: it imports the SDK and loads CA files (half a second).
            return await self.cpu.run(
                functools.partial(LLMClient, default, stages=stages, tls=await self.tls())
            )

        client: LLMClient = await self.clients.get(f"llm:{default.base_url}", make)
        return client

    async def _new_fetcher(self) -> Fetcher:
        return Fetcher(
            self.settings.fetch.policy(),
            cache=StorePageCache(
                self.store.web,
                ttl=timedelta(hours=self.settings.references.page_cache_ttl_hours),
            ),
            verify=await self.tls(),
        )

    async def aclose(self) -> None:
        """Close everything, newest first: the loop's clients, then the rest, the store last."""
        await self.stack.aclose()
        self._close_store()
        self._process = self.stack.enter_context(contextlib.ExitStack())
        self.stack.push_async_callback(self.clients.aclose)
        self._arm()

    def close(self) -> None:
        """Close everything from synchronous code (the loop's clients at its next turn)."""
        self.clients.close()
        self._process.close()
        self._close_store()
        self._arm()

    def _close_store(self) -> None:
        self.__dict__.pop("graphs", None)  # closed with the rest: built again if asked for
        self.__dict__.pop("fact_check_cache", None)  # its drain ran with the stack
        if self._store is not None:
            self._store.close()
            self._store = None
