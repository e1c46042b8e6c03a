"""Evaluating a case's assertions against what one flow did.

The deterministic tier reads the decision record; the schema and trajectory tiers read
the flow's own trace events (what the runtime recorded), never re-validate or
re-derive: an eval must judge the pipeline that ran, not a second copy of it. Judge
assertions are graded elsewhere (``judging``); ``evaluate`` skips them.

Evaluation is total: a flow with no decision, a value of the wrong type, a malformed
pattern each give a failed ``AssertionResult`` with a one-line message, never an
exception (a model's output may be anything).

The schema and trajectory rules, and how they read the events: ``flow_checks``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, get_args

from pydantic import ValidationError

from mir.contracts import AgentContract, Assertion, EvalCase
from mir.evals.decision_paths import is_number, json_equal, json_type, read_path
from mir.evals.domain import AssertionResult
from mir.evals.flow_checks import TRACE_CHECKS, FlowView, Outcome, listing, show
from mir.evals.patterns import compile_pattern

if TYPE_CHECKING:
    from mir.runtime import DecisionRecord
    from mir.traces import TraceEvent


class DecisionParts(Protocol):
    """What evals read of a loaded agent (``mir.runtime``'s ``AgentParts`` has it)."""

    @property
    def contract(self) -> AgentContract: ...

    @property
    def decision_schema(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Observation:
    """One flow as an eval sees it: its record, its own trace events, the agent, the role."""

    record: DecisionRecord
    events: list[TraceEvent]
    parts: DecisionParts
    role: str = "agent"


def expand(case: EvalCase) -> list[Assertion]:
    """The case's assertions in order: the ``expect`` shorthand first, then ``assert:``."""
    out: list[Assertion] = []
    for key, value in case.expect.items():
        if key == "status":
            out.append(_build({"type": "status", "value": value}))
        else:
            out.append(_build({"type": "equals", "path": key, "value": value}))
    return [*out, *case.assertions]


# 'equals' -> Equals, ...: the assertion classes of the suite format, by type name
ASSERTION_KINDS: dict[str, Any] = {
    get_args(kind.model_fields["type"].annotation)[0]: kind
    for kind in get_args(get_args(Assertion)[0])
}


def _build(data: dict[str, Any]) -> Any:
    # A shorthand the format cannot hold (an unknown status, an empty key) is reported by
    # check_suite before the run; here it still becomes an assertion, which then fails.
    kind = ASSERTION_KINDS[data["type"]]
    try:
        return kind.model_validate(data)
    except ValidationError:
        return kind.model_construct(**data)


def evaluate(case: EvalCase, obs: Observation) -> list[AssertionResult]:
    """Every non-judge assertion of the case, in ``expand`` order."""
    view = FlowView.of(obs.record, obs.events, obs.role)
    results = []
    for assertion in expand(case):
        if assertion.tier == "judge":
            continue
        results.append(_evaluate_one(assertion, view))
    return results


def _evaluate_one(assertion: Any, view: FlowView) -> AssertionResult:
    base = {
        "type": assertion.type,
        "tier": assertion.tier,
        "path": getattr(assertion, "path", None),
        "gating": bool(getattr(assertion, "gate", True)),
    }
    try:
        passed, expected, actual, message = _CHECKS[assertion.type](assertion, view)
    except Exception as exc:  # total: a hostile value must fail one assertion, not the run
        passed, expected, actual, message = False, None, None, _could_not(exc)
    return AssertionResult(
        **base,
        passed=passed,
        expected=expected,
        actual=actual,
        message="" if passed else message,
    )


def _could_not(exc: Exception) -> str:
    try:
        return f"could not evaluate: {type(exc).__name__}: {str(exc)[:200]}"
    except Exception:
        return f"could not evaluate: {type(exc).__name__}"


# --------------------------------------------------------------------- deterministic
def _on_path(check: Callable[[Any, Any], Outcome]) -> Callable[[Any, FlowView], Outcome]:
    def run(assertion: Any, view: FlowView) -> Outcome:
        expected = _expected(assertion)
        if view.record.decision is None:
            return False, expected, None, view.no_decision()
        found, actual = read_path(view.record.decision, assertion.path)
        if not found:
            return False, expected, None, f"the decision has no field {assertion.path!r}"
        return check(assertion, actual)

    return run


def _expected(assertion: Any) -> Any:
    if assertion.type == "regex":
        return assertion.pattern
    if assertion.type == "one_of":
        return assertion.values
    if assertion.type == "range":
        return {"min": assertion.min, "max": assertion.max}
    return assertion.value


def _equals(a: Any, actual: Any) -> Outcome:
    ok = json_equal(actual, a.value)
    return ok, a.value, actual, f"{a.path} is {show(actual)}, expected {show(a.value)}"


def _one_of(a: Any, actual: Any) -> Outcome:
    ok = any(json_equal(actual, v) for v in a.values)
    return ok, a.values, actual, f"{a.path} is {show(actual)}, expected one of {show(a.values)}"


def _contains(a: Any, actual: Any) -> Outcome:
    if isinstance(actual, str):
        if not isinstance(a.value, str):
            return False, a.value, actual, f"{a.path} is text; contains needs a text value"
        ok = a.value in actual
    elif isinstance(actual, list):
        ok = any(json_equal(item, a.value) for item in actual)
    elif isinstance(actual, Mapping):
        ok = isinstance(a.value, str) and a.value in actual
    else:
        kind = json_type(actual)
        return False, a.value, actual, f"{a.path} is a {kind}; contains needs text, list or object"
    return ok, a.value, actual, f"{a.path} ({show(actual)}) does not contain {show(a.value)}"


def _regex(a: Any, actual: Any) -> Outcome:
    if not isinstance(actual, str):
        return False, a.pattern, actual, f"{a.path} is a {json_type(actual)}, not text"
    compiled = compile_pattern(a.pattern)
    if isinstance(compiled, str):
        return False, a.pattern, actual, f"invalid regex {a.pattern!r}: {compiled}"
    ok = compiled.search(actual) is not None
    return ok, a.pattern, actual, f"{a.path} ({show(actual)}) does not match /{a.pattern}/"


def _range(a: Any, actual: Any) -> Outcome:
    expected = {"min": a.min, "max": a.max}
    if not is_number(actual):
        return False, expected, actual, f"{a.path} is {show(actual)}, not a number"
    ok = (a.min is None or actual >= a.min) and (a.max is None or actual <= a.max)
    if a.min is not None and a.max is not None:
        where = f"outside [{a.min:g}, {a.max:g}]"
    elif a.min is not None:
        where = f"below the minimum {a.min:g}"
    else:
        where = f"above the maximum {a.max:g}"
    return ok, expected, actual, f"{a.path} is {actual}, {where}"


def _status(a: Any, view: FlowView) -> Outcome:
    wanted = a.value if isinstance(a.value, list) else [a.value]
    actual = view.record.status
    ok = actual in wanted
    shown = " or ".join(map(str, wanted))
    why = f" ({', '.join(view.record.reasons)})" if view.record.reasons else ""
    return ok, a.value, actual, f"status is {actual}{why}, expected {shown}"


def _reason(a: Any, view: FlowView) -> Outcome:
    reasons = list(view.record.reasons)
    ok = (a.value in reasons) == a.present
    if a.present:
        return ok, a.value, reasons, f"reason {a.value!r} missing (reasons: {listing(reasons)})"
    return (
        ok,
        f"not {a.value}",
        reasons,
        f"reason {a.value!r} present (reasons: {listing(reasons)})",
    )


_CHECKS: dict[str, Callable[[Any, FlowView], Outcome]] = {
    "equals": _on_path(_equals),
    "one_of": _on_path(_one_of),
    "contains": _on_path(_contains),
    "regex": _on_path(_regex),
    "range": _on_path(_range),
    "status": _status,
    "reason": _reason,
    **TRACE_CHECKS,
}
