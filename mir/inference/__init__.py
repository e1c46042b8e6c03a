"""Reaching models: the provider port, request/response types, and the adapters."""

from mir.inference.adapters import provider_for
from mir.inference.application import ModelProvider
from mir.inference.cache import CachedProvider, ResponseCache, with_cache
from mir.inference.checksums import FILE_HASHER, FileHasher
from mir.inference.domain import (
    Message,
    ModelIntegrityError,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ProviderError,
    TokenLogprob,
)
from mir.inference.llama import LlamaProvider, embedded_model_path
from mir.inference.remote import LiteLLMProvider
from mir.inference.scripted import ScriptedProvider, read_responses

__all__ = [
    "FILE_HASHER",
    "CachedProvider",
    "FileHasher",
    "LiteLLMProvider",
    "LlamaProvider",
    "Message",
    "ModelIntegrityError",
    "ModelProvider",
    "ModelRequest",
    "ModelResponse",
    "ModelSettings",
    "ProviderError",
    "ResponseCache",
    "ScriptedProvider",
    "TokenLogprob",
    "embedded_model_path",
    "provider_for",
    "read_responses",
    "with_cache",
]
