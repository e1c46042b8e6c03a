"""The rule-based fallback: deterministic decisions declared in the contract.

Used when the model's output stays invalid past the retry budget, when every route
failed, and while the agent is suspended. Rules are data (``Fallback`` in the contract):
conditions over ``input.x`` / ``context.y`` and params that may reference them with
``$input.x``. A rule's decision still goes through the integrity check.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

from mir.contracts import DecisionSpec, Fallback, Rule, RuleCondition

_MISSING = object()

_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "in": lambda a, b: a in b,
    "not in": lambda a, b: a not in b,
}


def lookup(path: str, scope: Mapping[str, Any]) -> Any:
    """``input.customer.tier`` -> value, or ``_MISSING``."""
    node: Any = scope
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


def holds(condition: RuleCondition, scope: Mapping[str, Any]) -> bool:
    value = lookup(condition.field, scope)
    if value is _MISSING:
        return False
    try:
        return bool(_OPS[condition.op](value, condition.value))
    except TypeError:  # e.g. "abc" < 5: a rule that cannot apply does not match
        return False


def _resolve(value: Any, scope: Mapping[str, Any]) -> Any:
    if isinstance(value, str) and value.startswith("$"):
        found = lookup(value[1:], scope)
        return None if found is _MISSING else found
    return value


def matching_rule(fallback: Fallback, scope: Mapping[str, Any]) -> tuple[int | str, Rule] | None:
    """(index or 'default', rule) of the first rule whose conditions all hold."""
    for index, rule in enumerate(fallback.rules):
        if all(holds(c, scope) for c in rule.when):
            return index, rule
    return ("default", fallback.default) if fallback.default else None


def rule_decision(rule: Rule, spec: DecisionSpec, scope: Mapping[str, Any]) -> dict[str, Any]:
    decision = {k: _resolve(v, scope) for k, v in rule.params.items()}
    decision[spec.action_field] = rule.action
    decision[spec.confidence_field] = rule.confidence
    return decision
