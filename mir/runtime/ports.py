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
from mir.errors import EXIT_FINDINGS, UsageError
from mir.inference import ModelProvider
from mir.models import Resolved
from mir.runtime.integrity import IntegrityCheck
from mir.runtime.prompting import PromptVariables, RenderedPrompt
from mir.storage import ExecutionLedger, FlowHolder
from mir.storage import FlowClaim as FlowClaim  # re-exported: the ledger port returns it
from mir.traces import FlowSource, TraceEvent

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


class FlowAlreadyDecided(UsageError):
    """The flow's outcome belongs to someone else: the loser of a race is told the truth.
    Exit 1, like any decision that did not go through (not a usage mistake)."""

    exit_code = EXIT_FINDINGS

    def __init__(self, flow_id: str, status: str, by: str, at: str, *, hint: str | None = None):
        self.flow_id, self.status, self.by, self.at = flow_id, status, by, at
        super().__init__(
            f"flow {flow_id} is already {status} (by {by}, at {at})",
            hint=hint or f"see `mir traces show {flow_id}`",
        )

    @classmethod
    def held_by(cls, holder: FlowHolder, *, hint: str | None = None) -> FlowAlreadyDecided:
        by = f"{holder.by}, {holder.process}" if holder.process and not holder.final else holder.by
        return cls(holder.flow_id, holder.status, by, holder.at, hint=hint)


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
    input_schema: dict[str, Any] | None = None  # the input's JSON schema (None: any object)


class ModelRoutes(Protocol):
    """How a flow turns a contract route into the concrete one it calls (a registry
    version); ``mir.models.RouteResolver`` in production, ``ShadowRoutes`` in a shadow."""

    def resolve(self, route: Route, flow_id: str) -> Resolved:
        """Raises ``RegistryError`` when the route has no version this flow can use."""
        ...


@dataclass(frozen=True)
class RuntimeDeps:
    traces: TraceSink
    ledger: ExecutionLedger
    states: AgentStates
    providers: ProviderFactory
    clock: Clock
    # Where the flow comes from, written into its snapshot and final events: "production"
    # (a real decision on a live model), "eval" (``mir eval``, the promotion gate, the
    # judge), "shadow" (a registry shadow version) or "replay" (a production-mode run
    # whose model answers come from recorded responses). Only "production" counts as
    # evidence: drift, ``mir models compare`` / ``check``.
    source: FlowSource = "production"
    # Run the whole pipeline but never an executor: where it would execute, an ``execute``
    # event with phase "skipped" is recorded and the flow ends with the status it would
    # have reached (``record.executed`` stays False). The ledger is never touched.
    dry_run: bool = False
    # The project's model registry (``models.toml``): a route naming a registry model is
    # resolved per flow (production, canary share, pinned version). None: no registry.
    models: ModelRoutes | None = None
    # A shadow decision (``source: shadow``): the production flow it shadows, written into
    # its snapshot event (``mir models compare`` pairs the two flows by it).
    shadow_of: str | None = None
    # Called with the record of a flow that starts waiting for review, once its events
    # are on disk (the review alert; best effort: its failure never fails the decision).
    on_pending: Callable[[Any], None] | None = None
    # The fleet's submission queue (``Agent.submit`` / ``result``); None in local mode.
    submissions: Any = None
