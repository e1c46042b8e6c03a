"""Reaching models: the provider port, request/response types, and the adapters."""

from mir.inference.adapters import provider_for
from mir.inference.application import ModelProvider
from mir.inference.cache import CachedProvider, ResponseCache, with_cache
from mir.inference.checksums import CACHE_FILE as DIGEST_CACHE
from mir.inference.checksums import FILE_HASHER, FileHasher
from mir.inference.domain import (
    Message,
    ModelIntegrityError,
    ModelRequest,
    ModelResponse,
    ModelSettings,
    ProviderError,
    ShedError,
    TokenLogprob,
)
from mir.inference.foreground_first import background, foreground
from mir.inference.gguf_metadata import trained_context
from mir.inference.llama import MODEL_CACHE, LlamaProvider
from mir.inference.llama_setup import default_threads, embedded_model_path
from mir.inference.remote import LiteLLMProvider
from mir.inference.scripted import ScriptedProvider, read_responses

__all__ = [
    "DIGEST_CACHE",
    "FILE_HASHER",
    "MODEL_CACHE",
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
    "ShedError",
    "TokenLogprob",
    "background",
    "default_threads",
    "embedded_model_path",
    "foreground",
    "provider_for",
    "read_responses",
    "trained_context",
    "with_cache",
]
