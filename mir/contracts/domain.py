"""The file formats users write: intent-doc front matter, agent contracts, eval suites.

These models *are* the formats: the JSON schemas in ``schemas/`` are generated from
them (``mir schema --write``), scaffolding renders files that validate against them,
the boundary linter reads ``IntentDoc`` and the runtime executes ``AgentContract``.
Every model forbids unknown keys so a typo is an error, not a silently ignored rule.
A contract's ``drift`` section is in ``drift_settings``, eval suites in ``eval_suite``.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    model_validator,
)

from mir.contracts.approvals import Approvals
from mir.contracts.drift_settings import DriftSettings
from mir.contracts.names import Identifier
from mir.contracts.review import Review, RuleCondition

Layer = Literal["domain", "application", "adapters"]
LAYERS: tuple[Layer, ...] = ("domain", "application", "adapters")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --------------------------------------------------------------------------- intent docs
class IntentDoc(_Strict):
    """Front matter of a capability's CLAUDE.md, enforced by ``mir lint boundaries``."""

    capability: Identifier = Field(description="The capability's package name.")
    depends_on: list[Identifier] = Field(
        default_factory=list, description="Capabilities this one may import (public API only)."
    )
    public: list[str] = Field(
        default_factory=list, description="Names the package __init__ exports to others."
    )
    forbidden: dict[Layer, list[str]] = Field(
        default_factory=dict,
        description="Extra modules a layer may not import, added to [tool.mir.lint] defaults.",
    )
    layers: dict[str, Layer] = Field(
        default_factory=dict,
        description="Modules of this capability with other names, mapped to a layer "
        "(e.g. {rules: domain}); a module in none is a lint finding (MIR205).",
    )
    layout: Literal["layered", "flat"] = Field(
        "layered",
        description="'flat': the capability has no layers inside it (no placement, no "
        "layer direction, no per-layer import rules but `forbidden.adapters`).",
    )

    @model_validator(mode="after")
    def _flat_has_no_layers(self) -> IntentDoc:
        if self.layout == "flat" and self.layers:
            raise ValueError(
                "layers: a flat capability places no module (drop layers: or layout: flat)"
            )
        return self


# --------------------------------------------------------------------------- contracts
class Scope(_Strict):
    """What the agent may see. Keys outside these lists are dropped before the prompt."""

    input: list[str] = Field(default_factory=list, description="Input fields the agent may see.")
    context: list[str] = Field(
        default_factory=list, description="Context (world state) fields the agent may see."
    )


class DecisionSpec(_Strict):
    """The shape of a decision: a pydantic model in the capability's domain, or inline."""

    model: str | None = Field(
        None,
        description="'module:Class' inside the capability, e.g. 'domain:TriageDecision'.",
    )
    json_schema: dict[str, Any] | None = Field(None, description="Inline JSON schema instead.")
    action_field: str = "action"
    confidence_field: str = "confidence"
    confidence_source: Literal["reported", "logprobs"] = Field(
        "reported",
        description="'reported': the number the model writes in the confidence field; "
        "'logprobs': the provider's token probability of the chosen action (llama.cpp, "
        "OpenAI-compatible servers that return logprobs), written into that field.",
    )

    @model_validator(mode="after")
    def _one_source(self) -> DecisionSpec:
        if (self.model is None) == (self.json_schema is None):
            raise ValueError("set exactly one of 'model' or 'json_schema'")
        if self.model is not None and ":" not in self.model:
            raise ValueError("'model' must look like 'module:Class', e.g. 'domain:TriageDecision'")
        return self


class InputSpec(_Strict):
    """The shape of a caller's input, checked before the model is called: an input it
    refuses ends the flow as ``rejected`` / ``input_invalid`` (the model never sees it)."""

    model: str | None = Field(
        None, description="'module:Class' inside the capability, e.g. 'domain:TicketInput'."
    )
    json_schema: dict[str, Any] | None = Field(None, description="Inline JSON schema instead.")

    @model_validator(mode="after")
    def _one_source(self) -> InputSpec:
        if (self.model is None) == (self.json_schema is None):
            raise ValueError("set exactly one of 'model' or 'json_schema'")
        if self.model is not None and ":" not in self.model:
            raise ValueError("'model' must look like 'module:Class', e.g. 'domain:TicketInput'")
        return self


