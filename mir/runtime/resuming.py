"""``approve`` / ``reject`` of a stored flow: who may, signed how, how many, corrected.

Every review of one flow runs under that flow's lock (``<state_dir>/reviews/<h>.lock``,
``h`` the first 32 hex digits of the sha256 of the flow id;
an exclusive ``flock``), and reads the flow's events only once it holds it: two racing
approvals are counted one after the other, so the Nth executes and the one after it finds
the flow ended. The execution itself is still claimed in the ledger (one outcome per
flow, whoever else resumes it). Refusals (an undeclared reviewer, a key that is not
theirs, a missing signature, a role, the requester, the same reviewer twice, a
correction the contract refuses) are raised before anything is written or claimed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from mir.errors import UsageError
from mir.project import Project
from mir.reviewers import SigningKey, has_roster, load_reviewers, sign_review
from mir.runtime.agent_states import current_user
from mir.runtime.approvals import (
    check_reviewer,
    counted_approvals,
    effective,
    recorded_approvals,
    required_approvals,
    rule_from,
)
from mir.runtime.execution import Tail
from mir.runtime.fleet_reviews import fleet_of, resume_in_fleet
from mir.runtime.integrity import Circumstances
from mir.runtime.loading import load_parts, resolve_contract
from mir.runtime.ports import AgentParts, RuntimeDeps, TraceSink
from mir.runtime.providers import _Providers
from mir.runtime.recorder import FlowRecorder
from mir.runtime.records import DecisionRecord, ReasonCode
from mir.runtime.review import StoredFlow, read_flow, resume_flow
from mir.runtime.stores import project_ledger, project_states
from mir.storage import ExecutionLedger, file_lock
from mir.traces import TraceStore

LOCK_WAIT_S = 120.0


def _now() -> datetime:
    return datetime.now(UTC)


def corrections(sets: Sequence[str] = (), patch: str | None = None) -> dict[str, Any] | None:
    """``--set FIELD=VALUE`` (the value as JSON when it parses, else a string) and
    ``--patch JSON`` (an object of fields), merged; None when neither is given."""
    found: dict[str, Any] = {}
    if patch is not None:
        try:
            value = json.loads(patch)
        except ValueError as exc:
            raise UsageError(f"--patch is not JSON: {exc}") from exc
        if not isinstance(value, dict) or not value:
            raise UsageError("--patch must be a JSON object of the fields to set")
        found.update(value)
    for item in sets:
        field, sep, text = item.partition("=")
        if not sep or not field.strip():
            raise UsageError(f"--set {item!r}: expected FIELD=VALUE", hint="e.g. --set amount=80")
        try:
            found[field.strip()] = json.loads(text)
        except ValueError:
            found[field.strip()] = text
    return found or None


@contextmanager
def flow_lock(state_dir: Path, flow_id: str) -> Iterator[None]:
    # Named by a hash: a flow id is the caller's text until the store has confirmed it.
    name = hashlib.sha256(flow_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    with file_lock(state_dir / "reviews" / f"{name}.lock", timeout=LOCK_WAIT_S) as held:
        if not held:
            raise UsageError(f"flow {flow_id} is being reviewed by another process", hint="retry")
        yield


def _flow_id(store: Any, flow_id: str) -> str:
    """The full id of a flow named by a unique prefix (an ambiguous one lists them)."""
    if store.flow(flow_id) or not hasattr(store, "flow_ids"):
        return flow_id
    matches = store.flow_ids(flow_id, limit=6)
    if len(matches) > 1:
        # the candidates, as `mir traces show` lists them: which one was meant?
        shown = ", ".join(matches[:5]) + (", ..." if len(matches) > 5 else "")
        raise UsageError(
            f"flow id prefix {flow_id!r} is ambiguous ({shown})",
            hint="give more characters of the flow id",
        )
    return matches[0] if matches else flow_id


def resume(
    flow_id: str,
    verdict: str,
    *,
    project: Project,
    by: str | None,
    reason: str | None,
    context: Mapping[str, Any] | None,
    traces: TraceSink | None,
    signing_key: SigningKey | None,
    correction: dict[str, Any] | None,
) -> DecisionRecord:
    store = traces if traces is not None else TraceStore.for_project(project)
    ledger = project_ledger(project, store)
    try:
        here = partial(
            _resume_here, verdict=verdict, project=project, store=store, ledger=ledger, by=by,
            reason=reason, context=context, signing_key=signing_key, correction=correction,
        )  # fmt: skip
        fleet = fleet_of(project)
        if fleet is None:
            return here(_flow_id(store, flow_id))
        return resume_in_fleet(
            fleet, flow_id, verdict, project=project, store=store, by=by or current_user(),
            local_id=partial(_flow_id, store), decide=here,
        )  # fmt: skip
    finally:
        ledger.close()
        if traces is None:
            store.close()  # type: ignore[attr-defined]


def _resume_here(
    flow_id: str,
    *,
    verdict: str,
    project: Project,
    store: Any,
    ledger: ExecutionLedger,
    by: str | None,
    reason: str | None,
    context: Mapping[str, Any] | None,
    signing_key: SigningKey | None,
    correction: dict[str, Any] | None,
) -> DecisionRecord:
    """The review of a flow held in this host's traces, under its local lock."""
    with flow_lock(project.state_dir, flow_id):
        # Tamper evidence is what lets a later process act on a stored decision: the
        # events are re-hashed against the chain and the manifest before anything runs.
        events = store.flow(flow_id, verify=True)
        source = next((e.data.get("source") for e in events if e.step == "snapshot"), None)
        if source in ("eval", "shadow"):
            who = "`mir eval`" if source == "eval" else "a shadow model version"
            raise UsageError(
                f"flow {flow_id} was decided by {who}: its decision never executes",
                hint="run the agent for real with `mir run agent`",
            )
        stored = read_flow(flow_id, events)
        stored_path = Path(stored.contract_path)
        if not stored_path.is_absolute():
            stored_path = project.root / stored_path
        parts = load_parts(resolve_contract(str(stored_path), project), project.root)
        deps = RuntimeDeps(
            traces=store,
            ledger=ledger,
            states=project_states(project),
            providers=_Providers(project, None, None),
            clock=_now,
            # a replayed flow stays a replay when approved: its final says so too
            source="replay" if source == "replay" else "production",
        )
        return _review(
            parts, deps, stored, verdict, project=project, by=by, reason=reason,
            context=context, key=signing_key, correction=correction,
            reload=lambda: store.flow(stored.flow_id, verify=True),
        )  # fmt: skip


