"""What reviewers taught: reviewed flows as eval cases and as fine-tuning lines.

A case (tag ``from-review``, plus the verdict) holds the flow's input and the world its
snapshot recorded, and expects the human's verdict:

* approved: the proposal's action, and ``equals`` on each parameter the contract
  constrains for it (limits, bindings);
* corrected: the corrected decision's action, ``equals`` on those parameters and on
  every field the reviewer corrected;
* rejected: an action other than the one proposed (``one_of`` the contract's other
  actions; a contract with one action: any status but ``executed``).

A flow whose input and world a case of the suite already holds is not exported again
(nor two flows with the same: the latest review wins). A flow whose stored values hold
``[REDACTED]`` is left out (the case would not be what the model saw). The fine-tuning
file has one chat per approved or corrected flow: the first model call's rendered prompt
(as the traces keep it: redacted) as the user message and the settled decision, as JSON,
as the assistant's.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mir.contracts import AgentContract, EvalSuite, load_eval_suite
from mir.reviews.reviewed import ReviewedFlow
from mir.storage import write_atomic

TAG = "from-review"
STATUSES_BUT_EXECUTED = ["rejected", "pending_review", "fallback", "stale", "aborted"]


@dataclass
class SuiteExport:
    agent: str
    suite: Path
    added: list[str] = field(default_factory=list)  # case ids
    duplicates: list[str] = field(default_factory=list)  # flow ids already in the suite
    left_out: list[str] = field(default_factory=list)  # why, one line per flow


def case_key(input: Any, context: Any) -> str:
    """What makes two cases the same: their input and world, canonical."""
    return json.dumps([input, context or {}], sort_keys=True, default=str)


def review_case(flow: ReviewedFlow, contract: AgentContract, case_id: str) -> dict[str, Any]:
    spec = contract.decision
    decided = flow.decision if flow.verdict != "rejected" else flow.proposal
    action = decided.get(spec.action_field)
    case: dict[str, Any] = {"id": case_id, "tags": [TAG, flow.verdict], "input": flow.input}
    if flow.context is not None:
        case["context"] = flow.context
    if flow.verdict == "rejected":
        others = [name for name in contract.actions if name != action]
        check = (
            {"type": "one_of", "path": spec.action_field, "values": others}
            if others
            else {"type": "status", "value": STATUSES_BUT_EXECUTED}
        )
        case["assert"] = [check]
        return case
    case["expect"] = {spec.action_field: action}
    named = _constrained(contract, action) | set(flow.correction or {})
    checks = [
        {"type": "equals", "path": name, "value": decided[name]}
        for name in decided
        if name in named and name not in (spec.action_field, spec.confidence_field)
        and "." not in name
    ]  # fmt: skip
    if checks:
        case["assert"] = checks
    return case


def _constrained(contract: AgentContract, action: Any) -> set[str]:
    spec = contract.actions.get(action) if isinstance(action, str) else None
    return set(spec.limits) | set(spec.bindings) if spec is not None else set()


def new_cases(
    flows: Sequence[ReviewedFlow],
    contract: AgentContract,
    suite: EvalSuite | None,
    export: SuiteExport,
) -> list[dict[str, Any]]:
    """The cases to append for ``flows`` (oldest first), and what was left out why."""
    existing = suite.cases if suite is not None else []
    seen = {case_key(c.input, c.context) for c in existing}
    ids = {c.id for c in existing}
    chosen: dict[str, ReviewedFlow] = {}
    for flow in flows:  # the latest review of one input and world wins
        if flow.redacted:
            export.left_out.append(f"{flow.flow_id}: holds [REDACTED] values")
            continue
        chosen[case_key(flow.input, flow.context)] = flow
    cases = []
    for key, flow in chosen.items():
        if key in seen:
            export.duplicates.append(flow.flow_id)
            continue
        case_id = _unique(f"review-{flow.flow_id[:12]}", ids)
        ids.add(case_id)
        cases.append(review_case(flow, contract, case_id))
        export.added.append(case_id)
    return cases


def _unique(base: str, ids: set[str]) -> str:
    if base not in ids:
        return base
    n = 2
    while f"{base}-{n}" in ids:
        n += 1
    return f"{base}-{n}"


def sft_lines(flows: Iterable[ReviewedFlow]) -> tuple[list[str], list[str]]:
    """Chat-format JSONL lines (approved and corrected flows), and what was left out."""
    lines, left_out, seen = [], [], set()
    for flow in flows:
        if flow.verdict == "rejected":
            continue  # no decision to learn from: the reviewer only said what it was not
        if flow.prompt is None:
            left_out.append(f"{flow.flow_id}: no whole rendered prompt in its trace")
            continue
        answer = json.dumps(flow.decision, ensure_ascii=False, sort_keys=False)
        line = json.dumps(
            {
                "messages": [
                    {"role": "user", "content": flow.prompt},
                    {"role": "assistant", "content": answer},
                ]
            },
            ensure_ascii=False,
        )
        if line not in seen:
            seen.add(line)
            lines.append(line)
    return lines, left_out


def write_lines(path: Path, lines: Sequence[str]) -> None:
    """Replace ``path`` with ``lines`` (written beside it, then renamed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # owner-only, like the trace segments these lines are read from
    write_atomic(path, "".join(line + "\n" for line in lines), mode=0o600)


def read_suite(path: Path) -> EvalSuite | None:
    return load_eval_suite(path) if path.exists() else None
