"""Run a local GGUF model behind the OpenAI-compatible API that `LLMClient` already speaks.

`LocalModelServer` starts llama-cpp-python's server (`python -m llama_cpp.server`) as a child
process on 127.0.0.1 and a free port, with a random API key, and waits until it answers. Its
`endpoint` is a `ModelEndpoint` for `LLMClient`, so a local model is one more endpoint.

What the server can do shapes that endpoint (llama-cpp-python 0.3.36):
- `response_format` only accepts `{"type": "json_object"}`, optionally with a llama.cpp-specific
  `"schema"` that it turns into a grammar (enums, maxLength and maxItems included);
  `{"type": "json_schema"}` fails validation and comes back as HTTP 500. So
  `supports_json_schema=False, schema_in_json_object=True`: `LLMClient` sends the schema inside
  JSON mode, so the answer cannot leave it, and also describes it in the system prompt.
- It reuses the KV cache of the longest common prompt prefix with the request before: calls
  that share a system prompt only pay for the rest of the prompt. With `prompt_cache_mb` it also
  keeps the states of earlier requests in RAM (llama-cpp-python's `LlamaRAMCache`) and starts
  from the longest matching one, so a stage whose call follows another stage's still skips its
  system prompt. That cache's bound counts the KV state only; each state also holds a copy of
  the logits array, uncounted. With the server's default `logits_all=True` that array is
  n_ctx x vocabulary floats (2.5 GB for Qwen at 4,096), which grew a 1 GiB cache to 23.5 GB
  resident until the OOM killer stopped it; `logits_all` is off here (prompt evaluation is also
  ~22 % faster), so a copy is at most n_batch x vocabulary (0.3 GB).
- One model instance serves one request at a time (a lock inside the server), so
  `max_concurrency=1`: requests queue in the client, where the per-call timeout does not run yet.
  The server finishes an answer the client stopped waiting for, so a retry after a timeout would
  only queue behind it: `retry_timeouts=False`.
- The chat template is read from the GGUF metadata (Qwen2.5's is ChatML); `chat_format` can
  override it.

The server is configured through a JSON config file, because it reads environment variables
without a prefix (`HOST`, `PORT`, `API_KEY`, ...) for any setting given on its command line; the
config file path skips them, and HOST, PORT and CONFIG_FILE are removed from its environment.

Failure policy: `start()` and `start_async()` raise `LocalModelError` (with the tail of the
server's log) when the server exits or does not answer within `startup_timeout`; `stop()` never
raises.

Exceptions (to join the tree in `pipeline.errors`):

    FactbotError
    └── LocalModelError      the local model server could not start (reason, log_tail)
"""

from __future__ import annotations

import asyncio
import atexit
import ctypes
import importlib.util
import json
import logging
import os
import secrets
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

import httpx

from pipeline.errors import FactbotError
from pipeline.llm.endpoint import ModelEndpoint
from pipeline.llm.models import DEFAULT_MODEL, verified

log = logging.getLogger(__name__)

_STRIPPED_ENV = ("HOST", "PORT", "CONFIG_FILE")  # the server lets these override its config
_GRACE_SECONDS = 10.0
_POLL_SECONDS = 0.25  # between readiness probes while the model loads
_LOG_TAIL = 3000


class LocalModelError(FactbotError):
    """The local model server could not be started."""

    def __init__(self, reason: str, *, log_tail: str = "") -> None:
        super().__init__(f"local model server: {reason}" + (f"\n{log_tail}" if log_tail else ""))
        self.reason = reason
        self.log_tail = log_tail


def llama_cpp_installed() -> bool:
    """Return whether llama-cpp-python (with its server) can be imported."""
    return importlib.util.find_spec("llama_cpp") is not None


def local_model_available(models_dir: Path) -> Path | None:
    """Return the verified default model file when it and llama-cpp-python are both here."""
    if not llama_cpp_installed():
        return None
    return verified(DEFAULT_MODEL, models_dir)


