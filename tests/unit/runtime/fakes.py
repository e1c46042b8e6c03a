"""Hand-written fakes for the runtime's ports, and a small agent built in code."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mir.contracts import AgentContract, Route
from mir.inference import Message, ModelRequest, ModelResponse, ProviderError
from mir.runtime.decision_schema import pydantic_schema_check, schema_fields
from mir.runtime.integrity import IntegrityCheck
from mir.runtime.ports import AgentParts, FlowAlreadyDecided, FlowClaim, FlowHolder, RuntimeDeps
from mir.runtime.prompting import PromptVariables, RenderedPrompt
from mir.traces import TraceEvent


class Refund(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: Literal["refund", "deny", "escalate"]
    confidence: float
    amount: float = Field(ge=0)
    reason: str = Field(max_length=200)


CONTRACT: dict[str, Any] = {
    "agent": "triage",
    "mission": "Decide refunds.",
    "scope": {"input": ["order_id", "amount", "message"], "context": ["total"]},
    "decision": {"model": "domain:Refund"},
    "actions": {
        "refund": {
            "executor": "adapters:refund",
            "roles": ["agent", "support"],
            "limits": {"amount": {"minimum": 0, "maximum": 500}},
        },
        "deny": {"executor": "adapters:deny"},
        "escalate": {"executor": "adapters:escalate", "roles": ["*"]},
    },
    "review": {"confidence_threshold": 0.7},
    "retries": 2,
    "ttl_seconds": 300,
    "prompt": "triage.j2",
    "routes": [
        {"name": "local", "provider": "llama", "model": "default"},
        {"name": "remote", "provider": "litellm", "model": "openai/x"},
    ],
    "fallback": {
        "rules": [
            {
                "when": [{"field": "input.amount", "op": "<=", "value": 20}],
                "action": "refund",
                "params": {"amount": "$input.amount", "reason": "small"},
            }
        ],
        "default": {"action": "escalate", "params": {"amount": 0, "reason": "fallback"}},
    },
}


def contract(**changes: Any) -> AgentContract:
    return AgentContract.model_validate({**CONTRACT, **changes})


def decision(**changes: Any) -> str:
    import json

    base = {"action": "refund", "confidence": 0.9, "amount": 40, "reason": "damaged"}
    return json.dumps({**base, **changes})


class FakePrompt:
    """Renders the variables as JSON so tests can read what the model was shown."""

    def render(self, variables: PromptVariables) -> RenderedPrompt:
        import json

        text = json.dumps(
            {"input": variables.input, "context": variables.context, "errors": variables.errors}
        )
        return RenderedPrompt(messages=(Message(role="user", content=text),), version="1+test")


class FakeProvider:
    def __init__(self, name: str, outputs: Sequence[str | ModelResponse | Exception]):
        self.name = name
        self.outputs = list(outputs)
        self.requests: list[ModelRequest] = []

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        if not self.outputs:
            raise ProviderError(f"{self.name}: no more outputs")
        item = self.outputs.pop(0)
        if isinstance(item, BaseException):  # a BaseException: the process "dies" here
            raise item
        if isinstance(item, ModelResponse):
            return item
        return ModelResponse(
            text=item,
            provider=self.name,
            model=f"{self.name}-model",
            prompt_tokens=10,
            completion_tokens=5,
        )


@dataclass
class MemoryTraces:
    events: list[TraceEvent] = field(default_factory=list)
    appends: int = 0

    def append(self, events: Sequence[TraceEvent]) -> None:
        self.appends += 1
        self.events.extend(events)

    def flow(self, flow_id: str, *, verify: bool = False) -> list[TraceEvent]:
        return sorted((e for e in self.events if e.flow_id == flow_id), key=lambda e: e.seq)


@dataclass
class MemoryLedger:
    """One process's view of a shared ledger: ``other()`` is a second process on the same
    claims (a different holder token, the same dicts)."""

    claims: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    outcomes: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    flows: dict[str, tuple[str, FlowHolder]] = field(default_factory=dict)
    owner: str = "me"
    dead: set[str] = field(default_factory=set)  # owners that "died"

    def other(self, owner: str = "other") -> MemoryLedger:
        return MemoryLedger(self.claims, self.outcomes, self.flows, owner, self.dead)

    def claim(self, key: str, info: Mapping[str, Any]) -> bool:
        flow_id = info.get("flow_id")
        if flow_id is not None:
            held = self.flows.get(flow_id)
            if held is not None and held[0] != self.owner:
                raise FlowAlreadyDecided.held_by(held[1])
            holder = FlowHolder(flow_id, "executing", str(info.get("by")), "now")
            self.flows[flow_id] = (self.owner, holder)
        if key in self.claims:
            return False
        self.claims[key] = info
        return True

    def complete(self, key: str, outcome: Mapping[str, Any]) -> None:
        self.outcomes[key] = outcome

    def outcome(self, key: str) -> Mapping[str, Any] | None:
        return self.outcomes.get(key)

    def claimed(self, key: str) -> bool:
        return key in self.claims

    def claim_flow(self, flow_id: str, state: str, *, by: str) -> FlowClaim:
        held = self.flows.get(flow_id)
        mine = (self.owner, FlowHolder(flow_id, state, by, "now"))
        if held is None or held[0] == self.owner:
            self.flows[flow_id] = mine
            return FlowClaim(won=True)
        if held[1].final is None and held[0] in self.dead:
            self.flows[flow_id] = mine
            return FlowClaim(won=True, holder=held[1])
        return FlowClaim(won=False, holder=held[1])

    def holder(self, flow_id: str) -> FlowHolder | None:
        held = self.flows.get(flow_id)
        return held[1] if held else None

    def settle_flow(self, flow_id: str, final: str) -> None:
        owner, holder = self.flows[flow_id]
        if owner == self.owner:
            self.flows[flow_id] = (owner, replace(holder, final=final, state=final))

    def release_flow(self, flow_id: str) -> None:
        held = self.flows.get(flow_id)
        if held is not None and held[0] == self.owner and held[1].final is None:
            del self.flows[flow_id]


@dataclass
class FakeStates:
    suspended: set[str] = field(default_factory=set)

    def is_suspended(self, agent: str) -> bool:
        return agent in self.suspended


@dataclass
class Clock:
    now: datetime = field(default_factory=lambda: datetime(2026, 1, 1, 12, 0, tzinfo=UTC))

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@dataclass
class World:
    """A context loader whose answer the test can change between snapshot and execution."""

    state: dict[str, Any] = field(default_factory=lambda: {"total": 80, "status": "delivered"})
    calls: int = 0

    def __call__(self, input: Mapping[str, Any]) -> Mapping[str, Any]:
        self.calls += 1
        return dict(self.state)


@dataclass
class Executions:
    calls: list[tuple[str, dict[str, Any], str]] = field(default_factory=list)
    fail: bool = False

    def executor(self, action: str):
        def run(params: Mapping[str, Any], *, idempotency_key: str) -> Mapping[str, Any]:
            if self.fail:
                raise RuntimeError("payment service down")
            self.calls.append((action, dict(params), idempotency_key))
            return {"done": action}

        return run


@dataclass
class Harness:
    parts: AgentParts
    deps: RuntimeDeps
    traces: MemoryTraces
    ledger: MemoryLedger
    states: FakeStates
    clock: Clock
    providers: dict[str, FakeProvider]
    executions: Executions

    def steps(self, flow_id: str) -> list[str]:
        return [e.step for e in self.traces.flow(flow_id)]


def harness(
    outputs: Sequence[str | ModelResponse | Exception] = (),
    *,
    remote: Sequence[str | ModelResponse | Exception] = (),
    world: World | None = None,
    **contract_changes: Any,
) -> Harness:
    c = contract(**contract_changes)
    schema = Refund.model_json_schema()
    executions = Executions()
    providers = {"local": FakeProvider("local", outputs), "remote": FakeProvider("remote", remote)}
    for route in c.routes:
        if route.name not in providers:
            providers[route.name or route.provider] = FakeProvider(route.name or "x", [])
    parts = AgentParts(
        name="refunds.triage",
        contract=c,
        contract_path=Path("capabilities/refunds/agents/triage.yaml"),
        contract_ref="capabilities/refunds/agents/triage.yaml",
        contract_hash="c0ffee",
        decision_schema=schema,
        integrity=IntegrityCheck(
            contract=c,
            schema_check=pydantic_schema_check(Refund),
            schema_fields=schema_fields(schema),
        ),
        prompt=FakePrompt(),
        executors={a: executions.executor(a) for a in c.actions},
        context_loader=world,
    )
    traces, ledger, states, clock = MemoryTraces(), MemoryLedger(), FakeStates(), Clock()

    def factory(route: Route) -> FakeProvider:
        return providers[route.name or route.provider]

    deps = RuntimeDeps(traces=traces, ledger=ledger, states=states, providers=factory, clock=clock)
    return Harness(parts, deps, traces, ledger, states, clock, providers, executions)