def _review(
    parts: AgentParts,
    deps: RuntimeDeps,
    flow: StoredFlow,
    verdict: str,
    *,
    project: Project,
    by: str | None,
    reason: str | None,
    context: Mapping[str, Any] | None,
    key: SigningKey | None,
    correction: dict[str, Any] | None,
    reload: Any,
) -> DecisionRecord:
    reviewers = load_reviewers(project.root)
    declared = has_roster(project.root)
    if by is None and key is not None:  # the reviewer whose declared key this is
        by = next((r.name for r in reviewers.values() if r.public_key == key.public_key), None)
    redact = getattr(deps.traces, "redact", None)
    if by and declared and by not in reviewers and redact is not None and redact(by) != by:
        # never echoed: a refusal is printed, and a secret in it would be shown
        raise UsageError("--by holds a secret and names no declared reviewer: refused")
    if flow.phase != "pending" or flow.decision is None:
        by = by or current_user()
        if correction:
            raise UsageError(f"flow {flow.flow_id} is not pending review: nothing to correct")
        # An interrupted flow is replayed (its decision was approved already), an ended
        # one is refused with its outcome: as before reviewers were declared.
        return resume_flow(
            parts, deps, flow, verdict, by=by, reason=reason,  # type: ignore[arg-type]
            current_context=context, reload=reload,
        )  # fmt: skip
    if by is None and declared and current_user() not in reviewers:
        raise UsageError(
            "no reviewer named: unsigned and anonymous reviews are refused here",
            hint="pass --key FILE (signs it, and names the reviewer whose key it is) or --by NAME",
        )
    by = by or current_user()
    contract = parts.contract
    action_field = contract.decision.action_field
    proposal = dict(flow.decision)
    if correction and contract.decision.confidence_field in correction:
        raise UsageError(
            f"--set {contract.decision.confidence_field}: the model's confidence is not a "
            "reviewer's to set"
        )
    target = effective(proposal, correction)
    # Held to the rules recorded when the flow was decided, as `mir traces verify` holds it
    # (a contract relaxed or tightened since changes flows decided from then on).
    required = recorded_approvals({"approvals": flow.approvals})
    if required is None:
        required = required_approvals(contract)
    rule = rule_from(required, [proposal.get(action_field), target.get(action_field)], declared)
    check_reviewer(
        flow_id=flow.flow_id, by=by, verdict=verdict, rule=rule, reviewers=reviewers,
        declared=declared, key=key, requested_by=flow.requested_by, root=project.root,
    )  # fmt: skip
    if correction:
        _check_correction(parts, deps, flow, target)
    now = deps.clock()
    signed = sign_review(
        key, flow_id=flow.flow_id, decision=proposal, verdict=verdict,  # type: ignore[arg-type]
        reviewer=by, at=now.isoformat(), correction=correction,
    )  # fmt: skip
    data: dict[str, Any] = signed.data()
    if verdict == "approve" and rule is not None:
        prior = counted_approvals(
            flow.reviews, flow_id=flow.flow_id, proposal=proposal, target=target, rule=rule,
            reviewers=reviewers, requested_by=flow.requested_by,
        )  # fmt: skip
        if by in prior:
            raise UsageError(
                f"{by} already approved flow {flow.flow_id} ({len(prior)} of {rule.count} "
                "approvals): the same reviewer counts once",
                hint="another reviewer must approve it",
            )
        data["approvals"] = {"have": len(prior) + 1, "need": rule.count}
        if len(prior) + 1 < rule.count:
            return _partial(parts, deps, flow, by, now, reason, correction, data)
    return resume_flow(
        parts, deps, flow, verdict, by=by, reason=reason,  # type: ignore[arg-type]
        current_context=context, reload=reload, now=now, review_data=data,
        correction=correction,
    )  # fmt: skip


