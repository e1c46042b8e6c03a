"""The model port every adapter implements (the factory is `adapters.provider_for`)."""

from __future__ import annotations

from typing import Protocol

from mir.inference.domain import ModelRequest, ModelResponse


class ModelProvider(Protocol):
    """A way to reach a model. One real adapter per provider; tests use the scripted one."""

    name: str

    def complete(self, request: ModelRequest) -> ModelResponse:
        """Return the model's raw text; raise ``ProviderError`` when it cannot answer."""
        ...
