"""Reaching models: the provider port, request/response types, and the adapters."""

from mir.inference.adapters import provider_for
from mir.inference.application import ModelProvider
from mir.inference.cache import CachedProvider, ResponseCache, with_cache
from mir.inference.domain import (
    Message,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ProviderError,
    ShedError,
    TokenLogprob,
)
from mir.inference.llama import MODEL_CACHE, LlamaProvider, embedded_model_path
from mir.inference.remote import LiteLLMProvider
from mir.inference.scripted import ScriptedProvider, read_responses

__all__ = [
    "MODEL_CACHE",
    "CachedProvider",
    "LiteLLMProvider",
    "LlamaProvider",
    "Message",
    "ModelProvider",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "ProviderError",
    "ResponseCache",
    "ScriptedProvider",
    "ShedError",
    "TokenLogprob",
    "embedded_model_path",
    "provider_for",
    "read_responses",
    "with_cache",
]
