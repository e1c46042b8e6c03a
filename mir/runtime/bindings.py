"""Parameter bindings: a decision's parameters tied to the input and the world.

A schema says what a parameter looks like; a binding says which value it may have for
THIS input: ``order_id: $input.order_id`` (a refund goes to the ticket's order, not to
another customer's) and ``amount: {maximum: $context.order.refundable}`` (never more than
the world allows right now). Whatever the model was talked into, a proposal outside its
bindings fails the integrity check with ``binding_violated``. Pure: the input and context
come in as mappings.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from mir.contracts import Binding, BoundLimit
from mir.runtime.records import Problem, ReasonCode

_MISSING = object()


def resolve(reference: str, input: Mapping[str, Any] | None, context: Mapping[str, Any] | None):
    """``$input.a.b`` -> value, or ``_MISSING`` (also when the flow has no input/context)."""
    root, *path = reference[1:].split(".")
    node: Any = {"input": input, "context": context}.get(root)
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


def binding_problems(
    decision: Mapping[str, Any],
    bindings: Mapping[str, Binding],
    input: Mapping[str, Any] | None,
    context: Mapping[str, Any] | None,
) -> list[Problem]:
    problems: list[Problem] = []
    for field, binding in bindings.items():
        value = decision.get(field, _MISSING)
        if isinstance(binding, BoundLimit):
            message = _bound_message(value, binding, input, context)
        else:
            message = _equal_message(value, binding, input, context)
        if message is not None:
            text = f"{field}: {message}"
            problems.append(Problem(code=ReasonCode.BINDING_VIOLATED, field=field, message=text))
    return problems


def _equal_message(value: Any, reference: str, input: Any, context: Any) -> str | None:
    expected = resolve(reference, input, context)
    if expected is _MISSING:
        return f"must equal {reference}, which this decision does not have"
    if value is _MISSING:
        return f"missing; must equal {reference} ({_show(expected)})"
    if not _same(value, expected):
        return f"{_show(value)} must equal {reference} ({_show(expected)})"
    return None


def _bound_message(value: Any, limit: BoundLimit, input: Any, context: Any) -> str | None:
    if value is _MISSING:
        return "missing; it is bounded by the input or the world"
    if not _number(value):
        return f"expected a number, got {_show(value)}"
    for reference, below in ((limit.minimum, True), (limit.maximum, False)):
        if reference is None:
            continue
        bound = resolve(reference, input, context)
        if not _number(bound):
            # No bound we can read means nothing is allowed: refusing is the safe side.
            return f"bound {reference} is {_show(bound)}, not a number: nothing is allowed"
        if below and value < bound:
            return f"{value} is below {reference} ({bound})"
        if not below and value > bound:
            return f"{value} is above {reference} ({bound})"
    return None


def _number(value: Any) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return not isinstance(value, float) or math.isfinite(value)


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON values: 149 and 149.0 are the same amount, "1" and 1 are not."""
    if _number(a) and _number(b):
        return a == b
    return type(a) is type(b) and a == b


def _show(value: Any) -> str:
    if value is _MISSING:
        return "missing"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
