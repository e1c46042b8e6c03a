"""The Decision Integrity Module (pipeline step 3): deterministic, no model in it.

Every proposal, from a model or from the rule fallback, passes through ``IntegrityCheck``
before anything may execute. It is a pure function of the raw output, the contract and
the circumstances (role, clock, spend, suspension); each failed check is a ``Problem``
with a stable ``ReasonCode`` and a message precise enough to feed back to the model.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mir.contracts import AgentContract, ParamLimit
from mir.runtime.bindings import binding_problems
from mir.runtime.records import Problem, ReasonCode, Verdict
from mir.runtime.shapes import scan_text, shape_problem

# Checks a decision against its schema; returns problems (code + field + message).
SchemaCheck = Callable[[Mapping[str, Any]], list[Problem]]

MAX_OUTPUT_BYTES = 64 * 1024


@dataclass(frozen=True)
class Circumstances:
    """Everything outside the output that decides whether it may execute."""

    role: str
    created_at: datetime
    now: datetime
    tokens_spent: int = 0
    cost_spent: float = 0.0
    suspended: bool = False
    # The flow's input and world state: what parameter bindings are checked against.
    input: Mapping[str, Any] | None = None
    context: Mapping[str, Any] | None = None
    # The TTL the flow began under (a resumed flow): the shorter of it and the current
    # contract's applies, so editing the contract never revives an expired decision.
    ttl_seconds: float | None = None


def parse_output(text: str, finish_reason: str | None, max_bytes: int) -> Any | Problem:
    """Strict JSON or the problem that prevents it; parsing happens only after size and
    encoding are known to be sane, so a hostile 1 MB answer costs nothing to refuse."""
    try:
        encoded = text.encode("utf-8")
    except UnicodeEncodeError:
        return Problem(code=ReasonCode.INVALID_UTF8, message="output is not valid UTF-8")
    if len(encoded) > max_bytes:
        return Problem(
            code=ReasonCode.OUTPUT_TOO_LARGE,
            message=f"output is {len(encoded)} bytes, the limit is {max_bytes}",
        )
    if finish_reason == "length":
        return Problem(
            code=ReasonCode.TRUNCATED,
            message="output was cut at the token limit; answer with a shorter JSON object",
        )
    hostile = scan_text(text)
    if hostile is not None:  # before json.loads: it would recurse or overflow on these
        return hostile
    try:
        return json.loads(text, parse_constant=float, object_pairs_hook=_unique_keys)
    except (RecursionError, ValueError) as exc:
        if not isinstance(exc, json.JSONDecodeError):  # a duplicate key, or what the scan missed
            return Problem(code=ReasonCode.NOT_JSON, message=f"not usable JSON: {exc}"[:300])
        # Ran out of text (or inside a string that never closed): cut off, not garbage.
        if exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string"):
            return Problem(code=ReasonCode.TRUNCATED, message=f"JSON ends early: {exc.msg}")
        return Problem(
            code=ReasonCode.NOT_JSON, message=f"not valid JSON: {exc.msg} at char {exc.pos}"
        )


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object naming a key twice is refused: Python keeps the last value, other
    parsers (and a reviewer reading the raw output) the first, so what is read and what
    runs could differ (`"action": "reject", ..., "action": "refund"`)."""
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"duplicate key {key!r}; name each field once")
        seen[key] = value
    return seen


