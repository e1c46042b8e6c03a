"""``mir traces verify``'s second half: every stored review judged against the declared
reviewers, beside the hash chain's check of the store.

The chain proves the store was not edited by a process that does not rewrite the chain;
a signature proves a review was made with the reviewer's key even when someone rewrote
the store and its chain. Each review event is judged (``mir.reviewers.judge_review``):
``unsigned`` (only where the action requires signatures), ``unknown_reviewer``,
``wrong_key``, ``forged``; and a flow that executed on fewer valid approvals than its
action requires is ``short``. An action's rule is read from the contract as it is now
(committed, reviewed), never from the trace, which an attacker may have rewritten.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mir.contracts import AgentContract, load_contract
from mir.errors import MirUserError
from mir.project import Project
from mir.reviewers import has_roster, judge_review, load_reviewers
from mir.runtime.approvals import Rule, effective, rule_for


@dataclass(frozen=True)
class ReviewFinding:
    flow_id: str
    agent: str
    seq: int
    reviewer: str
    kind: str  # unsigned | unknown_reviewer | wrong_key | forged | short
    detail: str


@dataclass
class ReviewAudit:
    reviews: int = 0  # review events judged
    signed: int = 0  # of them, carrying a signature
    findings: list[ReviewFinding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings


_QUERY = """
SELECT flow_id, agent, seq, step, status,
       CASE WHEN step = 'snapshot' THEN json_object(
                'contract', json_extract_string(data, '$.contract'),
                'requested_by', json_extract_string(data, '$.requested_by'))
            WHEN step = 'review' THEN data
            WHEN status = 'pending_review'
                THEN json_object('decision', json_extract(data, '$.decision'))
            ELSE NULL END
FROM ({events})
WHERE flow_id IN (SELECT flow_id FROM ({reviews}))
ORDER BY flow_id, seq
"""


def audit_reviews(project: Project, store: Any) -> ReviewAudit:
    """Judge every review event in ``store`` (a ``TraceStore``)."""
    audit = ReviewAudit()
    reviewers = load_reviewers(project.root)
    declared = has_roster(project.root)
    contracts: dict[str, AgentContract | None] = {}
    with store.analysis() as (con, events, _):
        rows = con.execute(
            _QUERY.format(
                events=events(
                    "step IN ('snapshot', 'review', 'final') OR status = 'pending_review'"
                ),
                reviews=events("step = 'review' OR status = 'pending_review'"),
            )
        ).fetchall()
    flow: dict[str, Any] = {}
    for flow_id, agent, seq, step, status, data in rows:
        if flow.get("id") != flow_id:
            _close(flow, audit)
            flow = {"id": flow_id, "agent": agent, "approved": [], "rule": None}
        parsed = json.loads(data) if data else {}
        if step == "snapshot":
            flow["requested_by"] = parsed.get("requested_by")
            flow["contract"] = _contract(project.root, parsed.get("contract"), contracts)
        elif step == "review":
            _judge(flow, seq, parsed, audit, reviewers, declared)
        elif status == "pending_review" and isinstance(parsed.get("decision"), dict):
            flow["decision"] = parsed["decision"]
        if step == "final":
            flow["final"] = status
    _close(flow, audit)
    return audit


def _contract(root: Path, ref: Any, cache: dict[str, AgentContract | None]) -> Any:
    if not isinstance(ref, str) or not ref:
        return None
    if ref not in cache:
        path = Path(ref) if Path(ref).is_absolute() else root / ref
        try:
            cache[ref] = load_contract(path)
        except (MirUserError, OSError):
            cache[ref] = None  # a contract gone or broken: no rule to hold reviews to
    return cache[ref]


def _rule(flow: dict[str, Any], correction: Any, declared: bool) -> Rule | None:
    contract, decision = flow.get("contract"), flow.get("decision")
    if contract is None or decision is None:
        return None
    field_name = contract.decision.action_field
    target = effective(decision, correction if isinstance(correction, dict) else None)
    return rule_for(contract, [decision.get(field_name), target.get(field_name)], declared)


def _judge(
    flow: dict[str, Any],
    seq: int,
    data: dict[str, Any],
    audit: ReviewAudit,
    reviewers: dict[str, Any],
    declared: bool,
) -> None:
    if data.get("verdict") not in ("approve", "reject") or "by" not in data:
        return  # a replay of an interrupted flow is not a review
    audit.reviews += 1
    rule = _rule(flow, data.get("correction"), declared)
    if rule is not None:
        flow["rule"] = rule
    signed = data.get("statement") is not None or bool(data.get("signature"))
    audit.signed += signed
    by = str(data.get("by"))
    if not signed and not (rule is not None and rule.signed):
        if data.get("verdict") == "approve" and rule is not None and by in reviewers:
            flow["approved"].append(by)
        return
    decision = flow.get("decision")
    finding, detail = judge_review(data, flow_id=flow["id"], decision=decision, reviewers=reviewers)
    if finding == "ok":
        if data.get("verdict") == "approve":
            flow["approved"].append(by)
        return
    audit.findings.append(ReviewFinding(flow["id"], flow["agent"], seq, by, finding, detail))


def _close(flow: dict[str, Any], audit: ReviewAudit) -> None:
    rule: Rule | None = flow.get("rule")
    if not flow or rule is None or flow.get("final") != "executed":
        return
    valid = {by for by in flow["approved"] if by != flow.get("requested_by")}
    if len(valid) < rule.count:
        audit.findings.append(
            ReviewFinding(
                flow["id"],
                flow["agent"],
                -1,
                ",".join(sorted(valid)) or "-",
                "short",
                f"executed on {len(valid)} valid approval(s); its action needs {rule.count}",
            )
        )