REFERENCE_ROOTS = ("input", "context")
_REFERENCE = re.compile(r"^\$(input|context)(\.[A-Za-z0-9_-]+)+$")


def _reference(value: str) -> str:
    if not _REFERENCE.match(value):
        raise ValueError(
            f"{value!r} is not a reference: use '$input.field' or '$context.field.sub' "
            f"(roots: {', '.join(REFERENCE_ROOTS)})"
        )
    return value


Reference = Annotated[str, AfterValidator(_reference)]


class BoundLimit(_Strict):
    """Limits read from the input or the world at decision time (e.g. the order's total)."""

    minimum: Reference | None = None
    maximum: Reference | None = None

    @model_validator(mode="after")
    def _some_bound(self) -> BoundLimit:
        if self.minimum is None and self.maximum is None:
            raise ValueError("set 'minimum' and/or 'maximum'")
        return self


def _binding_kind(value: Any) -> str:
    return "equal" if isinstance(value, str) else "bound"


# One error per mistake (not one per union member): a string is a reference, anything
# else a bound.
Binding = Annotated[
    Annotated[Reference, Tag("equal")] | Annotated[BoundLimit, Tag("bound")],
    Discriminator(_binding_kind),
]


class ParamLimit(_Strict):
    """Deterministic limits on one decision field, checked before execution."""

    minimum: float | None = None
    maximum: float | None = None
    max_length: int | None = Field(None, ge=0)
    one_of: list[Any] | None = None


class ActionSpec(_Strict):
    description: str = ""
    executor: str = Field(
        description="'module:function' inside the capability, e.g. 'adapters:issue_refund'."
    )
    roles: list[str] = Field(
        default_factory=lambda: ["*"], description="Caller roles allowed to trigger it; '*' = any."
    )
    limits: dict[str, ParamLimit] = Field(default_factory=dict)
    bindings: dict[str, Binding] = Field(
        default_factory=dict,
        description="Parameters tied to the input or the world, checked by the integrity "
        "check before execution: 'order_id: $input.order_id' (must be equal) or "
        "'amount: {maximum: $context.order.refundable}' (a bound read at decision time).",
    )
    approvals: Approvals | None = Field(
        None, description="Who must approve a pending flow of this action (reviewers.toml)."
    )

    @model_validator(mode="after")
    def _executor_ref(self) -> ActionSpec:
        if ":" not in self.executor:
            raise ValueError("'executor' must look like 'module:function'")
        return self


class Budget(_Strict):
    max_tokens: int | None = Field(None, gt=0, description="Per decision, all attempts.")
    max_cost_usd: float | None = Field(None, ge=0, description="Per decision, all attempts.")


class Route(_Strict):
    """One way to reach a model. Routes are tried in order (local first)."""

    name: str | None = None
    provider: Literal["llama", "litellm", "rules", "scripted"]
    model: str | None = Field(
        None,
        description="llama: a .gguf path or 'default'; litellm: a model id; or a name in "
        "the project's models.toml registry: 'NAME' (its production version, or its canary "
        "for a share of flows) or 'NAME@VERSION'.",
    )
    api_base: str | None = None
    api_key_env: str | None = Field(
        None, description="Name of the environment variable holding the key (never the key)."
    )
    temperature: float = Field(0.0, ge=0, le=2)
    max_tokens: int = Field(256, gt=0)
    timeout_s: float = Field(60.0, gt=0)
    sha256: str | None = Field(
        None,
        pattern=r"^[0-9a-fA-F]{64}$",
        description="llama: the .gguf file's sha256, checked before it is loaded (a registry "
        "model carries its own).",
    )
    n_ctx: int | None = Field(
        None, ge=256, description="llama: context window (default: [tool.mir.model] n_ctx)."
    )
    threads: int | None = Field(
        None, ge=1, description="llama: CPU threads (default: [tool.mir.model] n_threads)."
    )
    gpu_layers: int | None = Field(
        None,
        ge=-1,
        description="llama: model layers offloaded to the GPU, -1 for all (default: "
        "[tool.mir.model] gpu_layers: all on a GPU build of llama-cpp-python, else 0).",
    )
    queue: int | None = Field(
        None,
        ge=0,
        description="Calls that may wait for this route's model before it sheds (default: "
        "[tool.mir.model] queue); set by the registry entry's queue, or by hand.",
    )
    pii: Literal["mask", "block", "allow"] | None = Field(
        None,
        description="Personal data (emails, phone, card and IBAN numbers, cued names) in the "
        "prompt: 'mask' sends placeholders and restores them in the answer, 'block' never "
        "sends it (pii_blocked), 'allow' sends it as is (default: mask on a litellm route, "
        "allow on a local one).",
    )
    responses: str | None = Field(
        None,
        description="JSONL file of recorded raw outputs, replayed in order: the source of a "
        "scripted route; on a litellm route replayed through litellm's mock_response; on a "
        "llama route it replaces the model (offline tests and evals).",
    )


