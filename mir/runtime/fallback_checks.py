"""Load-time check of the contract's own decisions: fallback rules and the default.

A rule's decision goes through the integrity check when it fires, which is too late for
a typo: ``fallback.default.params.reasn`` used to load fine and end the first flow that
needed the fallback as ``aborted``. Here every rule is checked against the decision
schema and its action's limits when the agent loads. Values written as ``$input.x`` /
``$context.y`` are only known per decision, so only their field names are checked.
"""

from __future__ import annotations

from collections.abc import Callable
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
) -> None:
    """Refuse to load an agent whose own rules could not pass the integrity check."""
    problems = rule_problems(contract, integrity)
    if not problems:
        return
    lines = []
    for loc, message in problems:
        line = line_of(loc)
        place = f"{where}:{line}" if line else where
        lines.append(f"{place}: {'.'.join(map(str, loc))}: {message}")
    raise ConfigError(
        "\n".join(lines),
        hint="a fallback decision must fit the decision schema and its action's limits",
    )
