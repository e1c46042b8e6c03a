"""The schema and trajectory tiers: what the flow's own trace events say.

These assertions read the events the runtime recorded for one flow (never another
flow's, never a re-validation), so an eval judges the pipeline that ran.

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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mir.runtime import DecisionRecord
    from mir.traces import TraceEvent


@dataclass(frozen=True)
class FlowView:
    record: DecisionRecord
    events: tuple[TraceEvent, ...]
    role: str

    @classmethod
    def of(cls, record: DecisionRecord, events: Sequence[TraceEvent], role: str) -> FlowView:
        mine = [e for e in events if e.flow_id == record.flow_id]
        return cls(record, tuple(sorted(mine, key=lambda e: e.seq)), role)

    def steps(self, step: str) -> list[TraceEvent]:
        return [e for e in self.events if e.step == step]

    def no_decision(self) -> str:
        why = " / ".join([self.record.status, *self.record.reasons])
        return f"no decision: the flow ended {why}"


Outcome = tuple[bool, Any, Any, str]


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


def _attempts(view: FlowView) -> list[TraceEvent]:
    """The ``validate`` events of model answers (a pre-call budget stop names no route)."""
    return [e for e in view.steps("validate") if "route" in e.data]


def _schema_valid(a: Any, view: FlowView) -> Outcome:
    attempts = _attempts(view)
    if not attempts:
        why = " / ".join([view.record.status, *view.record.reasons])
        return False, a.attempt, None, f"no model answer was validated (the flow ended {why})"
    bad = [sorted(set(e.reasons) & SCHEMA_CODES) for e in attempts]
    looked = bad[:1] if a.attempt == "first" else bad
    ok = any(not codes for codes in looked)
    actual = [codes or "valid" for codes in bad]
    if a.attempt == "first":
        return ok, a.attempt, actual, f"the first answer did not fit the schema ({listing(bad[0])})"
    failed = "; ".join(", ".join(codes) for codes in bad)
    return ok, a.attempt, actual, f"no answer fit the decision schema ({failed})"


def _decision_events(view: FlowView) -> list[TraceEvent]:
    """Events that judged the routed decision after it was proposed."""
    ruled = [e for e in view.steps("fallback") if "rule" in e.data]
    checked = [e for e in view.steps("validate") if e.data.get("phase") == "pre_execute"]
    return ruled + checked


def _action_allowed(a: Any, view: FlowView) -> Outcome:
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


def _integrity_passed(a: Any, view: FlowView) -> Outcome:
    if view.record.decision is None:
        return False, True, None, view.no_decision()
    codes = sorted({r for e in _decision_events(view) for r in e.reasons})
    return not codes, True, codes, f"the integrity check refused the decision ({listing(codes)})"


# --------------------------------------------------------------------- trajectory
def _retries(a: Any, view: FlowView) -> Outcome:
    count = sum(1 for e in view.steps("infer") if _attempt(e) > 0)
    return count <= a.max, f"<= {a.max}", count, f"{count} retries, at most {a.max} allowed"


def _attempt(event: TraceEvent) -> int:
    value = event.data.get("attempt", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


# (what happened, what did not) for each flag assertion, in words
_FLAG_WORDS = {
    "fallback": ("the fallback decided", "the fallback did not decide"),
    "cascade": ("the flow cascaded to another route", "the flow did not cascade"),
    "review request": ("review was requested", "no review was requested"),
    "stale": ("the decision went stale", "the decision did not go stale"),
}


def _flag(actual: bool, a: Any, what: str) -> Outcome:
    yes, no = _FLAG_WORDS.get(what, (f"{what}: yes", f"{what}: no"))
    said, wanted = (yes if actual else no), (yes if a.value else no)
    return actual == a.value, a.value, actual, f"{said} (expected: {wanted})"


def _fallback(a: Any, view: FlowView) -> Outcome:
    used = view.record.status == "fallback" or any("rule" in e.data for e in view.steps("fallback"))
    return _flag(used, a, "fallback")


def _cascaded(a: Any, view: FlowView) -> Outcome:
    moved = any("cascade" in e.data for e in view.steps("route"))
    return _flag(moved, a, "cascade")


def _review(a: Any, view: FlowView) -> Outcome:
    asked = (
        view.record.status == "pending_review"
        or bool(view.steps("review"))
        or any(e.status == "pending_review" for e in view.steps("route"))
    )
    return _flag(asked, a, "review request")


def _stale(a: Any, view: FlowView) -> Outcome:
    changed = view.record.status == "stale" or any(
        e.data.get("result") == "changed" for e in view.steps("recheck")
    )
    return _flag(changed, a, "stale")


def _routes_used(view: FlowView) -> list[str]:
    used: list[str] = []
    for event in view.steps("infer"):
        used += [str(event.data.get("route")), str(event.provider)]
    if any("rule" in e.data for e in view.steps("fallback")):
        used.append("rules")
    return [u for u in dict.fromkeys(used) if u != "None"]


def _route(a: Any, view: FlowView) -> Outcome:
    used = _routes_used(view)
    hit = a.value in used
    expected = a.value if a.used else f"not {a.value}"
    verb = "was not" if a.used else "was"
    return hit == a.used, expected, used, f"route {a.value!r} {verb} used (used: {listing(used)})"


def _tokens(a: Any, view: FlowView) -> Outcome:
    total = sum(e.prompt_tokens + e.completion_tokens for e in view.events)
    return total <= a.max, f"<= {a.max}", total, f"{total} tokens, at most {a.max} allowed"


def _latency(a: Any, view: FlowView) -> Outcome:
    total = round(sum(e.latency_ms for e in view.steps("infer")), 3)
    return total <= a.max, f"<= {a.max:g}", total, f"{total:g} ms of model time, max {a.max:g}"


# --------------------------------------------------------------------- helpers
def show(value: Any, limit: int = 80) -> str:
    try:
        text = repr(value)
    except Exception:
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def listing(items: Sequence[str]) -> str:
    return ", ".join(items) if items else "none"


TRACE_CHECKS: dict[str, Callable[[Any, FlowView], Outcome]] = {
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
