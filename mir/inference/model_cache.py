"""Loading GGUF models with llama.cpp, once per process: ``ModelCache`` and ``MODEL_CACHE``.

Models are expensive to load and llama.cpp contexts are not thread-safe, so every
process keeps ONE ``ModelCache``: a model is loaded once per (file, context size,
threads, chat format, logits_all, GPU layers) and each loaded model carries its own
``Scheduler``. GPU layers left unset (None) mean every layer when the installed
llama.cpp can offload to a GPU (CUDA, Metal, Vulkan...), else none (``gpu_offload``).
A load whose file was checked against its sha256 (``checked``) reads the checked
descriptor, never the path again (see ``checksums``). ``llama_cpp`` is imported only
here, when a model is first loaded.
"""

from __future__ import annotations

import atexit
import importlib.util
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mir.errors import ConfigError
from mir.inference.checksums import CheckedFile
from mir.inference.domain import ModelIntegrityError
from mir.inference.scheduler import Scheduler

INSTALL_LOCAL = "pip install 'mir[local]'"
# Used when neither the settings nor the GGUF file name a chat format.
FALLBACK_CHAT_FORMAT = "chatml"


def require_llama_cpp() -> None:
    """Fail with the install command, without importing llama_cpp (the import is slow)."""
    if importlib.util.find_spec("llama_cpp") is None:
        raise ConfigError(
            "the llama provider needs llama-cpp-python, which is not installed",
            hint=f"run `{INSTALL_LOCAL}`",
        )


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
    gpu_layers: int = 0  # what llama.cpp was given (-1: every layer)


def gpu_offload() -> bool:
    """Whether the installed llama.cpp build can put layers on a GPU (imports llama_cpp)."""
    require_llama_cpp()
    import llama_cpp

    return bool(llama_cpp.llama_supports_gpu_offload())


def load_model(
    path: Path,
    n_ctx: int,
    n_threads: int,
    chat_format: str | None,
    logits_all: bool = False,
    *,
    gpu_layers: int | None = None,
) -> LoadedModel:
    """Load a GGUF file with llama.cpp (seeded, quiet) and settle its chat format.
    ``gpu_layers`` None: all layers on a GPU build, none on a CPU-only one."""
    require_llama_cpp()
    import llama_cpp

    if gpu_layers is None:
        gpu_layers = -1 if gpu_offload() else 0
    started = time.perf_counter()
    try:
        llama = llama_cpp.Llama(
            model_path=str(path),
            n_ctx=n_ctx,
            n_threads=n_threads,
            n_gpu_layers=gpu_layers,
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
    loaded = LoadedModel(
        llama=llama,
        path=path,
        chat_format=llama.chat_format,
        load_ms=load_ms,
        gpu_layers=gpu_layers,
    )
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
        self._models: OrderedDict[
            tuple[Path, int, int, str | None, bool, int | None], LoadedModel
        ] = OrderedDict()
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
        gpu_layers: int | None = None,
        checked: CheckedFile | None = None,
    ) -> LoadedModel:
        """``checked``: ``path`` verified through an open descriptor; a load reads that
        descriptor's inode (``checked.load_path``), never the path again, and is refused
        when the file was written while it loaded."""
        key = (path, n_ctx, n_threads, chat_format, logits_all, gpu_layers)
        # Held while loading too: two threads asking for the same model must not both
        # spend a second and hundreds of MB loading it.
        with self._lock:
            if key not in self._models:
                self._make_room(size_mb(path))
                # Only a logprobs load passes the flag, and only a chosen GPU layer
                # count its own: loaders written for the plain four arguments (tests'
                # fakes) keep working.
                extra = (True,) if logits_all else ()
                gpu = {} if gpu_layers is None else {"gpu_layers": gpu_layers}
                source = path if checked is None else checked.load_path
                try:
                    model = self._loader(source, n_ctx, n_threads, chat_format, *extra, **gpu)
                except ConfigError as exc:  # name the file, not the descriptor
                    exc.message = exc.message.replace(str(source), str(path))
                    exc.where = exc.where and exc.where.replace(str(source), str(path))
                    raise
                if checked is not None and not checked.unchanged():
                    raise ModelIntegrityError(
                        f"model integrity: {path} changed while it was loaded; refused to use it"
                    )
                model.path = path  # the registry's name for it, not /proc/self/fd/N
                self._models[key] = model
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
        gpu_layers: int | None = None,
    ) -> LoadedModel | None:
        """The model if it is loaded, never loading it nor waiting for a load (a dict
        read is atomic under the GIL, so no lock)."""
        return self._models.get((path, n_ctx, n_threads, chat_format, logits_all, gpu_layers))

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