def _check_correction(
    parts: AgentParts, deps: RuntimeDeps, flow: StoredFlow, target: dict[str, Any]
) -> None:
    """A correction the contract refuses (a field it lacks, past a limit, a broken
    binding, a forbidden action) is the reviewer's mistake: refused, the flow still waits.
    An expired TTL is not: the flow then ends stale, as an approval would."""
    when = Circumstances(
        role=flow.state.role, created_at=flow.state.created_at, now=deps.clock(),
        input=flow.state.input, context=flow.state.context, ttl_seconds=flow.state.ttl_seconds,
    )  # fmt: skip
    verdict = parts.integrity.check_decision(target, when)
    problems = [p for p in verdict.problems if p.code != ReasonCode.TTL_EXPIRED]
    if problems:
        listed = "; ".join(p.message for p in problems[:5])
        raise UsageError(
            f"the corrected decision of flow {flow.flow_id} is refused by the contract: {listed}",
            hint="correct it within the contract; nothing was approved",
        )


def _partial(
    parts: AgentParts,
    deps: RuntimeDeps,
    flow: StoredFlow,
    by: str,
    now: datetime,
    reason: str | None,
    correction: dict[str, Any] | None,
    data: dict[str, Any],
) -> DecisionRecord:
    """An approval that is not the last one needed: traced; the flow still waits."""
    rec = FlowRecorder(deps.traces, flow.flow_id, parts.name, next_seq=flow.next_seq)
    rec.emit(
        "review",
        data={
            "verdict": "approve", "by": by, "at": now.isoformat(), "reason": reason,
            "contract_changed": parts.contract_hash != flow.contract_hash,
            "correction": correction, **data,
        },
    )  # fmt: skip
    rec.flush()
    tail = Tail(parts, deps, rec, flow.state)
    record = tail.record("pending_review", flow.reasons, flow.decision)
    return record.model_copy(update={"reviewed_by": by, "reviewed_at": now.isoformat()})
