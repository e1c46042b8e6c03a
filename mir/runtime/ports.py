"""Ports of the runtime: what a decision flow needs from the outside world.

One ``Protocol`` per external concern, each with one production adapter and one
hand-written fake in the tests. ``AgentParts`` is a loaded agent: the contract plus the
user's code it points at (decision schema, executors, context loader), resolved once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from mir.contracts import AgentContract, Route
from mir.inference import ModelProvider
from mir.runtime.integrity import IntegrityCheck
from mir.runtime.prompting import PromptVariables, RenderedPrompt
from mir.traces import TraceEvent

Executor = Callable[..., Mapping[str, Any] | None]
ContextLoader = Callable[[Mapping[str, Any]], Mapping[str, Any]]
ProviderFactory = Callable[[Route], ModelProvider]
Clock = Callable[[], datetime]


class TraceSink(Protocol):
    """Where flow events go; a pending flow is rebuilt from them in a later process."""

    def append(self, events: Sequence[TraceEvent]) -> None: ...

    def flow(self, flow_id: str, *, verify: bool = False) -> list[TraceEvent]:
        """The flow's events; ``verify=True`` (before approve/reject act on them) raises
        a ``MirUserError`` when the stored events do not verify (edited or cut)."""
        ...


class ExecutionLedger(Protocol):
    """At-most-once execution: a key is claimed atomically BEFORE the executor runs."""

    def claim(self, key: str, info: Mapping[str, Any]) -> bool:
        """True if this call claimed the key; False if any process ever claimed it."""
        ...

    def complete(self, key: str, outcome: Mapping[str, Any]) -> None: ...

    def outcome(self, key: str) -> Mapping[str, Any] | None:
        """The recorded outcome, or None when claimed but never completed (in doubt)."""
        ...


class AgentStates(Protocol):
    def is_suspended(self, agent: str) -> bool: ...


class PromptRenderer(Protocol):
    def render(self, variables: PromptVariables) -> RenderedPrompt: ...


@dataclass(frozen=True)
class AgentParts:
    name: str  # "capability.agent": the name in traces and in the suspension state
    contract: AgentContract
    contract_path: Path
    # What the traces record: relative to the project root when inside it, so a flow
    # stays resumable after the project moves (another checkout, a CI workspace).
    contract_ref: str
    contract_hash: str
    decision_schema: dict[str, Any]
    integrity: IntegrityCheck
    prompt: PromptRenderer
    executors: Mapping[str, Executor]
    context_loader: ContextLoader | None = None


@dataclass(frozen=True)
class RuntimeDeps:
    traces: TraceSink
    ledger: ExecutionLedger
    states: AgentStates
    providers: ProviderFactory
    clock: Clock