@dataclass(frozen=True)
class IntegrityCheck:
    contract: AgentContract
    schema_check: SchemaCheck
    schema_fields: frozenset[str]
    max_output_bytes: int = MAX_OUTPUT_BYTES
    # The contract's input schema (None: any JSON object within the shape limits).
    input_check: SchemaCheck | None = None

    def check_input(self, input: Any) -> Verdict:
        """A caller's input, before anything else sees it: a JSON object within the shape
        limits and valid against the contract's ``input`` schema. Every problem is
        ``input_invalid`` (the caller must fix it; asking the model again cannot)."""
        if not isinstance(input, Mapping):
            return _fail(
                ReasonCode.INPUT_INVALID, f"input must be a JSON object, got {type(input).__name__}"
            )
        hostile = shape_problem(input)
        if hostile is not None:
            return _fail(ReasonCode.INPUT_INVALID, f"input: {hostile.message}")
        found = self.input_check(input) if self.input_check is not None else []
        problems = [
            Problem(code=ReasonCode.INPUT_INVALID, field=p.field, message=f"input.{p.message}")
            for p in found
        ]
        return Verdict(problems=tuple(problems)) if problems else Verdict(decision=dict(input))

    def check_output(self, text: str, finish_reason: str | None, when: Circumstances) -> Verdict:
        if when.suspended:
            return _fail(ReasonCode.AGENT_SUSPENDED, "agent is suspended")
        parsed = parse_output(text, finish_reason, self.max_output_bytes)
        if isinstance(parsed, Problem):
            return Verdict(problems=(parsed,))
        if not isinstance(parsed, dict):
            return _fail(
                ReasonCode.WRONG_TYPE, f"expected a JSON object, got {type(parsed).__name__}"
            )
        return self.check_decision(parsed, when)

    def check_decision(self, decision: Mapping[str, Any], when: Circumstances) -> Verdict:
        # A decision may come from anywhere (a model, a rule over hostile input, a trace):
        # its shape is bounded first, so no check below can recurse or overflow on it.
        hostile = shape_problem(decision)
        if hostile is not None:
            return Verdict(problems=(hostile,))
        problems: list[Problem] = []
        if when.suspended:
            problems.append(Problem(code=ReasonCode.AGENT_SUSPENDED, message="agent is suspended"))
        problems += self._non_finite(decision) + _surrogates(decision)
        problems += self._fields(decision)
        action_problems = self._action(decision, when.role)
        confidence_problems = self._confidence(decision)
        problems += action_problems + confidence_problems
        # The schema check would report the same bad action / confidence again, less clearly.
        owned = {p.field for p in action_problems + confidence_problems}
        problems += [p for p in self.schema_check(decision) if p.field not in owned]
        action = decision.get(self.contract.decision.action_field)
        if not action_problems and isinstance(action, str) and action in self.contract.actions:
            spec = self.contract.actions[action]
            for field, limit in spec.limits.items():
                if field in decision:
                    problems += _limit(field, decision[field], limit)
            problems += binding_problems(decision, spec.bindings, when.input, when.context)
        problems += self._clock(when) + self.budget(when)
        if problems:
            return Verdict(problems=tuple(problems))
        return Verdict(decision=dict(decision))

    def _non_finite(self, decision: Mapping[str, Any]) -> list[Problem]:
        confidence = self.contract.decision.confidence_field
        return [
            Problem(code=ReasonCode.NOT_JSON, field=k, message=f"{k}: NaN/Infinity is not JSON")
            for k, v in decision.items()
            if k != confidence and isinstance(v, float) and not math.isfinite(v)
        ]

    def _fields(self, decision: Mapping[str, Any]) -> list[Problem]:
        if not self.schema_fields:
            return []
        return [
            Problem(code=ReasonCode.EXTRA_FIELD, field=k, message=f"{k}: field not in the schema")
            for k in decision
            if k not in self.schema_fields
        ]

    def _action(self, decision: Mapping[str, Any], role: str) -> list[Problem]:
        field = self.contract.decision.action_field
        action = decision.get(field)
        if field not in decision:
            return []  # reported as missing_field by the schema check
        if not isinstance(action, str) or action not in self.contract.actions:
            allowed = ", ".join(sorted(self.contract.actions))
            return [
                Problem(
                    code=ReasonCode.ACTION_NOT_ALLOWED,
                    field=field,
                    message=f"{field}: {action!r} is not an action of this agent ({allowed})",
                )
            ]
        roles = self.contract.actions[action].roles
        if "*" not in roles and role not in roles:
            return [
                Problem(
                    code=ReasonCode.ROLE_NOT_ALLOWED,
                    field=field,
                    message=f"{field}: role {role!r} may not trigger {action!r} "
                    f"(allowed: {', '.join(roles)})",
                )
            ]
        return []

    def _confidence(self, decision: Mapping[str, Any]) -> list[Problem]:
        field = self.contract.decision.confidence_field
        if field not in decision:
            return []
        value = decision[field]
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if number and math.isfinite(value) and 0 <= value <= 1:
            return []
        return [
            Problem(
                code=ReasonCode.CONFIDENCE_INVALID,
                field=field,
                message=f"{field}: must be a number from 0 to 1, got {value!r}",
            )
        ]

    def _clock(self, when: Circumstances) -> list[Problem]:
        age = (when.now - when.created_at).total_seconds()
        ttl = self.contract.ttl_seconds
        if when.ttl_seconds is not None:
            ttl = min(ttl, when.ttl_seconds)
        if age <= ttl:
            return []
        return [
            Problem(
                code=ReasonCode.TTL_EXPIRED,
                message=f"decision is {age:.0f}s old, ttl is {ttl:g}s",
            )
        ]

    def budget(self, when: Circumstances) -> list[Problem]:
        """Also asked before every model call: a spent budget buys no further attempt."""
        problems = []
        budget = self.contract.budget
        if budget.max_tokens is not None and when.tokens_spent > budget.max_tokens:
            problems.append(
                Problem(
                    code=ReasonCode.BUDGET_EXCEEDED,
                    message=f"{when.tokens_spent} tokens spent, budget {budget.max_tokens}",
                )
            )
        if budget.max_cost_usd is not None and when.cost_spent > budget.max_cost_usd:
            problems.append(
                Problem(
                    code=ReasonCode.BUDGET_EXCEEDED,
                    message=f"${when.cost_spent:.4f} spent, budget ${budget.max_cost_usd}",
                )
            )
        return problems


