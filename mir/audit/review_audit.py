"""``mir traces verify``'s second half: every stored review judged against the declared
reviewers, beside the hash chain's check of the store.

The chain proves the store was not edited by a process that does not rewrite the chain;
a signature proves a review was made with the reviewer's key even when someone rewrote
the store and its chain. Each review event is judged (``mir.reviewers.judge_review``):
``unsigned`` (only where the action requires signatures), ``unknown_reviewer``,
``wrong_key``, ``forged``; and a flow that executed on fewer valid approvals than its
action requires is ``short``.

A flow is held to the approvals rules its pending event recorded when it was decided
(``approvals``), so a rule added to the contract later does not flag older flows; a flow
recorded before decisions kept them is held to the contract as it is now (counted in
``by_today``). The recorded rules are as trustworthy as the store: the hash chain, not a
signature, shows they were not lowered since.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Container
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mir.audit.review_cache import ReviewCache
from mir.contracts import Approvals, RecordedContracts
from mir.project import Project
from mir.reviewers import (
    SignatureCheck,
    canonical_json,
    has_roster,
    judge_review,
    load_reviewers,
    verify_many,
    worth_workers,
)
from mir.runtime import Rule, effective, recorded_approvals, rule_for, rule_from


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
    by_today: int = 0  # flows decided before the approvals rule was recorded in the trace
    cache_problem: str | None = None  # why reviews judged ok before were not remembered
    findings: list[ReviewFinding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    @property
    def notes(self) -> list[str]:
        notes = [self.cache_problem] if self.cache_problem else []
        if self.by_today:
            notes.append(
                f"{self.by_today} flow(s) were decided before flows recorded their approvals "
                "rules: held to the contract as it is now"
            )
        return notes


# One JSON parse per document: each json_extract call parses its input again.
_QUERY = """
WITH ev AS ({events}),
pending AS (SELECT flow_id, arg_max(data, seq) AS data FROM ev
            WHERE status = 'pending_review' GROUP BY flow_id),
snap AS (SELECT flow_id,
                any_value(json_extract_string(data, ['$.contract', '$.requested_by'])) AS j
         FROM ev WHERE step = 'snapshot' GROUP BY flow_id),
final AS (SELECT flow_id, arg_max(status, seq) AS status FROM ev
          WHERE step = 'final' GROUP BY flow_id),
review AS (SELECT flow_id, agent, seq, data,
                  json_extract_string(data, ['$.by', '$.verdict', '$.signature']) AS j
           FROM ev WHERE step = 'review')
SELECT f.flow_id, coalesce(r.agent, '?'), r.seq, r.data, p.data, s.j[1], s.j[2],
       fin.status, r.j[1], r.j[2], coalesce(r.j[3], '') <> '',
       p.data IS NOT NULL AND position('"approvals":' IN p.data) = 0
FROM (SELECT flow_id FROM pending UNION SELECT flow_id FROM review) f
LEFT JOIN review r USING (flow_id)
LEFT JOIN pending p USING (flow_id)
LEFT JOIN snap s USING (flow_id)
LEFT JOIN final fin USING (flow_id)
WHERE r.flow_id IS NOT NULL OR fin.status = 'executed'
ORDER BY f.flow_id, r.seq
"""
WHERE = "step IN ('snapshot', 'review', 'final') OR status = 'pending_review'"


def audit_reviews(project: Project, store: Any, *, full: bool = False) -> ReviewAudit:
    """Judge every review event in ``store`` (a ``TraceStore``). A review judged ``ok``
    before, under the same reviewers.toml and contract, and unchanged since, is not
    verified again unless ``full`` (one Ed25519 verification costs ~0.1-0.2 ms here): the
    cache's tags are keyed by the verifying user's secret (``review_cache``)."""
    audit = ReviewAudit()
    reviewers = load_reviewers(project.root)
    declared = has_roster(project.root)
    roster = _file_hash(project.root / "reviewers.toml")
    contracts = RecordedContracts(project.root)
    cache = ReviewCache(project.state_dir, full=full, project_root=project.root)
    audit.cache_problem = cache.problem
    with store.analysis() as (con, events, _):
        rows = con.execute(_QUERY.format(events=events(WHERE))).fetchall()
    tags, parsed, verified = _prepare(rows, roster, contracts, cache, reviewers)
    flow: dict[str, Any] = {}
    memo: dict[str, Any] = {}  # recorded approvals rules, by their text
    for i, row in enumerate(rows):
        flow_id, agent, seq, review, pending, ref, requested_by, final = row[:8]
        by, verdict, signed, unrecorded = row[8:]
        if flow.get("id") != flow_id:
            _close(flow, audit, cache)
            contract, contract_hash = contracts.get(ref), contracts.digest(ref)
            flow = {
                "id": flow_id, "agent": agent, "approved": [], "rule": None, "final": final,
                "requested_by": requested_by, "contract": contract, "pending": pending,
                "tags": [], "base": f"{roster}:{contract_hash}:{flow_id}:{requested_by}",
                "memo": memo, "rules": {},
            }  # fmt: skip
            audit.by_today += bool(unrecorded)
        if review is None:
            continue
        audit.reviews += 1
        tag = tags[i]
        flow["tags"].append(tag)
        if tag in cache:  # judged ok before, unchanged since
            audit.signed += bool(signed)
            if verdict == "approve":
                flow["approved"].append(by)
            continue
        data = parsed.get(i) or json.loads(review)
        ok = _judge(flow, seq, data, audit, reviewers, declared, verified)
        if ok and str(data.get("by")) in reviewers:
            cache.add(tag)
    _close(flow, audit, cache)
    cache.write()
    return audit


def _prepare(
    rows: list[Any],
    roster: str,
    contracts: RecordedContracts,
    cache: ReviewCache,
    reviewers: dict[str, Any],
) -> tuple[list[str], dict[int, Any], Container[SignatureCheck]]:
    """Each review row's cache tag; the reviews not cached, parsed; and, when there are
    enough of them to be worth the workers, the signatures verified over every core."""
    tags = [""] * len(rows)
    parsed: dict[int, Any] = {}
    checks: list[SignatureCheck] = []
    for i, (flow_id, _, _, review, pending, ref, requested_by, *_, signed, _) in enumerate(rows):
        if review is None:
            continue
        contract_hash = contracts.digest(ref)
        base = f"{roster}:{contract_hash}:{flow_id}:{requested_by}"
        tags[i] = tag = cache.tag(f"{base}\0{pending}\0{review}")
        if tag in cache or not signed:
            continue
        parsed[i] = json.loads(review)
    if not worth_workers(len(parsed)):
        return tags, parsed, ()
    for data in parsed.values():
        statement = data.get("statement") if isinstance(data, dict) else None
        if isinstance(statement, dict) and isinstance(data.get("signature"), str):
            reviewer = reviewers.get(statement.get("reviewer"))
            if reviewer is not None:
                message = canonical_json(statement)
                checks.append((reviewer.public_key, message, data["signature"]))
    return tags, parsed, {c for c, ok in zip(checks, verify_many(checks), strict=True) if ok}


def _file_hash(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:32]
    except OSError:
        return "-"


def _parsed(flow: dict[str, Any]) -> dict[str, Any]:
    """The flow's pending event data, parsed once."""
    if "parsed" not in flow:
        parsed = json.loads(flow["pending"]) if flow.get("pending") else {}
        flow["parsed"] = parsed if isinstance(parsed, dict) else {}
    return flow["parsed"]


