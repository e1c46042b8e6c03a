"""The opening of a decision flow: check the caller's input, read the world, snapshot.

Every way this can go wrong ends in a traced record, never an exception: an input (or a
caller-given context) the contract refuses is ``rejected / input_invalid`` before the
context loader, the template or the model sees it; a context loader that raises (or
returns junk) ends the flow ``aborted / context_unavailable``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from time import perf_counter
from typing import Any
from uuid import uuid4

from mir.runtime.execution import FlowState, Tail
from mir.runtime.ports import AgentParts, RuntimeDeps
from mir.runtime.recorder import FlowRecorder
from mir.runtime.records import DecisionRecord, Problem, ReasonCode, Verdict
from mir.runtime.shapes import shape_problem, stored_form
from mir.runtime.snapshot import ContextSnapshot, thaw
from mir.traces import caller_trace_data


def open_flow(
    parts: AgentParts,
    deps: RuntimeDeps,
    input: Any,
    context: Any,
    role: str,
    requested_by: str | None = None,
    flow_id: str | None = None,
) -> tuple[Tail, ContextSnapshot] | DecisionRecord:
    """(tail, snapshot) of a flow ready to infer, or the record of one that ended here.
    ``requested_by`` (the library API's default: ``$MIR_USER``, else the OS user) is
    recorded in the snapshot: the requester never approves their own flow. ``flow_id``
    (default: a new random one) is the caller's, checked unused by ``Agent.decide``."""
    started = perf_counter()
    rec = FlowRecorder(deps.traces, flow_id or uuid4().hex, parts.name)
    created_at = deps.clock()
    checked = parts.integrity.check_input(input)
    if checked.ok and context is not None:
        checked = caller_context(context)
    if not checked.ok:
        tail = _early_tail(parts, deps, rec, role, created_at, started)
        _snapshot(
            tail,
            parts,
            stored_form(input),
            stored_form(context),
            "caller" if context is not None else "none",
        )
        tail.rec.emit(
            "validate",
            reasons=[ReasonCode.INPUT_INVALID],
            data={
                "phase": "input",
                "problems": [p.message[:500] for p in checked.problems[:20]],
                "model_called": False,
            },
        )
        return tail.finish("rejected", [ReasonCode.INPUT_INVALID])
    source = "caller" if context is not None else "none"
    if context is None and parts.context_loader is not None:
        loaded = load_context(parts, dict(input))
        if isinstance(loaded, str):
            tail = _early_tail(parts, deps, rec, role, created_at, started)
            # The snapshot that could not be taken, with why: the flow still has a trace.
            _snapshot(
                tail,
                parts,
                input,
                None,
                "loader",
                reasons=[ReasonCode.CONTEXT_UNAVAILABLE],
                error=loaded,
                model_called=False,
            )
            return tail.finish("aborted", [ReasonCode.CONTEXT_UNAVAILABLE])
        context, source = loaded, "loader"
    contract = parts.contract
    snap = ContextSnapshot.take(
        input,
        context or {},
        input_scope=contract.scope.input,
        context_scope=contract.scope.context,
    )
    state = FlowState(
        flow_id=rec.flow_id,
        role=role,
        created_at=created_at,
        input=thaw(snap.input),
        context=thaw(snap.context),
        state_hash=snap.state_hash,
        started=started,
        context_source=source,
        requested_by=requested_by,
    )
    tail = Tail(parts, deps, rec, state)
    _snapshot(
        tail,
        parts,
        state.input,
        state.context,
        source,
        state_hash=snap.state_hash,
        snapshot_hash=snap.snapshot_hash,
    )
    return tail, snap


def load_context(parts: AgentParts, input: dict[str, Any]) -> Mapping[str, Any] | str:
    """The world for this input, or why it could not be read."""
    assert parts.context_loader is not None
    try:
        context = parts.context_loader(input)
    except Exception as exc:  # the user's loader failed: no world, no decision
        return f"context_loader raised {type(exc).__name__}: {_short(exc)}"
    if not isinstance(context, Mapping):
        return f"context_loader returned {type(context).__name__}, expected a mapping"
    hostile = shape_problem(context)
    if hostile is not None:
        return f"context: {hostile.message}"
    return context


def caller_context(context: Any) -> Verdict:
    """A context passed by the caller is caller input too: a mapping within the limits."""
    if not isinstance(context, Mapping):
        return _refused(f"context must be a JSON object, got {type(context).__name__}")
    hostile = shape_problem(context)
    if hostile is not None:
        return _refused(f"context: {hostile.message}")
    return Verdict(decision=dict(context))


def _snapshot(
    tail: Tail,
    parts: AgentParts,
    input: Any,
    context: Any,
    source: str,
    reasons: tuple[str, ...] | list[str] = (),
    **extra: Any,
) -> None:
    """The first event of every flow (the recorder makes a hostile input JSON-safe)."""
    created_at = tail.state.created_at
    tail.rec.emit(
        "snapshot",
        at=created_at,
        reasons=reasons,
        data={
            "input": input,
            "context": context,
            "context_source": source,
            **extra,
            "source": tail.deps.source,
            **({"shadow_of": tail.deps.shadow_of} if tail.deps.shadow_of else {}),
            "contract": parts.contract_ref,
            "contract_hash": parts.contract_hash,
            "contract_version": parts.contract.version,
            # The TTL the decision is made under: a later, longer one in an edited
            # contract must not revive it at approval.
            "ttl_seconds": parts.contract.ttl_seconds,
            "role": tail.state.role,
            "requested_by": tail.state.requested_by,
            "created_at": created_at.isoformat(),
            **caller_trace_data(),
        },
    )


def _early_tail(
    parts: AgentParts,
    deps: RuntimeDeps,
    rec: FlowRecorder,
    role: str,
    created_at: datetime,
    started: float,
) -> Tail:
    state = FlowState(
        flow_id=rec.flow_id,
        role=role,
        created_at=created_at,
        input={},
        context={},
        state_hash="",
        started=started,
    )
    return Tail(parts, deps, rec, state)


def _refused(message: str) -> Verdict:
    return Verdict(problems=(Problem(code=ReasonCode.INPUT_INVALID, message=message),))


def _short(exc: BaseException, limit: int = 300) -> str:
    try:
        return str(exc)[:limit]
    except Exception:  # a hostile __str__ must not break the record of the failure
        return "(unprintable)"
