"""``DecisionFlow``: one decision through the pipeline of SPEC section 3.

snapshot -> infer (retries, cascade, ensemble) -> validate -> route (review?) ->
re-check -> execute -> trace. Every step is a small unit of its own (``snapshot``,
``integrity``, ``routing``, ``rules``, ``execution``); this module only orders them and
records each step under one DecisionFlow ID.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
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
from mir.runtime.approvals import approvals_record
from mir.runtime.confidence import with_logprob_confidence
from mir.runtime.execution import FlowState, Tail
from mir.runtime.integrity import Circumstances, Verdict
from mir.runtime.opening import open_flow
from mir.runtime.ports import AgentParts, RuntimeDeps
from mir.runtime.prompting import PromptRenderError, PromptVariables
from mir.runtime.recorder import safe_text
from mir.runtime.records import DecisionRecord, Problem, ReasonCode
from mir.runtime.routing import cascade_reason, needs_review, vote
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


class DecisionFlow:
    def __init__(self, parts: AgentParts, deps: RuntimeDeps):
        self.parts = parts
        self.deps = deps

    def decide(
        self,
        input: Mapping[str, Any],
        context: Mapping[str, Any] | None = None,
        *,
        role: str = "agent",
        priority: int | None = None,
        deadline_ms: int | None = None,
        requested_by: str | None = None,
    ) -> DecisionRecord:
        return self.decide_opened(
            input,
            context,
            role=role,
            priority=priority,
            deadline_ms=deadline_ms,
            requested_by=requested_by,
        )[0]

    def decide_opened(
        self,
        input: Mapping[str, Any],
        context: Mapping[str, Any] | None = None,
        *,
        role: str = "agent",
        priority: int | None = None,
        deadline_ms: int | None = None,
        requested_by: str | None = None,
    ) -> tuple[DecisionRecord, FlowState | None]:
        """The record, and the opened flow's state (its frozen input and context) when the
        flow got past its snapshot: what a shadow decision re-decides on."""
        contract = self.parts.contract
        # The deadline counts from the call, so loading the world and the snapshot are in it.
        deadline_ms = deadline_ms if deadline_ms is not None else contract.serving.deadline_ms
        deadline_at = None if deadline_ms is None else time.monotonic() + deadline_ms / 1000
        opened = open_flow(self.parts, self.deps, input, context, role, requested_by)
        if isinstance(opened, DecisionRecord):  # refused input, or no world to decide on
            return opened, None
        tail, snap = opened
        tail.state.priority = contract.serving.priority if priority is None else priority
        tail.state.deadline_at = deadline_at
        return self._decide(tail, snap), tail.state

    def _decide(self, tail: Tail, snap: ContextSnapshot) -> DecisionRecord:
        contract = self.parts.contract
        rec = tail.rec
        if self.deps.states.is_suspended(self.parts.name):
            # A suspended agent's model is not even asked: its output would be refused.
            rec.emit("validate", reasons=[ReasonCode.AGENT_SUSPENDED], data={"model_called": False})
            return self._fallback(tail, snap, [ReasonCode.AGENT_SUSPENDED])
        if all(r.provider == "rules" for r in contract.routes):
            return self._fallback(tail, snap, [])
        proposal = self._ensemble(tail, snap) if contract.ensemble else self._cascade(tail, snap)
        if proposal.refused:  # the prompt could not be rendered from this input
            return tail.finish("rejected", proposal.reasons)
        if proposal.decision is None:
            return self._fallback(tail, snap, proposal.reasons)
        return self._route(tail, proposal.decision, "executed", proposal.reasons)

    # ------------------------------------------------------------------ routing
    def _route(
        self, tail: Tail, decision: dict[str, Any], status_ok: str, reasons: list[str]
    ) -> DecisionRecord:
        state = tail.state  # review rules see the whole snapshot, not only the prompt's scope
        if waits := needs_review(decision, self.parts.contract, state.input, state.context):
            reasons = [*reasons, *waits]
            tail.rec.emit(
                "route",
                status="pending_review",
                reasons=reasons,
                provider=state.provider,
                model=state.model,
                data={
                    "decision": decision,
                    "status_ok": status_ok,
                    "reasons": reasons,
                    "approvals": approvals_record(self.parts.contract),
                },
            )
            tail.rec.flush()  # a later process resumes the flow from these events
            return tail.record("pending_review", reasons, decision)
        return tail.execute(decision, status_ok, reasons)  # type: ignore[arg-type]

    def _fallback(self, tail: Tail, snap: ContextSnapshot, reasons: list[str]) -> DecisionRecord:
        contract = self.parts.contract
        scope = {"input": thaw(snap.input), "context": thaw(snap.context)}
        match = matching_rule(contract.fallback, scope)
        reasons = [str(r) for r in reasons]
        if match is None:
            tail.rec.emit("fallback", reasons=[ReasonCode.NO_FALLBACK_RULE])
            return tail.finish("aborted", [*reasons, ReasonCode.NO_FALLBACK_RULE])
        rule_id, rule = match
        decision = rule_decision(rule, contract.decision, scope)
        when = Circumstances(
            role=tail.state.role,
            created_at=tail.state.created_at,
            now=self.deps.clock(),
            input=tail.state.input,
            context=tail.state.context,
        )
        verdict = self.parts.integrity.check_decision(decision, when)
        tail.state.provider, tail.state.model = "rules", f"fallback.{rule_id}"
        tail.rec.emit(
            "fallback",
            reasons=verdict.reasons,
            provider="rules",
            model=tail.state.model,
            data={"rule": rule_id, "decision": decision},
        )
        if not verdict.ok:
            return tail.finish("aborted", reasons + verdict.reasons, decision)
        return self._route(tail, decision, "fallback", reasons)

    # ------------------------------------------------------------------ inference
    def _cascade(self, tail: Tail, snap: ContextSnapshot) -> Proposal:
        routes = self._model_routes()
        best: Proposal | None = None
        last = Proposal(decision=None)
        reasons: list[str] = []
        for index, route in enumerate(routes):
            if route.provider == "rules":
                break  # a rules route means: from here on, the fallback decides
            last = self._ask(tail, snap, route)
            reasons += last.reasons
            if last.decision is not None:
                best = last
            why = cascade_reason(
                last.decision,
                self.parts.contract,
                provider_failed=last.provider_failed,
                has_next=index + 1 < len(routes) and not last.stop,
            )
            if why is None:
                break
            nxt = routes[index + 1]
            tail.rec.emit(
                "route", reasons=[why], data={"cascade": why, "to": nxt.name or nxt.provider}
            )
        chosen = last if last.decision is not None else (best or last)
        return Proposal(
            decision=chosen.decision, reasons=list(dict.fromkeys(reasons)), refused=last.refused
        )

    def _ensemble(self, tail: Tail, snap: ContextSnapshot) -> Proposal:
        ensemble = self.parts.contract.ensemble
        assert ensemble is not None
        by_name = {r.name: r for r in self.parts.contract.routes}
        proposals = [self._ask(tail, snap, by_name[name]) for name in ensemble.routes]
        refused = [p for p in proposals if p.refused]
        if refused:
            return refused[0]
        result = vote([p.decision for p in proposals], self.parts.contract, ensemble.min_agreement)
        reasons = list(dict.fromkeys(r for p in proposals for r in p.reasons))
        if result.decision is not None and not result.consensus:
            reasons.append(ReasonCode.NO_CONSENSUS.value)
            # Below the agreement floor a human decides, whatever the scaled confidence.
            result.decision[self.parts.contract.decision.confidence_field] = 0.0
        tail.rec.emit(
            "route",
            reasons=reasons,
            data={
                "ensemble": list(ensemble.routes),
                "votes": [p.decision for p in proposals],
                "agreement": result.agreement,
                "consensus": result.consensus,
            },
        )
        tail.state.provider, tail.state.model = "ensemble", "+".join(ensemble.routes)
        return Proposal(decision=result.decision, reasons=reasons)

    def _rules_vote(self, tail: Tail, snap: ContextSnapshot) -> dict[str, Any] | None:
        scope = {"input": thaw(snap.input), "context": thaw(snap.context)}
        match = matching_rule(self.parts.contract.fallback, scope)
        return rule_decision(match[1], self.parts.contract.decision, scope) if match else None

    def _circumstances(self, state: FlowState) -> Circumstances:
        return Circumstances(
            role=state.role,
            created_at=state.created_at,
            now=self.deps.clock(),
            tokens_spent=state.tokens,
            cost_spent=state.cost,
            input=state.input,
            context=state.context,
        )

    def _model_routes(self) -> list[Route]:
        return list(self.parts.contract.routes)

    def _ask(self, tail: Tail, snap: ContextSnapshot, route: Route) -> Proposal:
        """One route, with bounded retries that feed the validation errors back."""
        contract, state = self.parts.contract, tail.state
        if route.provider == "rules":  # in an ensemble: the rules vote like a model
            return Proposal(decision=self._rules_vote(tail, snap))
        resolved, failure = self._resolve(tail, route)
        if failure is not None:
            return failure
        route = resolved.route
        provider = self.deps.providers(route)
        errors: list[str] = []
        reasons: list[str] = []
        for attempt in range(contract.retries + 1):
            spent = self.parts.integrity.budget(self._circumstances(state))
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
            refused = refusal(request) if refusal is not None else None
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
                },
            )
            verdict = self.parts.integrity.check_output(
                response.text,
                response.finish_reason,
                self._circumstances(state),
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
            recheck=lambda d: self.parts.integrity.check_decision(d, self._circumstances(state)),
        )


def _codes(problems: list[Problem]) -> list[str]:
    return [p.code.value for p in problems]


def _messages(problems: tuple[Problem, ...], limit: int = 20) -> list[str]:
    return [p.message[:500] for p in problems[:limit]]


def _prompted(state: FlowState, prompt_hash: str | None) -> None:
    """Note a prompt the flow's model was called with (its final event lists them)."""
    if prompt_hash and prompt_hash not in state.prompt_hashes:
        state.prompt_hashes.append(prompt_hash)
