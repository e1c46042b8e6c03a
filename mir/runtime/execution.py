"""The tail every flow shares: re-check the world, execute at most once, finish.

Used by a fresh decision and by a flow resumed after review (``mir approve``) or after a
crash, so the rules below hold for all of them:

* the world is re-checked right before execution (pipeline step 5): a changed state
  hash makes the decision STALE, never executed;
* the decision is re-validated against the contract at execution time (TTL, limits,
  role): an approval does not revive an expired or since-forbidden decision;
* the idempotency key is claimed in the ledger BEFORE the executor runs (step 6), in
  the same transaction as the flow's outcome: a replay after a crash finds the claim
  and executes nothing twice, and a reviewer racing the run is told it is executing;
* a flow resumed under a claim (approve, reject, replay) settles that claim with its
  final status once the ``final`` event is on disk.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from time import perf_counter
from typing import Any

from mir.runtime.integrity import Circumstances
from mir.runtime.ports import AgentParts, RuntimeDeps
from mir.runtime.recorder import FlowRecorder, jsonable
from mir.runtime.records import DecisionRecord, FlowStatus, ReasonCode
from mir.runtime.snapshot import sha256_hex, state_hash
from mir.storage import StoreUnavailable

EXECUTE_STEP = "execute"


def idempotency_key(flow_id: str, step: str, params: Mapping[str, Any]) -> str:
    return sha256_hex([flow_id, step, jsonable(dict(params))])


class NoLedger:
    """The ledger of a dry run (``mir eval``): nothing is claimed, so any use is a bug
    (the SQLite file is never even opened)."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"a dry run touched the execution ledger ({name})")

    def close(self) -> None:
        pass


@dataclass
class FlowState:
    """What a flow carries from step to step (and what a resumed flow restores)."""

    flow_id: str
    role: str
    created_at: datetime
    input: dict[str, Any]
    context: dict[str, Any]
    state_hash: str
    started: float
    tokens: int = 0
    cost: float = 0.0
    model_ms: float = 0.0
    provider: str | None = None
    model: str | None = None
    ttl_seconds: float | None = None  # the contract's TTL when the flow began
    context_source: str = "none"  # "caller", "loader" or "none": where the world came from
    priority: int = 0  # in a busy model's queue (contract `serving`, or the call's own)
    deadline_at: float | None = None  # time.monotonic() by which a model must answer
    # The contract the flow was decided under (its snapshot's); a resumed flow keeps it
    # even when the contract was edited since. None: the parts' own (a fresh flow).
    contract_hash: str | None = None
    # Every prompt the flow's model calls were made with (infer events' prompt_hash), in
    # order, once each; restored from the stored events when the flow is resumed.
    prompt_hashes: list[str] = field(default_factory=list)
    # Who asked for the decision (the caller, MIR_USER or the OS user): never its approver.
    requested_by: str | None = None


