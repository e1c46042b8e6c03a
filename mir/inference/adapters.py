"""Picking the adapter for a contract's route (the composition point of this capability).

The runtime calls ``provider_for`` once per route; nothing here imports llama_cpp or
litellm (each adapter does, lazily, on its first call).
"""

from __future__ import annotations

from pathlib import Path

from mir.contracts import Route
from mir.errors import ConfigError
from mir.inference.application import ModelProvider
from mir.inference.domain import ModelSettings
from mir.inference.llama import LlamaProvider
from mir.inference.llama_setup import DEFAULT_MODEL
from mir.inference.remote import LiteLLMProvider
from mir.inference.scripted import ScriptedProvider, read_responses


def provider_for(
    route: Route,
    *,
    responses: Path | None = None,
    settings: ModelSettings | None = None,
    root: Path | None = None,
    logprobs: bool = False,
) -> ModelProvider:
    """The provider a route names, configured from the route, then ``[tool.mir.model]``.

    ``responses`` (or the route's own ``responses`` file) replays recorded raw outputs
    instead of calling a model: a ``scripted`` route needs one; a ``litellm`` route feeds
    them through litellm's ``mock_response`` (the full litellm path, offline); a
    ``llama`` route is replaced by the scripted replay. ``root`` anchors relative paths
    (a ``.gguf`` model, a responses file): the project root, or the cwd when None.
    ``logprobs``: the agent takes its confidence from token probabilities, so a llama
    model is loaded with ``logits_all`` from the start (~3x slower; only when asked).
    """
    settings = settings or ModelSettings()
    if route.provider == "rules":
        raise ValueError("'rules' routes are decided by the runtime's fallback, not a model")
    replay = responses or _relative(route.responses, root)
    # A registry entry's (or the route's own) queue sizes this model's queue.
    queue = route.queue if route.queue is not None else settings.queue
    if route.provider == "scripted":
        if replay is None:
            raise ConfigError(
                "a scripted route needs a responses file",
                hint="set the route's 'responses' to a JSONL file of raw model outputs",
            )
        return ScriptedProvider.from_file(replay)
    if route.provider == "litellm":
        model = route.model or (settings.model if settings.provider == "litellm" else None)
        if not model:
            raise ConfigError(
                "a litellm route needs a model id",
                hint="set the route's 'model', e.g. 'openai/gpt-4o-mini' or 'ollama/llama3'",
            )
        return LiteLLMProvider(
            model,
            api_base=route.api_base or settings.api_base,
            api_key_env=route.api_key_env or settings.api_key_env,
            mock_responses=None if replay is None else [r.text for r in read_responses(replay)],
            concurrency=settings.remote_concurrency,
            queue=queue,
        )
    if replay is not None:
        return ScriptedProvider.from_file(replay)
    model = route.model or (settings.model if settings.provider == "llama" else DEFAULT_MODEL)
    return LlamaProvider(
        model,
        # None: no one set it; the default is then held within the model's trained context
        n_ctx=route.n_ctx or (settings.n_ctx if "n_ctx" in settings.model_fields_set else None),
        n_threads=route.threads or settings.n_threads,
        gpu_layers=route.gpu_layers if route.gpu_layers is not None else settings.gpu_layers,
        chat_format=settings.chat_format,
        root=root,
        logprobs=logprobs,
        queue=queue,
        sha256=route.sha256,
    )


def _relative(path: str | None, root: Path | None) -> Path | None:
    if path is None:
        return None
    candidate = Path(path).expanduser()
    return candidate if candidate.is_absolute() or root is None else root / candidate
