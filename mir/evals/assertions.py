"""Evaluating a case's assertions against what one flow did.

The deterministic tier reads the decision record; the schema and trajectory tiers read
the flow's own trace events (what the runtime recorded), never re-validate or
re-derive: an eval must judge the pipeline that ran, not a second copy of it. Judge
assertions are graded elsewhere (``judging``); ``evaluate`` skips them.

Evaluation is total: a flow with no decision, a value of the wrong type, a malformed
pattern each give a failed ``AssertionResult`` with a one-line message, never an
exception (a model's output may be anything).

How the schema tier maps the runtime's trace events and reason codes
(``mir/runtime/flow.py``, ``execution.py``, ``records.ReasonCode``):

=====================  ==================================================================
assertion              passes when
=====================  ==================================================================
``schema_valid``       a ``validate`` event that follows an ``infer`` attempt (its data
                       names the ``route``) carries none of the output-shape codes
                       ``not_json truncated output_too_large invalid_utf8 schema_invalid
                       extra_field missing_field wrong_type confidence_invalid too_deep
                       number_too_large``; ``attempt: first``: the flow's first such
                       event, ``any``: one of them. Action, limit, binding and budget
                       codes on the same event are not schema failures.
``action_allowed``     the flow routed a decision (the record has one) and no event on
                       that decision's way carries ``action_not_allowed`` or
                       ``role_not_allowed``: the ``fallback`` event that produced it (a
                       rule's decision) and the ``pre_execute`` ``validate`` event.
``integrity_passed``   the flow routed a decision and the integrity check refused it
                       nowhere after: the rule decision's ``fallback`` event carries no
                       reason, and no ``validate`` event of phase ``pre_execute`` exists
                       (the runtime emits one only when the re-check fails: TTL, limits,
                       bindings, role).
=====================  ==================================================================

Trajectory: ``retries`` counts ``infer`` events with ``attempt`` > 0 (re-asks after
invalid output, over every route); ``fallback`` is a ``fallback`` event naming the rule
that decided, or status ``fallback``; ``route`` is an ``infer`` event whose route name or
provider is the value (``rules`` also matches the fallback rules deciding);
``cascaded`` is a ``route`` event that moved the flow to the next route;
``review_requested`` is a ``route`` event with status ``pending_review``, a ``review``
event, or status ``pending_review``; ``stale`` is status ``stale`` or a ``recheck``
event whose result is ``changed``; ``tokens`` sums prompt + completion tokens over the
events; ``latency_ms`` sums the ``infer`` events' latency (model time, as the suite
format defines it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Protocol, get_args

from pydantic import ValidationError

from mir.contracts import AgentContract, Assertion, EvalCase
from mir.evals.decision_paths import is_number, json_equal, json_type, read_path
from mir.evals.domain import AssertionResult

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
    view = _FlowView.of(obs)
    results = []
    for assertion in expand(case):
        if assertion.tier == "judge":
            continue
        results.append(_evaluate_one(assertion, view))
    return results


def _evaluate_one(assertion: Any, view: _FlowView) -> AssertionResult:
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


# --------------------------------------------------------------------- the flow, read once
@dataclass(frozen=True)
class _FlowView:
    record: DecisionRecord
    events: tuple[TraceEvent, ...]
    role: str

    @classmethod
    def of(cls, obs: Observation) -> _FlowView:
        flow_id = obs.record.flow_id
        mine = tuple(e for e in obs.events if e.flow_id == flow_id)
        return cls(obs.record, tuple(sorted(mine, key=lambda e: e.seq)), obs.role)

    def steps(self, step: str) -> list[TraceEvent]:
        return [e for e in self.events if e.step == step]

    def no_decision(self) -> str:
        why = " / ".join([self.record.status, *self.record.reasons])
        return f"no decision: the flow ended {why}"


Outcome = tuple[bool, Any, Any, str]


# --------------------------------------------------------------------- deterministic
def _on_path(check: Callable[[Any, Any], Outcome]) -> Callable[[Any, _FlowView], Outcome]:
    def run(assertion: Any, view: _FlowView) -> Outcome:
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
    return ok, a.value, actual, f"{a.path} is {_show(actual)}, expected {_show(a.value)}"


def _one_of(a: Any, actual: Any) -> Outcome:
    ok = any(json_equal(actual, v) for v in a.values)
    return ok, a.values, actual, f"{a.path} is {_show(actual)}, expected one of {_show(a.values)}"


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
    return ok, a.value, actual, f"{a.path} ({_show(actual)}) does not contain {_show(a.value)}"


def _regex(a: Any, actual: Any) -> Outcome:
    if not isinstance(actual, str):
        return False, a.pattern, actual, f"{a.path} is a {json_type(actual)}, not text"
    compiled = _compile(a.pattern)
    if isinstance(compiled, str):
        return False, a.pattern, actual, f"invalid regex {a.pattern!r}: {compiled}"
    ok = compiled.search(actual) is not None
    return ok, a.pattern, actual, f"{a.path} ({_show(actual)}) does not match /{a.pattern}/"


@lru_cache(maxsize=512)
def _compile(pattern: str) -> re.Pattern[str] | str:
    try:
        return re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as exc:
        return str(exc)


def _range(a: Any, actual: Any) -> Outcome:
    expected = {"min": a.min, "max": a.max}
    if not is_number(actual):
        return False, expected, actual, f"{a.path} is {_show(actual)}, not a number"
    ok = (a.min is None or actual >= a.min) and (a.max is None or actual <= a.max)
    bounds = f"[{'' if a.min is None else f'{a.min:g}'}, {'' if a.max is None else f'{a.max:g}'}]"
    return ok, expected, actual, f"{a.path} is {actual}, outside {bounds}"


def _status(a: Any, view: _FlowView) -> Outcome:
    wanted = a.value if isinstance(a.value, list) else [a.value]
    actual = view.record.status
    ok = actual in wanted
    shown = " or ".join(map(str, wanted))
    why = f" ({', '.join(view.record.reasons)})" if view.record.reasons else ""
    return ok, a.value, actual, f"status is {actual}{why}, expected {shown}"


def _reason(a: Any, view: _FlowView) -> Outcome:
    reasons = list(view.record.reasons)
    ok = (a.value in reasons) == a.present
    if a.present:
        return ok, a.value, reasons, f"reason {a.value!r} missing (reasons: {_list(reasons)})"
    return ok, f"not {a.value}", reasons, f"reason {a.value!r} present (reasons: {_list(reasons)})"


# --------------------------------------------------------------------- schema and action
# Codes the integrity check gives to an output that does not parse or fit the schema.
SCHEMA_CODES = frozenset(
    {
        "not_json",
        "truncated",
        "output_too_large",
        "invalid_utf8",
        "schema_invalid",
        "extra_field",
        "missing_field",
        "wrong_type",
        "confidence_invalid",
        "too_deep",
        "number_too_large",
    }
)
ACTION_CODES = frozenset({"action_not_allowed", "role_not_allowed"})


def _attempts(view: _FlowView) -> list[TraceEvent]:
    """The ``validate`` events of model answers (a pre-call budget stop names no route)."""
    return [e for e in view.steps("validate") if "route" in e.data]


def _schema_valid(a: Any, view: _FlowView) -> Outcome:
    attempts = _attempts(view)
    if not attempts:
        why = " / ".join([view.record.status, *view.record.reasons])
        return False, a.attempt, None, f"no model answer was validated (the flow ended {why})"
    bad = [sorted(set(e.reasons) & SCHEMA_CODES) for e in attempts]
    looked = bad[:1] if a.attempt == "first" else bad
    ok = any(not codes for codes in looked)
    actual = [codes or "valid" for codes in bad]
    if a.attempt == "first":
        return ok, a.attempt, actual, f"the first answer did not fit the schema ({_list(bad[0])})"
    failed = "; ".join(", ".join(codes) for codes in bad)
    return ok, a.attempt, actual, f"no answer fit the decision schema ({failed})"


def _decision_events(view: _FlowView) -> list[TraceEvent]:
    """Events that judged the routed decision after it was proposed."""
    ruled = [e for e in view.steps("fallback") if "rule" in e.data]
    checked = [e for e in view.steps("validate") if e.data.get("phase") == "pre_execute"]
    return ruled + checked


def _action_allowed(a: Any, view: _FlowView) -> Outcome:
    action = view.record.action
    if view.record.decision is None:
        return False, True, None, view.no_decision()
    codes = sorted({r for e in _decision_events(view) for r in e.reasons} & ACTION_CODES)
    return (
        not codes,
        True,
        action,
        f"action {action!r} refused for role {view.role!r} ({', '.join(codes)})",
    )


def _integrity_passed(a: Any, view: _FlowView) -> Outcome:
    if view.record.decision is None:
        return False, True, None, view.no_decision()
    codes = sorted({r for e in _decision_events(view) for r in e.reasons})
    return not codes, True, codes, f"the integrity check refused the decision ({_list(codes)})"


# --------------------------------------------------------------------- trajectory
def _retries(a: Any, view: _FlowView) -> Outcome:
    count = sum(1 for e in view.steps("infer") if _attempt(e) > 0)
    return count <= a.max, f"<= {a.max}", count, f"{count} retries, at most {a.max} allowed"


def _attempt(event: TraceEvent) -> int:
    value = event.data.get("attempt", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _flag(actual: bool, a: Any, what: str) -> Outcome:
    said = "" if actual else "not "
    wanted = "" if a.value else "not "
    return actual == a.value, a.value, actual, f"{what} {said}happened, expected {wanted}to"


def _fallback(a: Any, view: _FlowView) -> Outcome:
    used = view.record.status == "fallback" or any("rule" in e.data for e in view.steps("fallback"))
    return _flag(used, a, "fallback")


def _cascaded(a: Any, view: _FlowView) -> Outcome:
    moved = any("cascade" in e.data for e in view.steps("route"))
    return _flag(moved, a, "cascade")


def _review(a: Any, view: _FlowView) -> Outcome:
    asked = (
        view.record.status == "pending_review"
        or bool(view.steps("review"))
        or any(e.status == "pending_review" for e in view.steps("route"))
    )
    return _flag(asked, a, "review request")


def _stale(a: Any, view: _FlowView) -> Outcome:
    changed = view.record.status == "stale" or any(
        e.data.get("result") == "changed" for e in view.steps("recheck")
    )
    return _flag(changed, a, "stale")


def _routes_used(view: _FlowView) -> list[str]:
    used: list[str] = []
    for event in view.steps("infer"):
        used += [str(event.data.get("route")), str(event.provider)]
    if any("rule" in e.data for e in view.steps("fallback")):
        used.append("rules")
    return [u for u in dict.fromkeys(used) if u != "None"]


def _route(a: Any, view: _FlowView) -> Outcome:
    used = _routes_used(view)
    hit = a.value in used
    expected = a.value if a.used else f"not {a.value}"
    verb = "was not" if a.used else "was"
    return hit == a.used, expected, used, f"route {a.value!r} {verb} used (used: {_list(used)})"


def _tokens(a: Any, view: _FlowView) -> Outcome:
    total = sum(e.prompt_tokens + e.completion_tokens for e in view.events)
    return total <= a.max, f"<= {a.max}", total, f"{total} tokens, at most {a.max} allowed"


def _latency(a: Any, view: _FlowView) -> Outcome:
    total = round(sum(e.latency_ms for e in view.steps("infer")), 3)
    return total <= a.max, f"<= {a.max:g}", total, f"{total:g} ms of model time, max {a.max:g}"


# --------------------------------------------------------------------- helpers
def _show(value: Any, limit: int = 80) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _list(items: Sequence[str]) -> str:
    return ", ".join(items) if items else "none"


_CHECKS: dict[str, Callable[[Any, _FlowView], Outcome]] = {
    "equals": _on_path(_equals),
    "one_of": _on_path(_one_of),
    "contains": _on_path(_contains),
    "regex": _on_path(_regex),
    "range": _on_path(_range),
    "status": _status,
    "reason": _reason,
    "schema_valid": _schema_valid,
    "action_allowed": _action_allowed,
    "integrity_passed": _integrity_passed,
    "retries": _retries,
    "fallback": _fallback,
    "cascaded": _cascaded,
    "review_requested": _review,
    "stale": _stale,
    "route": _route,
    "tokens": _tokens,
    "latency_ms": _latency,
}