class LocalModelServer:
    """A llama-cpp-python server child process serving one GGUF model on 127.0.0.1."""

    def __init__(
        self,
        model_path: Path,
        *,
        alias: str = DEFAULT_MODEL.name,
        port: int | None = None,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        chat_format: str | None = None,
        startup_timeout: float = 120.0,
        request_timeout: float = 600.0,  # answers end at max_tokens; this catches a hung server
        command: Sequence[str] | None = None,  # run with --config_file; None: llama-cpp-python's
        prompt_cache_mb: int = 0,  # llama-cpp-python's RAM prompt cache; 0 = off (see above)
    ) -> None:
        self.model_path = model_path
        self.alias = alias
        self.n_ctx = n_ctx
        self.n_threads = n_threads or len(os.sched_getaffinity(0))
        self.chat_format = chat_format
        self.prompt_cache_mb = prompt_cache_mb
        self.startup_timeout = startup_timeout
        self.request_timeout = request_timeout
        self.command = tuple(command or (sys.executable, "-m", "llama_cpp.server"))
        self.port: int | None = None  # set at start: the one asked for, else a free one
        self._requested_port = port
        self._key = secrets.token_urlsafe(24)  # other local users cannot borrow the server
        self._proc: subprocess.Popen[bytes] | None = None
        self._answered = False  # the running process has answered a readiness probe
        self._workdir: tempfile.TemporaryDirectory[str] | None = None

    @property
    def log_path(self) -> Path | None:
        """Return the file that holds the server's output while it runs."""
        return Path(self._workdir.name) / "server.log" if self._workdir else None

    @property
    def running(self) -> bool:
        """Return whether the server process is alive."""
        return self._proc is not None and self._proc.poll() is None

    @property
    def died(self) -> bool:
        """Return whether the server was started and exited without `stop()` (killed, crashed)."""
        return self._proc is not None and self._proc.poll() is not None

    @property
    def pid(self) -> int | None:
        """Return the server process's id while it was started and not stopped."""
        return self._proc.pid if self._proc is not None else None

    @property
    def endpoint(self) -> ModelEndpoint:
        """Return the running server as an endpoint for `LLMClient`."""
        if self._proc is None or self.port is None:
            raise LocalModelError("not started")
        return ModelEndpoint(
            base_url=f"http://127.0.0.1:{self.port}/v1",
            api_key=self._key,
            model=self.alias,
            supports_json_schema=False,
            strict_schema=False,
            schema_in_json_object=True,
            retry_timeouts=False,
            timeout=self.request_timeout,
            max_concurrency=1,
        )

    def start(self) -> ModelEndpoint:
        """Start the server and wait until it answers; return its endpoint."""
        if self.running and self._answered:
            return self.endpoint
        started = time.monotonic() if self.running else self._spawn()
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self._ready(started)

    async def start_async(self) -> ModelEndpoint:
        """Start the server from this thread and wait, without blocking the loop, until it
        answers; return its endpoint.

        The process is forked here, in the calling (event loop) thread, because Linux kills it
        when the thread that forked it ends (`PR_SET_PDEATHSIG`); only the wait is asynchronous.
        """
        if self.running and self._answered:
            return self.endpoint
        # Already spawned by a concurrent caller still waiting: wait for the same process.
        started = time.monotonic() if self.running else self._spawn()
        try:
            await self._wait_ready_async()
        except BaseException:
            self.stop()
            raise
        return self._ready(started)

    def _spawn(self) -> float:
        """Start the server process (not yet answering); return when it started."""
        if self._proc is not None:  # it died: clean up and start again
            self.stop()
        if self.command[1:3] == ("-m", "llama_cpp.server") and not llama_cpp_installed():
            raise LocalModelError(
                "llama-cpp-python is not installed (pip install llama-cpp-python)"
            )
        if not self.model_path.is_file():
            raise LocalModelError(f"no model file at {self.model_path}")
        self._answered = False
        self._workdir = tempfile.TemporaryDirectory(prefix="factbot-llama-")
        self.port = self._requested_port or _free_port()
        config = Path(self._workdir.name) / "config.json"
        config.write_text(json.dumps(self._config()), "utf-8")
        env = {k: v for k, v in os.environ.items() if k.upper() not in _STRIPPED_ENV}
        command = [*self.command, "--config_file", str(config)]
        started = time.monotonic()
        assert self.log_path is not None
        with self.log_path.open("wb") as output:
            self._proc = subprocess.Popen(
                command,
                stdout=output,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        atexit.register(self.stop)
        log.info("local model server starting", extra={"port": self.port, "pid": self._proc.pid})
        return started

    def _ready(self, started: float) -> ModelEndpoint:
        self._answered = True
        log.info(
            "local model server ready",
            extra={"port": self.port, "seconds": round(time.monotonic() - started, 2)},
        )
        return self.endpoint

    def _config(self) -> dict[str, object]:
        model = {
            "model": str(self.model_path),
            "model_alias": self.alias,
            "n_ctx": self.n_ctx,
            "n_threads": self.n_threads,
            "n_threads_batch": self.n_threads,
            "chat_format": self.chat_format,
            "use_mlock": False,  # mmap only: the kernel may page the weights, as with any file
            "verbose": False,
            # The server's default (True) keeps every prompt token's logits: a 2.5 GB array at
            # n_ctx 4096 with Qwen's 151,936-token vocabulary, copied whole into each cached
            # prompt state, and ~22 % slower prompt evaluation. Nothing here reads logprobs.
            "logits_all": False,
            "cache": self.prompt_cache_mb > 0,
            "cache_type": "ram",
            "cache_size": max(1, self.prompt_cache_mb) << 20,
        }
        return {
            "host": "127.0.0.1",
            "port": self.port,
            "api_key": self._key,
            "interrupt_requests": False,  # never cut one answer short for the next request
            "models": [model],
        }

    def _probe(self) -> tuple[str, dict[str, str]]:
        """Return the readiness URL and its headers; raise if the process has exited."""
        assert self._proc is not None
        code = self._proc.poll()
        if code is not None:
            raise LocalModelError(f"exited with code {code}", log_tail=self.log_tail())
        return f"http://127.0.0.1:{self.port}/v1/models", {"Authorization": f"Bearer {self._key}"}

    def _timed_out(self) -> LocalModelError:
        return LocalModelError(
            f"no answer within {self.startup_timeout:g}s", log_tail=self.log_tail()
        )

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        with httpx.Client(timeout=2.0) as http:
            while time.monotonic() < deadline:
                url, headers = self._probe()
                try:
                    if http.get(url, headers=headers).status_code == 200:
                        return
                except httpx.TransportError:
                    pass  # not listening yet
                time.sleep(_POLL_SECONDS)
        raise self._timed_out()

    async def _wait_ready_async(self) -> None:
        deadline = time.monotonic() + self.startup_timeout
        # Plain HTTP to 127.0.0.1: a TLS context without the CA bundle, whose loading would
        # hold the loop for a tenth of a second.
        no_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        async with httpx.AsyncClient(timeout=2.0, verify=no_tls) as http:
            while time.monotonic() < deadline:
                url, headers = self._probe()
                try:
                    if (await http.get(url, headers=headers)).status_code == 200:
                        return
                except httpx.TransportError:
                    pass  # not listening yet
                await asyncio.sleep(_POLL_SECONDS)
        raise self._timed_out()

    def log_tail(self) -> str:
        """Return the end of the server's output (its error, when it failed)."""
        path = self.log_path
        if path is None or not path.exists():
            return ""
        with path.open("rb") as file:
            file.seek(max(0, path.stat().st_size - _LOG_TAIL))
            return file.read().decode("utf-8", "replace").strip()

    def stop(self) -> None:
        """Stop the server (terminate, then kill after a grace period) and delete its files."""
        proc, self._proc = self._proc, None
        if proc is not None:
            atexit.unregister(self.stop)
            if proc.poll() is not None:
                self._report_death(proc.pid, proc.returncode)
            else:
                proc.terminate()
                try:
                    proc.wait(_GRACE_SECONDS)
                except subprocess.TimeoutExpired:
                    log.warning("local model server killed", extra={"pid": proc.pid})
                    proc.kill()
                    proc.wait()
            log.info("local model server stopped", extra={"pid": proc.pid, "code": proc.returncode})
        if self._workdir is not None:
            self._workdir.cleanup()
            self._workdir = None

    def _report_death(self, pid: int, code: int) -> None:
        """Log an error saying how the server died on its own, and what to do about it."""
        how = f"code {code}"
        if code < 0:
            try:
                how = f"signal {signal.Signals(-code).name}"
            except ValueError:
                how = f"signal {-code}"
        hint = ""
        if code in (-signal.SIGILL, -signal.SIGSEGV, -signal.SIGBUS):
            # The native build that used AMX where the VM did not grant it died this way.
            hint = (
                "; llama.cpp may be built for instructions this machine cannot run: rebuild it "
                "with `make model` (see docs/operations/local-model.md), or set LLAMA_CMAKE_ARGS"
            )
        log.error(
            f"local model server died ({how}){hint}",
            extra={"pid": pid, "code": code, "log_tail": self.log_tail()[-500:]},
        )

    def __enter__(self) -> LocalModelServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _free_port() -> int:
    """Return a port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _die_with_parent() -> None:
    """Ask Linux to stop the server when factbot dies, even by SIGKILL (no orphaned servers)."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
    except OSError:
        return
    pr_set_pdeathsig = 1
    libc.prctl(pr_set_pdeathsig, signal.SIGKILL)  # uvicorn would finish a long generation first


class LocalTokenizer:
    """The local model's tokenizer (the GGUF's vocabulary only, no weights) and chat template."""

    def __init__(self, model_path: Path) -> None:
        from llama_cpp import Llama

        self._llm = Llama(model_path=str(model_path), vocab_only=True, verbose=False)

    def tokens(self, text: str) -> list[int]:
        """Return the tokens of text (chat-template tokens read as such)."""
        return list(self._llm.tokenize(text.encode(), add_bos=False, special=True))

    def chat_prompt(self, system: str, user: str) -> list[int]:
        """Return the tokens of a system and user turn as ChatML renders them, up to the answer."""
        return self.tokens(
            f"<|im_start|>system\n{system}<|im_end|>\n"
            f"<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n"
        )
