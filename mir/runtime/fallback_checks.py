"""Load-time check of the contract's own decisions: fallback rules and the default.

A rule's decision goes through the integrity check when it fires, which is too late for
a typo: ``fallback.default.params.reasn`` used to load fine and end the first flow that
needed the fallback as ``aborted``. Here every rule is checked against the decision
schema and its action's limits when the agent loads. Values written as ``$input.x`` /
``$context.y`` are only known per decision, so only their field names are checked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from mir.contracts import AgentContract, Rule
from mir.errors import ConfigError, did_you_mean
from mir.runtime.integrity import Circumstances, IntegrityCheck
from mir.runtime.records import ReasonCode
from mir.runtime.rules import rule_decision

# Problems a rule can cause by itself; who calls and when is decided per flow.
_PER_FLOW = {
    ReasonCode.ROLE_NOT_ALLOWED,
    ReasonCode.TTL_EXPIRED,
    ReasonCode.BUDGET_EXCEEDED,
    ReasonCode.AGENT_SUSPENDED,
}

Loc = tuple[str | int, ...]


def _rules(contract: AgentContract) -> list[tuple[Loc, Rule]]:
    named: list[tuple[Loc, Rule]] = [
        (("fallback", "rules", i), rule) for i, rule in enumerate(contract.fallback.rules)
    ]
    if contract.fallback.default is not None:
        named.append((("fallback", "default"), contract.fallback.default))
    return named


def rule_problems(contract: AgentContract, integrity: IntegrityCheck) -> list[tuple[Loc, str]]:
    """(field path, message) of every problem of every fallback rule (empty when sound)."""
    spec = contract.decision
    moment = datetime.now(UTC)
    fields = sorted(integrity.schema_fields)
    problems: dict[tuple[Loc, str], None] = {}
    for loc, rule in _rules(contract):
        dynamic = {k for k, v in rule.params.items() if isinstance(v, str) and v.startswith("$")}
        # a caller the action allows: which role calls is decided per flow, and a refused
        # role would hide the limit checks behind it
        roles = contract.actions[rule.action].roles
        when = Circumstances(role=roles[0] if roles else "*", created_at=moment, now=moment)
        for problem in integrity.check_decision(rule_decision(rule, spec, {}), when).problems:
            field = problem.field
            if problem.code in _PER_FLOW:
                continue
            if problem.code is ReasonCode.EXTRA_FIELD and field:
                close = did_you_mean(field, fields)
                hint = f" (did you mean `{close}`?)" if close else ""
                problems[(*loc, "params", field), f"not a field of the decision{hint}"] = None
            elif problem.code is ReasonCode.MISSING_FIELD:
                problems[(*loc, "params"), problem.message] = None
            elif field not in dynamic:  # a $reference's value is only known per flow
                at = (*loc, "params", field) if field in rule.params else (*loc, "params")
                message = problem.message.removeprefix(f"{field}: ")
                problems[at, message] = None
    return list(problems)


def check_fallback_rules(
    contract: AgentContract,
    integrity: IntegrityCheck,
    where: str,
    line_of: Callable[[Loc], int | None],
    review: Sequence[tuple[Loc, str]] = (),
) -> None:
    """Refuse to load an agent whose own rules could not pass the integrity check, or
    whose review conditions name what the schemas do not have (``review``: the problems
    ``review_checks`` found), listing every problem of both at once."""
    fallback = rule_problems(contract, integrity)
    if not fallback and not review:
        return
    located = [(line_of(loc), loc, message) for loc, message in fallback]
    # the review section's problems in file order (the fallback's keep theirs: a bad
    # key before the missing key it leads to)
    located += sorted(((line_of(loc), loc, m) for loc, m in review), key=lambda p: p[0] or 0)
    lines = []
    for line, loc, message in located:
        place = f"{where}:{line}" if line else where
        lines.append(f"{place}: {'.'.join(map(str, loc))}: {message}")
    hints = []
    if fallback:
        hints.append("a fallback decision must fit the decision schema and its action's limits")
    if any(loc[0] == "review" for loc, _ in review):
        hints.append(
            "a review condition names 'action' or a field of input., context. or decision."
        )
    if any(loc[0] == "actions" for loc, _ in review):
        hints.append("an approvals role must be held by a reviewer (`mir reviewers add --role`)")
    raise ConfigError("\n".join(lines), hint="; ".join(hints))