Condition = Literal["invalid", "low_confidence"]


class Ensemble(_Strict):
    routes: list[str] = Field(min_length=2, description="Names of routes that vote.")
    min_agreement: float = Field(0.5, gt=0, le=1)


class Rule(_Strict):
    when: list[RuleCondition] = Field(default_factory=list, description="All must hold.")
    action: str
    params: dict[str, Any] = Field(
        default_factory=dict, description="Literal values, or '$input.x' / '$context.y'."
    )
    confidence: float = Field(1.0, ge=0, le=1)


class Fallback(_Strict):
    """Deterministic rules used past the retry budget or while the agent is suspended."""

    rules: list[Rule] = Field(default_factory=list)
    default: Rule | None = None


class Serving(_Strict):
    """How a decision waits for a model: its priority in the model's queue and its
    deadline. A call past its deadline, or one a full queue cannot take, is shed at once
    to the next route or the rules fallback (reason ``shed``), never left hanging."""

    priority: int = Field(0, ge=-1000, le=1000, description="Higher first in a busy model's queue.")
    deadline_ms: int | None = Field(
        None,
        gt=0,
        description="Milliseconds from the start of the decision by which the model must "
        "have answered; none by default (the route's timeout_s still bounds a call).",
    )


class AgentContract(_Strict):
    """A responsibility contract: what an agent may see, decide and trigger."""

    agent: Identifier
    version: str = "1"
    mission: str = Field(min_length=1)
    scope: Scope = Field(default_factory=Scope)
    input: InputSpec | None = Field(
        None, description="Schema of the caller's input, validated before the model is called."
    )
    decision: DecisionSpec
    actions: dict[str, ActionSpec] = Field(min_length=1)
    review: Review = Field(default_factory=Review)
    retries: int = Field(2, ge=0, le=10, description="Re-asks after invalid output.")
    budget: Budget = Field(default_factory=Budget)
    ttl_seconds: int = Field(300, gt=0, description="How long a decision stays executable.")
    prompt: str = Field(description="Prompt template next to the contract, e.g. 'triage.j2'.")
    context_loader: str | None = Field(
        None,
        description="'module:function' in the capability returning the current world state "
        "for an input; called for the snapshot and again right before execution, where a "
        "changed state makes the decision STALE instead of executing it.",
    )
    routes: list[Route] = Field(min_length=1)
    cascade_on: list[Condition] = Field(
        default_factory=list, description="Try the next route when a route's output is this."
    )
    ensemble: Ensemble | None = None
    fallback: Fallback = Field(default_factory=Fallback)
    drift: DriftSettings = Field(
        default_factory=DriftSettings, description="Drift thresholds (`mir drift check`)."
    )
    serving: Serving = Field(
        default_factory=Serving, description="Priority and deadline of its model calls."
    )

    @model_validator(mode="after")
    def _cross_refs(self) -> AgentContract:
        names = {r.name for r in self.routes if r.name}
        if self.ensemble:
            missing = [n for n in self.ensemble.routes if n not in names]
            if missing:
                raise ValueError(f"ensemble names unknown routes: {missing}")
        for rule in [
            *self.fallback.rules,
            *([self.fallback.default] if self.fallback.default else []),
        ]:
            if rule.action not in self.actions:
                raise ValueError(f"fallback rule uses unknown action {rule.action!r}")
        return self


# Eval suites (EvalSuite, EvalCase, assertions): mir/contracts/eval_suite.py
