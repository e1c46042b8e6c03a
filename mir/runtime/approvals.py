"""Who may review a pending flow, and whether an approval is the one that executes it.

The rules, for an action whose contract says ``approvals: {roles, count, signed}``:

- the reviewer must be declared in reviewers.toml (a project with reviewers.toml and no
  rule on the action still needs a declared name), hold one of ``roles`` (any declared
  reviewer when it names none), and never be the flow's requester;
- a key, when given, must be the reviewer's declared key; with ``signed`` one is needed;
- an approval counts toward the decision it approves (the proposal with the reviewer's
  correction applied): ``count`` distinct qualified reviewers must approve the same one,
  and the same reviewer twice counts once. Earlier approvals are judged again against
  the reviewers declared now (a reviewer removed since, or a signature that no longer
  verifies, does not count).

A refusal is a ``UsageError`` (exit 2), raised before anything is written or claimed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mir.contracts import AgentContract, Approvals
from mir.errors import UsageError
from mir.reviewers import Reviewer, SigningKey, decision_digest, judge_review, reviewer_named


@dataclass(frozen=True)
class Rule:
    """The approvals rule a flow's review is held to (one or two actions' rules merged:
    a correction to another action must satisfy that action's rule too)."""

    roles: tuple[tuple[str, ...], ...]  # each non-empty tuple: one of these roles
    count: int
    signed: bool
    declared: bool  # the project has reviewers.toml

    @property
    def strict(self) -> bool:
        return bool(self.roles) or self.count > 1 or self.signed

    def describe(self) -> str:
        noun = "approval" if self.count == 1 else "approvals"
        roles = " and ".join("/".join(r) for r in self.roles)
        extra = [x for x in (roles, "signed" if self.signed else "") if x]
        return f"{self.count} {noun}" + (f" ({', '.join(extra)})" if extra else "")


def rule_for(contract: AgentContract, actions: Sequence[Any], declared: bool) -> Rule | None:
    return rule_from(required_approvals(contract), actions, declared)


def required_approvals(contract: AgentContract) -> dict[str, Approvals]:
    """Each action's approvals rule (actions without one left out): what a flow decided
    now will be held to, recorded in its pending event."""
    return {name: spec.approvals for name, spec in contract.actions.items() if spec.approvals}


def approvals_record(contract: AgentContract) -> dict[str, dict[str, Any]]:
    """``required_approvals`` as the JSON a pending event keeps."""
    return {
        name: rule.model_dump(mode="json") for name, rule in required_approvals(contract).items()
    }


def recorded_approvals(data: Mapping[str, Any]) -> dict[str, Approvals] | None:
    """The rules a pending event recorded (None for an event from before they were
    recorded, or one whose record does not parse: then the contract of today decides)."""
    found = data.get("approvals")
    if not isinstance(found, dict):
        return None
    try:
        return {str(name): Approvals.model_validate(rule) for name, rule in found.items()}
    except ValueError:
        return None


def rule_from(
    required: Mapping[str, Approvals], actions: Sequence[Any], declared: bool
) -> Rule | None:
    rules = [required[a] for a in actions if isinstance(a, str) and a in required]
    if not rules:
        return None
    return Rule(
        roles=tuple(tuple(r.roles) for r in rules if r.roles),
        count=max(r.count for r in rules),
        signed=any(r.signed for r in rules),
        declared=declared,
    )


def check_reviewer(
    *,
    flow_id: str,
    by: str,
    verdict: str,
    rule: Rule | None,
    reviewers: dict[str, Reviewer],
    declared: bool,
    key: SigningKey | None,
    requested_by: str | None,
    root: Any,
) -> Reviewer | None:
    """The declared reviewer ``by`` (None when the project declares none), or a refusal."""
    if rule is not None and not declared:
        raise UsageError(
            f"flow {flow_id}'s action needs {rule.describe()} by declared reviewers, and the "
            "project has no reviewers.toml",
            hint="declare reviewers with `mir reviewers add`",
        )
    if not declared:
        return None
    reviewer = reviewer_named(reviewers, by, root)
    if key is not None and key.public_key != reviewer.public_key:
        raise UsageError(
            f"the key in {key.source} is not {by}'s declared key ({reviewer.fingerprint}): "
            "refused, nothing written",
            hint=f"sign with {by}'s own key, or name its reviewer with --by",
        )
    if rule is None:
        return reviewer
    if rule.signed and key is None:
        raise UsageError(
            f"flow {flow_id}'s action requires signed reviews: an unsigned {verdict} is "
            "refused, nothing executed",
            hint="pass --key FILE (or set MIR_REVIEWER_KEY_FILE) with your reviewer key",
        )
    for roles in rule.roles:
        if not set(roles) & set(reviewer.roles):
            raise UsageError(
                f"{by} may not review flow {flow_id}: it needs a reviewer with role "
                f"{' or '.join(roles)} ({by} has {', '.join(reviewer.roles) or 'none'})",
                hint="ask a reviewer who holds that role",
            )
    if verdict == "approve" and requested_by is not None and by == requested_by:
        raise UsageError(
            f"{by} requested flow {flow_id} and cannot approve it",
            hint="another reviewer must approve it",
        )
    return reviewer


def effective(decision: Mapping[str, Any], correction: Mapping[str, Any] | None) -> dict[str, Any]:
    """The decision a review approves: the proposal with the correction applied."""
    return {**dict(decision), **dict(correction or {})}


def counted_approvals(
    reviews: Sequence[Mapping[str, Any]],
    *,
    flow_id: str,
    proposal: Mapping[str, Any],
    target: Mapping[str, Any],
    rule: Rule,
    reviewers: dict[str, Reviewer],
    requested_by: str | None,
) -> list[str]:
    """The distinct reviewers whose earlier approvals count toward ``target``."""
    want = decision_digest(target)
    found: list[str] = []
    for data in reviews:
        by = data.get("by")
        if data.get("verdict") != "approve" or not isinstance(by, str) or by in found:
            continue
        correction = data.get("correction")
        if not isinstance(correction, dict | type(None)):
            continue
        if decision_digest(effective(proposal, correction)) != want or by == requested_by:
            continue
        reviewer = reviewers.get(by)
        if reviewer is None or any(not set(r) & set(reviewer.roles) for r in rule.roles):
            continue
        if rule.signed:
            finding, _ = judge_review(
                dict(data), flow_id=flow_id, decision=proposal, reviewers=reviewers
            )
            if finding != "ok":
                continue
        found.append(by)
    return found
