"""A rendered prompt and its identity (hash of what the model saw, version of the template)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mir.inference import Message
from mir.runtime.snapshot import sha256_hex


@dataclass(frozen=True)
class RenderedPrompt:
    messages: tuple[Message, ...]
    version: str  # contract version + template hash: which prompt text produced this

    @property
    def hash(self) -> str:
        """Hash of the exact messages sent: equal hashes mean the model saw the same prompt."""
        return sha256_hex([m.model_dump() for m in self.messages])


@dataclass(frozen=True)
class PromptVariables:
    """What a contract's jinja2 template may use (and nothing else: StrictUndefined)."""

    mission: str
    input: dict[str, Any]
    context: dict[str, Any]
    actions: dict[str, Any]
    schema: dict[str, Any]
    errors: list[str]