@dataclass
class Tail:
    parts: AgentParts
    deps: RuntimeDeps
    rec: FlowRecorder
    state: FlowState
    by: str = "its run"  # who executes, named to a reviewer who races this flow
    holds_flow: bool = False  # resumed under a flow claim: settle it when finished
    # A reviewer's correction replaced the model's decision: the final event keeps the
    # model's proposal beside the record's (corrected) decision, marked as an override.
    proposal: dict[str, Any] | None = None

    def finish(
        self,
        status: FlowStatus,
        reasons: Sequence[str] = (),
        decision: Mapping[str, Any] | None = None,
        *,
        executed: bool = False,
    ) -> DecisionRecord:
        record = self.record(status, reasons, decision, executed=executed)
        self.rec.emit(
            "final",
            status=status,
            reasons=record.reasons,
            provider=record.provider,
            model=record.model,
            # The rest of the flow's time beyond its model calls: a flow's events then sum
            # to its wall time (trace summaries add latencies up).
            latency_ms=max(0.0, round(record.latency_ms - self.state.model_ms, 3)),
            cost_usd=self.state.cost,
            # Beside the record (whose shape `--json` prints): where the flow came from,
            # its contract and prompts, so `mir drift` reads a flow from its final event alone,
            # without scanning every snapshot (flows from before these keys fall back).
            data={
                "record": record.model_dump(),
                "source": self.deps.source,
                "contract_hash": self.state.contract_hash or self.parts.contract_hash,
                "prompt_hashes": list(self.state.prompt_hashes),
                **(
                    {"proposal": self.proposal, "human_override": True}
                    if self.proposal is not None
                    else {}
                ),
            },
        )
        self.rec.flush()
        if self.holds_flow:  # only now: a settled claim without its final event would lie
            self.deps.ledger.settle_flow(self.state.flow_id, status)
        return record

    def record(
        self,
        status: FlowStatus,
        reasons: Sequence[str] = (),
        decision: Mapping[str, Any] | None = None,
        *,
        executed: bool = False,
    ) -> DecisionRecord:
        spec = self.parts.contract.decision
        return DecisionRecord(
            flow_id=self.state.flow_id,
            agent=self.parts.name,
            status=status,
            decision=dict(decision) if decision is not None else None,
            action=decision.get(spec.action_field) if decision else None,
            executed=executed,
            reasons=list(dict.fromkeys(str(r) for r in reasons)),
            provider=self.state.provider,
            model=self.state.model,
            latency_ms=round((perf_counter() - self.state.started) * 1000, 3),
            tokens=self.state.tokens,
            problems=(
                self._input_problems()
                if ReasonCode.INPUT_INVALID in reasons
                else self._call_problems({str(r) for r in reasons})
            ),
        )

    def _call_problems(self, reasons: set[str]) -> list[str]:
        """Why model calls gave no answer ("provider_error: llama: ..."), one line each,
        the last of each kind the record names, redacted as the traces redact it: the CLI
        shows the cause next to the bare reason code."""
        redact = getattr(self.deps.traces, "redact", None)
        found: dict[str, str] = {}
        for event in self.rec.events:
            error = event.data.get("error") if event.step == "infer" else None
            if isinstance(error, str) and event.reasons and event.reasons[0] in reasons:
                line = " ".join(error.split())[:300]
                found[event.reasons[0]] = str(redact(line)) if redact is not None else line
        return [f"{code}: {line}" for code, line in found.items()]

    def _input_problems(self) -> list[str]:
        return [
            str(problem)
            for event in self.rec.events
            if event.step == "validate" and event.data.get("phase") in ("input", "prompt")
            for problem in event.data.get("problems", [])
        ]

    def recheck(self, current_context: Mapping[str, Any] | None) -> ReasonCode | None:
        loader = self.parts.context_loader
        if self.deps.dry_run and self.state.context_source == "caller":
            # An eval case's world replaces the loader: it is not asked (it may read
            # production systems), and the case's world does not change under the flow.
            loader = None
        if loader is not None:
            try:
                current_context = loader(dict(self.state.input))
            except Exception as exc:  # the user's loader failed: we cannot know the world
                self.rec.emit(
                    "recheck", reasons=[ReasonCode.RECHECK_FAILED], data={"error": repr(exc)}
                )
                return ReasonCode.RECHECK_FAILED
        if current_context is None:
            self.rec.emit("recheck", data={"result": "skipped"})
            return None
        now_hash = state_hash(current_context)
        changed = now_hash != self.state.state_hash
        self.rec.emit(
            "recheck",
            reasons=[ReasonCode.STATE_CHANGED] if changed else [],
            data={
                "result": "changed" if changed else "same",
                "state_hash": now_hash,
                "snapshot_state_hash": self.state.state_hash,
            },
        )
        return ReasonCode.STATE_CHANGED if changed else None

    def execute(
        self,
        decision: Mapping[str, Any],
        status_ok: FlowStatus,
        reasons: Sequence[str] = (),
        *,
        current_context: Mapping[str, Any] | None = None,
    ) -> DecisionRecord:
        reasons = list(reasons)
        problem = self.recheck(current_context)
        if problem is not None:
            status: FlowStatus = "stale" if problem == ReasonCode.STATE_CHANGED else "aborted"
            return self.finish(status, [*reasons, problem], decision)
        when = Circumstances(
            role=self.state.role,
            created_at=self.state.created_at,
            now=self.deps.clock(),
            input=self.state.input,  # bindings are re-checked against the snapshot
            context=self.state.context,
            ttl_seconds=self.state.ttl_seconds,
        )
        verdict = self.parts.integrity.check_decision(decision, when)
        if not verdict.ok:
            self.rec.emit(
                "validate",
                reasons=verdict.reasons,
                data={"phase": "pre_execute", "problems": [p.message for p in verdict.problems]},
            )
            expired = verdict.reasons == [ReasonCode.TTL_EXPIRED.value]
            return self.finish(
                "stale" if expired else "aborted", reasons + verdict.reasons, decision
            )
        return self.run_executor(decision, status_ok, reasons)

    def params(self, decision: Mapping[str, Any]) -> dict[str, Any]:
        spec = self.parts.contract.decision
        skip = {spec.action_field, spec.confidence_field}
        return {k: v for k, v in decision.items() if k not in skip}

    def key(self, decision: Mapping[str, Any]) -> str:
        return idempotency_key(self.state.flow_id, EXECUTE_STEP, self.params(decision))

    def run_executor(
        self, decision: Mapping[str, Any], status_ok: FlowStatus, reasons: list[str]
    ) -> DecisionRecord:
        action = decision[self.parts.contract.decision.action_field]
        params = self.params(decision)
        key = idempotency_key(self.state.flow_id, EXECUTE_STEP, params)
        if self.deps.dry_run:
            # Passed every check and would run here; an eval stops short of the side
            # effect and of the ledger (nothing was claimed, nothing can be replayed).
            self.rec.emit(
                "execute",
                data={"phase": "skipped", "key": key, "action": action, "params": params},
            )
            return self.finish(status_ok, reasons, decision)
        self.rec.emit(
            "execute",
            data={
                "phase": "claim",
                "key": key,
                "action": action,
                "params": params,
                "decision": dict(decision),
                "status_ok": status_ok,
                "reasons": reasons,
            },
        )
        self.rec.flush()  # the decision is on disk before the side effect can happen
        info = {
            "flow_id": self.state.flow_id,
            "agent": self.parts.name,
            "action": action,
            "by": self.by,
        }
        try:
            won = self.deps.ledger.claim(key, info)
        except StoreUnavailable as exc:  # fail closed: not claimed, so never executed
            code = ReasonCode.STORE_UNAVAILABLE
            self.rec.emit("execute", reasons=[code], data={"key": key, "error": str(exc)})
            return self.finish("aborted", [*reasons, code], decision)
        if not won:
            outcome = self.deps.ledger.outcome(key)
            code = (
                ReasonCode.ALREADY_EXECUTED
                if outcome and outcome.get("ok")
                else ReasonCode.EXECUTION_IN_DOUBT
            )
            self.rec.emit("execute", reasons=[code], data={"phase": "replay", "key": key})
            if code == ReasonCode.ALREADY_EXECUTED:
                return self.finish(status_ok, [*reasons, code], decision, executed=True)
            return self.finish("aborted", [*reasons, code], decision)
        # On disk before the side effect: the ledger holds the claim. A replay that finds
        # the key missing from the ledger then knows the ledger was lost (deleted,
        # replaced), not that the process died before claiming, and runs nothing.
        self.rec.emit("execute", data={"phase": "claimed", "key": key})
        self.rec.flush()
        try:
            result = self.parts.executors[action](params, idempotency_key=key)
        except Exception as exc:  # the user's executor failed; recorded, never retried
            self.deps.ledger.complete(key, {"ok": False, "error": repr(exc)})
            self.rec.emit(
                "execute",
                reasons=[ReasonCode.EXECUTOR_ERROR],
                data={"phase": "failed", "key": key, "error": repr(exc)},
            )
            return self.finish("aborted", [*reasons, ReasonCode.EXECUTOR_ERROR], decision)
        self.deps.ledger.complete(key, {"ok": True, "result": jsonable(result)})
        self.rec.emit("execute", data={"phase": "done", "key": key, "result": result})
        return self.finish(status_ok, reasons, decision, executed=True)