def _surrogates(decision: Mapping[str, Any]) -> list[Problem]:
    """Strings that JSON escapes turned into lone surrogates ("\\udcff"): not Unicode."""

    def broken(value: Any) -> bool:
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return True
            return False
        if isinstance(value, dict):
            return any(broken(k) or broken(v) for k, v in value.items())
        if isinstance(value, list):
            return any(broken(v) for v in value)
        return False

    return [
        Problem(code=ReasonCode.INVALID_UTF8, field=str(k), message=f"{k}: not valid UTF-8")
        for k, v in decision.items()
        if broken(k) or broken(v)
    ]


def _limit(field: str, value: Any, limit: ParamLimit) -> list[Problem]:
    def over(message: str) -> list[Problem]:
        return [Problem(code=ReasonCode.LIMIT_EXCEEDED, field=field, message=f"{field}: {message}")]

    if limit.one_of is not None and value not in limit.one_of:
        return over(f"{value!r} is not one of {limit.one_of}")
    if limit.minimum is not None or limit.maximum is not None:
        if isinstance(value, bool) or not isinstance(value, int | float):
            return over(f"expected a number, got {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            return over(f"{value!r} is not a finite number")
        if limit.minimum is not None and value < limit.minimum:
            return over(f"{value} is below the minimum {limit.minimum}")
        if limit.maximum is not None and value > limit.maximum:
            return over(f"{value} is above the maximum {limit.maximum}")
    too_long = isinstance(value, str | list) and len(value) > (limit.max_length or 0)
    if limit.max_length is not None and too_long:
        return over(f"length {len(value)} is above the maximum {limit.max_length}")
    return []


def _fail(code: ReasonCode, message: str) -> Verdict:
    return Verdict(problems=(Problem(code=code, message=message),))
