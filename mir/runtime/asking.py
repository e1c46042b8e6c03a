"""Asking one model route for a proposal: bounded retries that feed the validation
errors back, the route resolved to its registry version, every call traced (``infer``,
``validate``), a failed or shed call recorded as a provider failure of that route.

``DecisionFlow`` (``flow``) orders the routes (cascade, ensemble) and decides what the
proposals mean; this module only asks.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from mir.contracts import Route
from mir.errors import ConfigError
from mir.inference import (
    ModelIntegrityError,
    ModelRequest,
    ModelResponse,
    ProviderError,
    ShedError,
)
from mir.models import RegistryError, Resolved
from mir.privacy import PiiBlocked
from mir.runtime.confidence import with_logprob_confidence
from mir.runtime.execution import FlowState, Tail
from mir.runtime.integrity import Circumstances, Verdict
from mir.runtime.ports import AgentParts, RuntimeDeps
from mir.runtime.prompting import PromptRenderError, PromptVariables
from mir.runtime.recorder import safe_text
from mir.runtime.records import Problem, ReasonCode
from mir.runtime.rules import matching_rule, rule_decision
from mir.runtime.snapshot import ContextSnapshot, thaw


@dataclass
class Proposal:
    """What one route (all its attempts) came up with."""

    decision: dict[str, Any] | None
    reasons: list[str] = field(default_factory=list)
    provider_failed: bool = False
    stop: bool = False  # budget spent: no further route may be asked
    refused: bool = False  # the input cannot be rendered into a prompt: no route can help


class RouteAsker:
    """Asks the routes of one agent's flows (``ask``), under its integrity checks."""

    def __init__(self, parts: AgentParts, deps: RuntimeDeps):
        self.parts = parts
        self.deps = deps

    def ask(self, tail: Tail, snap: ContextSnapshot, route: Route) -> Proposal:
        """One route, with bounded retries that feed the validation errors back."""
        contract, state = self.parts.contract, tail.state
        if route.provider == "rules":  # in an ensemble: the rules vote like a model
            return Proposal(decision=self._rules_vote(snap))
        resolved, failure = self._resolve(tail, route)
        if failure is not None:
            return failure
        route = resolved.route
        provider = self.deps.providers(route)
        errors: list[str] = []
        reasons: list[str] = []
        for attempt in range(contract.retries + 1):
            spent = self.parts.integrity.budget(self.circumstances(state))
            if spent:
                tail.rec.emit(
                    "validate", reasons=[p.code for p in spent], data={"attempt": attempt}
                )
                return Proposal(decision=None, reasons=[*reasons, *_codes(spent)], stop=True)
            try:
                prompt = self.parts.prompt.render(
                    PromptVariables(
                        mission=contract.mission,
                        input=thaw(snap.visible_input),
                        context=thaw(snap.visible_context),
                        actions=dict(contract.actions),
                        schema=self.parts.decision_schema,
                        errors=errors,
                    )
                )
            except PromptRenderError as exc:
                # The template is valid (checked at load); THIS input/world breaks it
                # (text where it does arithmetic, a missing key): refuse the input.
                tail.rec.emit(
                    "validate",
                    reasons=[ReasonCode.INPUT_INVALID],
                    data={"phase": "prompt", "problems": [str(exc)[:500]], "model_called": False},
                )
                return Proposal(
                    decision=None,
                    reasons=[*reasons, ReasonCode.INPUT_INVALID],
                    stop=True,
                    refused=True,
                )
            request = ModelRequest(
                messages=prompt.messages,
                json_schema=self.parts.decision_schema,
                model=route.model,
                temperature=route.temperature,
                max_tokens=route.max_tokens,
                timeout_s=route.timeout_s,
                api_base=route.api_base,
                api_key_env=route.api_key_env,
                logprobs=contract.decision.confidence_source == "logprobs",
                priority=state.priority,
                deadline_at=state.deadline_at,
            )
            meta: dict[str, Any] = {"route": route.name or route.provider, "attempt": attempt}
            if resolved.selection is not None:
                meta["registry"] = resolved.trace()
            refusal = getattr(provider, "refusal", None)
            refused = _past_deadline(state.deadline_at) or (
                refusal(request) if refusal is not None else None
            )
            if refused is not None:  # shed by a busy model before any disk write
                return self._call_failed(tail, provider.name, route, prompt, meta, refused, reasons)
            # Durable before the model is called: a process killed during inference still
            # leaves the flow (snapshot, earlier attempts) in the traces.
            tail.rec.flush()
            try:
                response = provider.complete(request)
            except ProviderError as exc:
                return self._call_failed(tail, provider.name, route, prompt, meta, exc, reasons)
            tokens = response.prompt_tokens + response.completion_tokens
            state.tokens += tokens
            state.cost += response.cost_usd
            state.model_ms += response.latency_ms
            state.provider, state.model = response.provider, response.model
            _prompted(state, prompt.hash)
            tail.rec.emit(
                "infer",
                provider=response.provider,
                model=response.model,
                prompt_hash=prompt.hash,
                prompt_version=prompt.version,
                prompt_tokens=response.prompt_tokens,
                completion_tokens=response.completion_tokens,
                cost_usd=response.cost_usd,
                latency_ms=response.latency_ms,
                data={
                    **meta,
                    "prompt": prompt.traced(),
                    "raw": safe_text(response.text),
                    "raw_chars": len(response.text),
                    "finish_reason": response.finish_reason,
                    **({"cached": True} if response.cached else {}),
                    **({"pii": response.pii} if response.pii else {}),
                },
            )
            verdict = self.parts.integrity.check_output(
                response.text,
                response.finish_reason,
                self.circumstances(state),
            )
            verdict, confidence = self._confidence(verdict, response, state)
            tail.rec.emit(
                "validate",
                reasons=verdict.reasons,
                data={
                    **meta,
                    "decision": verdict.decision,
                    "problems": _messages(verdict.problems),
                    **({"confidence": confidence} if confidence else {}),
                },
            )
            reasons += verdict.reasons
            if verdict.ok:
                return Proposal(decision=verdict.decision, reasons=reasons)
            if not verdict.retryable:
                stop = ReasonCode.BUDGET_EXCEEDED.value in verdict.reasons
                return Proposal(decision=None, reasons=reasons, stop=stop)
            errors = _messages(verdict.problems)
        return Proposal(decision=None, reasons=[*reasons, ReasonCode.RETRIES_EXHAUSTED])

    def _call_failed(
        self,
        tail: Tail,
        provider: str,
        route: Route,
        prompt: Any,
        meta: dict[str, Any],
        error: ProviderError | str,
        reasons: list[str],
    ) -> Proposal:
        """A model call that gave no answer: the provider failed, the model file failed its
        checksum, or the model's queue shed it (a ``ShedError``, or a refusal asked before
        the call: a plain string)."""
        if isinstance(error, (ShedError, str)):
            code = ReasonCode.SHED
        elif isinstance(error, ModelIntegrityError):  # the file is not the registry's
            code = ReasonCode.MODEL_INTEGRITY
        elif isinstance(error, PiiBlocked):
            code = ReasonCode.PII_BLOCKED
        else:
            code = ReasonCode.PROVIDER_ERROR
        _prompted(tail.state, prompt.hash)
        tail.rec.emit(
            "infer",
            reasons=[code],
            provider=provider,
            model=route.model,
            prompt_hash=prompt.hash,
            prompt_version=prompt.version,
            data={**meta, "error": str(error), "prompt": prompt.traced()},
        )
        return Proposal(decision=None, reasons=[*reasons, code], provider_failed=True)

    def _resolve(self, tail: Tail, route: Route) -> tuple[Resolved, Proposal | None]:
        """The concrete route of the registry version this flow uses (production, the
        canary's share, a pinned version); a registry that no longer has one is a
        provider failure of this route, recorded, and the flow moves on."""
        if self.deps.models is None:
            return Resolved(route), None
        try:
            return self.deps.models.resolve(route, tail.rec.flow_id), None
        except (RegistryError, ConfigError) as exc:
            tail.rec.emit(
                "infer",
                reasons=[ReasonCode.PROVIDER_ERROR],
                provider=route.provider,
                model=route.model,
                data={"route": route.name or route.provider, "error": str(exc)[:500]},
            )
            failed = Proposal(
                decision=None, reasons=[ReasonCode.PROVIDER_ERROR], provider_failed=True
            )
            return Resolved(route), failed

    def _confidence(
        self, verdict: Verdict, response: ModelResponse, state: FlowState
    ) -> tuple[Verdict, dict[str, Any] | None]:
        """``confidence_source: logprobs``: a valid proposal's confidence becomes the
        probability of its action (``runtime.confidence``), re-checked before routing."""
        spec = self.parts.contract.decision
        if spec.confidence_source != "logprobs":
            return verdict, None
        return with_logprob_confidence(
            verdict,
            response,
            action_field=spec.action_field,
            confidence_field=spec.confidence_field,
            actions=self.parts.contract.actions,
            recheck=lambda d: self.parts.integrity.check_decision(d, self.circumstances(state)),
        )

    def _rules_vote(self, snap: ContextSnapshot) -> dict[str, Any] | None:
        scope = {"input": thaw(snap.input), "context": thaw(snap.context)}
        match = matching_rule(self.parts.contract.fallback, scope)
        return rule_decision(match[1], self.parts.contract.decision, scope) if match else None

    def circumstances(self, state: FlowState) -> Circumstances:
        return Circumstances(
            role=state.role,
            created_at=state.created_at,
            now=self.deps.clock(),
            tokens_spent=state.tokens,
            cost_spent=state.cost,
            input=state.input,
            context=state.context,
        )


def _codes(problems: list[Problem]) -> list[str]:
    return [p.code.value for p in problems]


def _messages(problems: tuple[Problem, ...], limit: int = 20) -> list[str]:
    return [p.message[:500] for p in problems[:limit]]


def _prompted(state: FlowState, prompt_hash: str | None) -> None:
    """Note a prompt the flow's model was called with (its final event lists them)."""
    if prompt_hash and prompt_hash not in state.prompt_hashes:
        state.prompt_hashes.append(prompt_hash)


def _past_deadline(deadline_at: float | None) -> str | None:
    """A deadline already past when the model would be called (a submitted flow that
    waited in the queue longer than its deadline): shed before any provider is asked."""
    if deadline_at is not None and time.monotonic() >= deadline_at:
        return "the deadline passed before the model was called"
    return None
