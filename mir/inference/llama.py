"""``llama`` provider: llama.cpp in-process through llama-cpp-python.

Why in-process: a decision is one short prompt and a few dozen tokens, so a network hop
to a separate inference server costs more than the inference itself on small models.

Models are expensive to load and llama.cpp contexts are not thread-safe, so every
process keeps ONE ``ModelCache`` (``model_cache.py``): a model is loaded once per (file,
context size, threads, chat format, GPU layers) and each loaded model carries its own
scheduler.

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

What a load needs (the model file, context window, threads, the grammar check) is
checked in ``llama_setup`` first. ``llama_cpp`` is imported only when a model is
loaded, and a model is loaded on the first ``complete`` (never in the constructor):
``mir --help`` stays fast, and a run whose every answer comes from the response cache
never loads the GGUF at all.

Token probabilities (``request.logprobs``) need the model loaded with ``logits_all=True``,
which made a SmolLM2 decision ~3x slower (FACTS.md): a model is loaded that way only for
a provider built with ``logprobs=True`` or a request that asks, and the cache keeps it
apart from the plain load of the same file.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

from mir.inference.checksums import CACHE_FILE, FILE_HASHER, FileHasher
from mir.inference.cpu_budget import CPU
from mir.inference.domain import (
    ModelRequest,
    ModelResponse,
    ProviderError,
    ShedError,
    chat_logprobs,
)
from mir.inference.foreground_first import FOREGROUND, in_background
from mir.inference.gguf_metadata import trained_context
from mir.inference.llama_setup import (
    DEFAULT_MODEL,
    DEFAULT_N_CTX,
    check_context,
    check_grammar,
    default_threads,
    resolve_model_path,
)
from mir.inference.model_cache import (
    MODEL_CACHE,
    LoadedModel,
    ModelCache,
    require_llama_cpp,
)
from mir.inference.scheduler import Scheduler


class LlamaProvider:
    """Run a GGUF model in this process. ``model`` is ``'default'`` or a ``.gguf`` path."""

    name = "llama"

    def __init__(
        self,
        model: str | None = DEFAULT_MODEL,
        *,
        n_ctx: int | None = DEFAULT_N_CTX,
        n_threads: int | None = None,
        gpu_layers: int | None = None,
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
        if n_ctx is None:  # nobody chose one: the default, within what the model knows
            n_ctx = min(DEFAULT_N_CTX, trained_context(self.path) or DEFAULT_N_CTX)
        check_context(self.path, n_ctx)
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self.gpu_layers = gpu_layers  # None: every layer on a GPU build, else none
        self.chat_format = chat_format
        self.logprobs = logprobs
        self.queue = queue  # None: the scheduler's default (8)
        self._cache = cache or MODEL_CACHE
        self.sha256 = sha256
        self._hasher = hasher or FILE_HASHER
        self._hash_cache = root / CACHE_FILE if root is not None else None

    def loaded(self, logprobs: bool | None = None) -> LoadedModel:
        get = functools.partial(
            self._cache.get,
            self.path,
            n_ctx=self.n_ctx,
            n_threads=self.n_threads,
            gpu_layers=self.gpu_layers,
            chat_format=self.chat_format,
            logits_all=self.logprobs if logprobs is None else logprobs,
        )
        if not self.sha256:
            return get()
        # Before every load request, not once: the file may be replaced while the process
        # runs; an unchanged one costs an open and a stat (the hasher's cache). A load
        # reads the descriptor that was hashed, so a file swapped in between is not it.
        with self._hasher.verified(self.path, self.sha256, self._hash_cache) as checked:
            return get(checked=checked)

    def digest(self) -> str:
        """The sha256 of the model file: the registered one, checked against the file
        (``ModelIntegrityError`` when it no longer matches), or the file's own."""
        if self.sha256:
            self._hasher.verify(self.path, self.sha256, self._hash_cache)
            return self.sha256.lower()
        return self._hasher.digest(self.path, self._hash_cache)

    def current(self) -> LoadedModel | None:
        """The model if it is loaded now (never loads it)."""
        return self._cache.peek(
            self.path,
            n_ctx=self.n_ctx,
            n_threads=self.n_threads,
            gpu_layers=self.gpu_layers,
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
        file's sha256 (a registry entry's is checked against the file first: a cached
        answer is never replayed for bytes that are not the registered ones; hashed once
        per file state, see ``checksums``), context and chat format."""
        return {
            "provider": self.name,
            "sha256": self.digest(),
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
            gpu_layers=self.gpu_layers,
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
