"""``DecisionFlow``: one decision through the pipeline of SPEC section 3.

snapshot -> infer (retries, cascade, ensemble) -> validate -> route (review?) ->
re-check -> execute -> trace. Every step is a small unit of its own (``snapshot``,
``integrity``, ``asking`` (one route's attempts), ``routing``, ``rules``, ``execution``);
this module only orders them and records each step under one DecisionFlow ID.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from mir.contracts import Route
from mir.runtime.approvals import approvals_record
from mir.runtime.asking import Proposal, RouteAsker
from mir.runtime.execution import FlowState, Tail
from mir.runtime.integrity import Circumstances
from mir.runtime.opening import open_flow
from mir.runtime.ports import AgentParts, RuntimeDeps
from mir.runtime.records import DecisionRecord, ReasonCode
from mir.runtime.routing import cascade_reason, needs_review, vote
from mir.runtime.rules import matching_rule, rule_decision
from mir.runtime.snapshot import ContextSnapshot, thaw
from mir.storage import StoreUnavailable


class DecisionFlow:
    def __init__(self, parts: AgentParts, deps: RuntimeDeps):
        self.parts = parts
        self.deps = deps
        self._asker = RouteAsker(parts, deps)

    def decide(
        self,
        input: Mapping[str, Any],
        context: Mapping[str, Any] | None = None,
        *,
        role: str = "agent",
        priority: int | None = None,
        deadline_ms: int | None = None,
        requested_by: str | None = None,
        flow_id: str | None = None,
    ) -> DecisionRecord:
        return self.decide_opened(
            input,
            context,
            role=role,
            priority=priority,
            deadline_ms=deadline_ms,
            requested_by=requested_by,
            flow_id=flow_id,
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
        flow_id: str | None = None,
    ) -> tuple[DecisionRecord, FlowState | None]:
        """The record, and the opened flow's state (its frozen input and context) when the
        flow got past its snapshot: what a shadow decision re-decides on."""
        contract = self.parts.contract
        # The deadline counts from the call, so loading the world and the snapshot are in it.
        deadline_ms = deadline_ms if deadline_ms is not None else contract.serving.deadline_ms
        deadline_at = None if deadline_ms is None else time.monotonic() + deadline_ms / 1000
        opened = open_flow(self.parts, self.deps, input, context, role, requested_by, flow_id)
        if isinstance(opened, DecisionRecord):  # refused input, or no world to decide on
            return opened, None
        tail, snap = opened
        tail.state.priority = contract.serving.priority if priority is None else priority
        tail.state.deadline_at = deadline_at
        return self._decide(tail, snap), tail.state

    def _decide(self, tail: Tail, snap: ContextSnapshot) -> DecisionRecord:
        contract = self.parts.contract
        rec = tail.rec
        try:
            suspended = self.deps.states.is_suspended(self.parts.name)
        except StoreUnavailable as exc:  # fail closed: no model asked, nothing executed
            rec.emit("validate", reasons=[ReasonCode.STORE_UNAVAILABLE], data={"error": str(exc)})
            return tail.finish("aborted", [ReasonCode.STORE_UNAVAILABLE])
        if suspended:
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
            last = self._asker.ask(tail, snap, route)
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
        proposals = [self._asker.ask(tail, snap, by_name[name]) for name in ensemble.routes]
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

    def _model_routes(self) -> list[Route]:
        return list(self.parts.contract.routes)