def _decision(flow: dict[str, Any]) -> dict[str, Any] | None:
    decision = _parsed(flow).get("decision")
    return decision if isinstance(decision, dict) else None


def _recorded(flow: dict[str, Any]) -> dict[str, Approvals] | None:
    """The approvals rules the flow's pending event recorded when it was decided (checked
    once per distinct record: flows of one contract version share it)."""
    found = _parsed(flow).get("approvals")
    if not isinstance(found, dict):
        return None
    text, memo = json.dumps(found, sort_keys=True), flow["memo"]
    if text not in memo:
        memo[text] = recorded_approvals({"approvals": found})
    return memo[text]


def _rule(flow: dict[str, Any], correction: Any, declared: bool) -> Rule | None:
    """The rule the flow is held to: the one recorded when it was decided, or for a flow
    recorded before decisions kept it, the contract's rule of today."""
    contract, decision = flow.get("contract"), _decision(flow)
    if contract is None or decision is None:
        return None
    field_name = contract.decision.action_field
    target = effective(decision, correction if isinstance(correction, dict) else None)
    actions = (decision.get(field_name), target.get(field_name))
    key = (actions, declared) if all(isinstance(a, str | None) for a in actions) else None
    if key is not None and key in flow["rules"]:
        return flow["rules"][key]
    recorded = _recorded(flow)
    if recorded is not None:
        rule = rule_from(recorded, actions, declared)
    else:
        rule = rule_for(contract, actions, declared)
    if key is not None:
        flow["rules"][key] = rule
    return rule


def _judge(
    flow: dict[str, Any],
    seq: int,
    data: dict[str, Any],
    audit: ReviewAudit,
    reviewers: dict[str, Any],
    declared: bool,
    verified: Container[SignatureCheck] = (),
) -> bool:
    """Judge one review; True when it is ok (and may be skipped next time)."""
    if data.get("verdict") not in ("approve", "reject") or "by" not in data:
        return True  # a replay of an interrupted flow is not a review
    rule = _rule(flow, data.get("correction"), declared)
    if rule is not None:
        flow["rule"] = rule
    # A statement without a signature is an unsigned review: judged only where the action
    # requires signatures (a project without reviewers.toml approves by name, as before).
    signed = bool(data.get("signature"))
    audit.signed += signed
    by = str(data.get("by"))
    if not signed and not (rule is not None and rule.signed):
        if data.get("verdict") == "approve" and rule is not None and by in reviewers:
            flow["approved"].append(by)
        return True
    finding, detail = judge_review(
        data, flow_id=flow["id"], decision=_decision(flow), reviewers=reviewers, verified=verified
    )
    if finding == "ok":
        if data.get("verdict") == "approve":
            flow["approved"].append(by)
        return True
    audit.findings.append(ReviewFinding(flow["id"], flow["agent"], seq, by, finding, detail))
    return False


def _close(flow: dict[str, Any], audit: ReviewAudit, cache: ReviewCache) -> None:
    """The flow-level check: executed on enough valid approvals (cached like reviews)."""
    if not flow or flow.get("final") != "executed":
        return
    tag = cache.tag(f"F{flow['base']}\0{flow['pending']}\0{flow['tags']}")
    if tag in cache:
        return
    rule: Rule | None = flow.get("rule") or _rule(flow, None, True)
    if rule is None:
        cache.add(tag)
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
    else:
        cache.add(tag)
