"""Reaching models: the provider port, request/response types, and the adapters."""

from mir.inference.application import ModelProvider
from mir.inference.domain import Message, ModelRequest, ModelResponse, ProviderError
from mir.inference.scripted import ScriptedProvider

__all__ = [
    "Message",
    "ModelProvider",
    "ModelRequest",
    "ModelResponse",
    "ProviderError",
    "ScriptedProvider",
]
