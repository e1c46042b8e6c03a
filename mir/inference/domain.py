"""What the runtime asks of a model and what comes back, independent of any provider."""

from __future__ import annotations

import ipaddress
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant"]
    content: str


class ModelRequest(BaseModel):
    """One completion request. ``json_schema`` asks for schema-constrained output where
    the provider supports it (llama.cpp grammar, JSON mode / response_format remotely)."""

    model_config = ConfigDict(frozen=True)

    messages: tuple[Message, ...]
    json_schema: dict[str, Any] | None = None
    model: str | None = None
    temperature: float = 0.0
    max_tokens: int = 256
    timeout_s: float = 60.0
    api_base: str | None = None
    api_key_env: str | None = None
    seed: int | None = 0
    # Token probabilities for ``decision.confidence_source: logprobs``: the chosen token's
    # logprob at each position and the ``top_logprobs`` most likely alternatives there
    # (OpenAI caps it at 20). llama.cpp needs the model loaded with ``logits_all``.
    logprobs: bool = False
    top_logprobs: int = Field(20, ge=0, le=20)
    # Back-pressure: higher runs first; ``deadline_at`` is a ``time.monotonic()`` instant
    # after which the answer is worthless (the call is shed, never waited for).
    priority: int = 0
    deadline_at: float | None = None


class TokenLogprob(BaseModel):
    """One generated token: its text, its log probability, and the most likely tokens the
    model could have put there instead (text -> logprob; may include the chosen one).

    These are the provider's probabilities as it reports them: llama.cpp's are the raw
    distribution before the JSON-schema grammar masks it (FACTS.md)."""

    model_config = ConfigDict(frozen=True)

    token: str
    logprob: float
    top: dict[str, float] = Field(default_factory=dict)


class ModelResponse(BaseModel):
    """Raw text as the model produced it: parsing and validation are the runtime's job,
    never the provider's, so hostile output reaches the integrity check untouched."""

    text: str
    provider: str
    model: str
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_ms: float = Field(0.0, ge=0)
    # Per generated token, when the request asked for them and the provider gave them.
    logprobs: list[TokenLogprob] | None = None
    # Replayed from the response cache (``load_agent(response_cache=...)``): no model ran.
    cached: bool = False
    # Personal data masked out of the prompt before it left (``mir.privacy``): kinds and
    # counts of values, and how many placeholders the answer had put back; never values.
    pii: dict[str, Any] | None = None


def chat_logprobs(data: Any) -> list[TokenLogprob] | None:
    """OpenAI's chat ``logprobs`` (``{"content": [{"token", "logprob", "top_logprobs":
    [{"token", "logprob"}]}]}``, which llama-cpp-python also returns) as TokenLogprobs;
    None when the provider gave none. Objects or dicts (litellm returns objects)."""
    content = _get(data, "content")
    if not content:
        return None
    tokens = []
    for item in content:
        top = {
            str(_get(t, "token")): float(_get(t, "logprob"))
            for t in _get(item, "top_logprobs") or ()
        }
        tokens.append(
            TokenLogprob(
                token=str(_get(item, "token")), logprob=float(_get(item, "logprob")), top=top
            )
        )
    return tokens


def _get(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, dict) else getattr(item, key, None)


class ProviderError(Exception):
    """The provider could not answer (server down, timeout, script exhausted).

    Runtime failure, not a user error: the runtime records it with reason code
    ``provider_error`` and cascades or falls back.
    """


class ShedError(ProviderError):
    """Refused by back-pressure (queue full, displaced, deadline unmeetable or passed, or a
    generation cut at its deadline): the runtime records reason code ``shed`` and moves to
    the next route or the rules at once."""


class ModelIntegrityError(ProviderError):
    """A model file's sha256 is not the one its route/registry entry names: it was not
    loaded. The runtime records reason code ``model_integrity`` and moves on."""


class ModelSettings(BaseModel):
    """``[tool.mir.model]``: project-wide model defaults and llama.cpp tuning.

    A contract's route wins over these defaults; these win over mir's built-ins.
    """

    model_config = ConfigDict(extra="forbid")

    provider: Literal["llama", "litellm", "scripted"] = Field(
        "llama", description="Provider used when a route does not say."
    )
    model: str = Field(
        "default",
        description="llama: 'default' (the embedded SmolLM2) or a .gguf path; litellm: a model id.",
    )
    api_base: str | None = Field(None, description="litellm: OpenAI-compatible server URL.")
    api_key_env: str | None = Field(
        None, description="litellm: name of the environment variable holding the key."
    )
    n_ctx: int = Field(2048, ge=256, description="llama: context window in tokens.")
    n_threads: int | None = Field(
        None, ge=1, description="llama: CPU threads (default: all cores, at most 8)."
    )
    gpu_layers: int | None = Field(
        None,
        ge=-1,
        description="llama: model layers offloaded to the GPU, -1 for all (default: all when "
        "the installed llama-cpp-python was built with GPU support, else 0).",
    )
    queue: int = Field(
        8,
        ge=0,
        description="llama and litellm: calls that may wait for one model (a loaded llama "
        "model, or one litellm model on one server); past it the lowest-priority call is "
        "shed to the next route or the rules (reason 'shed'). A registry entry's queue wins.",
    )
    remote_concurrency: int = Field(
        4,
        ge=1,
        description="litellm: calls sent at once to one model on one server (per process); "
        "the rest wait in its queue.",
    )
    chat_format: str | None = Field(
        None,
        description="llama: chat format name (e.g. 'chatml'); default: the GGUF's own "
        "chat template, or 'chatml' when the file has none.",
    )
    memory_budget_mb: float | None = Field(
        None,
        gt=0,
        description="llama: most MB of models loaded at once in a process (estimated by "
        "GGUF file size); the least recently used idle model is unloaded first. "
        "Default: no limit.",
    )


LOOPBACK_HOSTS = frozenset({"localhost", "ip6-localhost"})


def is_loopback_url(url: str) -> bool:
    """True when ``url`` points at this machine (127.0.0.0/8, ::1, localhost).

    The remote guard uses it: in tests only loopback servers may be reached.
    """
    host = urlsplit(url if "://" in url else f"//{url}").hostname or ""
    if host.lower() in LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
