"""What the runtime asks of a model and what comes back, independent of any provider."""

from __future__ import annotations

from typing import Any, Literal

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


class ProviderError(Exception):
    """The provider could not answer (server down, timeout, script exhausted).

    Runtime failure, not a user error: the runtime records it with reason code
    ``provider_error`` and cascades or falls back.
    """
