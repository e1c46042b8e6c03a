"""Load-time check of the contract's review section (pure: schemas in, problems out).

A review rule whose condition names a misspelt field never holds (a missing field does
not hold), so the expensive refund it was written for would be paid without a human.
That is a typo the contract must refuse when the agent loads, with every problem at
once: each condition's ``field`` must be ``action`` or name a field of the input schema
(``input.*``; the ``scope.input`` list when the contract has no input schema), of the
context scope (``context.<key>``: the world has no schema, ``scope.context`` lists what
the contract knows of it) or of the decision schema (``decision.*``). A comparison its
field's type cannot take (``decision.amount > "100"``, ``in`` without a list) and an
action name the contract does not define (in ``always`` or compared with ``action``)
are problems too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from mir.contracts import REVIEW_ROOTS, AgentContract, RuleCondition, json_type
from mir.errors import did_you_mean

Loc = tuple[str | int, ...]
_ORDERING = {"<", "<=", ">", ">="}
_MEMBERSHIP = {"in", "not in"}
_MAX_DEPTH = 32  # $ref chains and nested unions walked before giving up (a cycle)
_MAX_NODES = 2_000  # schema nodes one lookup may visit (unions of unions of ...)


UNKNOWN: Mapping[str, Any] = {"x-mir-unknown": True}  # a schema in user code, not read


def review_problems(
    contract: AgentContract,
    decision_schema: Mapping[str, Any],
    input_schema: Mapping[str, Any] | None,
) -> list[tuple[Loc, str]]:
    """(field path in the contract, message) of every problem of ``review``. A schema
    given as ``UNKNOWN`` (a pydantic model ``mir agents`` does not import) leaves the
    fields under its root unchecked."""
    checker = _Checker(contract, decision_schema, input_schema)
    review = contract.review
    problems: list[tuple[Loc, str]] = []
    for i, action in enumerate(review.always):
        if action not in contract.actions:
            problems.append((("review", "always", i), checker.unknown_action(action)))
    for i, rule in enumerate(review.when):
        for j, condition in enumerate(rule.conditions):
            at: Loc = ("review", "when", i, "conditions", j)
            problems += [((*at, key), text) for key, text in checker.problems(condition)]
    for i, factor in enumerate(review.risk.factors if review.risk else []):
        for j, condition in enumerate(factor.conditions):
            at = ("review", "risk", "factors", i, "conditions", j)
            problems += [((*at, key), text) for key, text in checker.problems(condition)]
    return problems


class _Checker:
    def __init__(
        self,
        contract: AgentContract,
        decision_schema: Mapping[str, Any],
        input_schema: Mapping[str, Any] | None,
    ):
        self.contract = contract
        self.decision = decision_schema
        self.input = input_schema
        self.actions = sorted(contract.actions)

    def problems(self, condition: RuleCondition) -> Iterator[tuple[str, str]]:
        """(key of the condition, message) for each problem of one condition."""
        root, _, rest = condition.field.partition(".")
        if condition.field == "action":
            yield from self._action_value(condition)
            return
        if root not in REVIEW_ROOTS or not rest:
            yield (
                "field",
                (
                    f"{condition.field!r} is not a field a review condition can name; use "
                    "'action', or a field under input., context. or decision. "
                    "(e.g. 'decision.amount')"
                ),
            )
            return
        if root == "context":
            yield from self._listed(rest, "context", self.contract.scope.context)
            return
        schema = self.decision if root == "decision" else self.input
        if schema is UNKNOWN:
            return
        if schema is None:  # no input schema: the scope lists the input's fields
            yield from self._listed(rest, "input", self.contract.scope.input)
            return
        found = _walk(schema, rest.split("."), root)
        if isinstance(found, str):
            yield "field", f"{condition.field!r} is not in the {root} schema{found}"
            return
        if root == "decision" and rest == self.contract.decision.action_field:
            yield from self._action_value(condition)
            return
        yield from self._value(condition, found)

    # ------------------------------------------------------------------ per root
    def _listed(self, rest: str, root: str, listed: list[str]) -> Iterator[tuple[str, str]]:
        key = rest.split(".")[0]
        if key in listed:
            return
        if not listed:
            yield (
                "field",
                (
                    f"'{root}.{rest}': the contract lists no {root} fields (scope.{root} is "
                    f"empty); add {key!r} to scope.{root}"
                ),
            )
            return
        yield (
            "field",
            (
                f"'{root}.{rest}' is not in the contract's {root} scope"
                + _suggest(key, listed, f"scope.{root}", f"{root}.")
            ),
        )

    def _action_value(self, condition: RuleCondition) -> Iterator[tuple[str, str]]:
        op, value = condition.op, condition.value
        if op in _ORDERING:
            yield "op", f"{op!r} on the action, a name; compare it with ==, !=, in or not in"
        elif op in _MEMBERSHIP:
            if not isinstance(value, list):
                yield "value", f"{op!r} needs a list of actions, got {value!r}"
                return
            for item in value:
                if item not in self.contract.actions:
                    yield "value", self.unknown_action(item)
        elif value not in self.contract.actions:
            yield "value", self.unknown_action(value)

    def _value(self, condition: RuleCondition, types: frozenset[str]) -> Iterator[tuple[str, str]]:
        op, value = condition.op, condition.value
        if op in _MEMBERSHIP:
            if not isinstance(value, list):
                yield "value", f"{op!r} needs a list of values, got {value!r}"
            return
        if op not in _ORDERING or not types:
            return
        numeric = bool(types & {"number", "integer"})
        if numeric and not _is_number(value) and "string" not in types:
            yield (
                "value",
                (
                    f"{condition.field!r} is a number; compare it with a number, not {value!r} "
                    "(a number compared with text never holds)"
                ),
            )
        elif types <= {"string", "null"} and not isinstance(value, str):
            yield "value", f"{condition.field!r} is text; compare it with text, not {value!r}"

    def unknown_action(self, value: Any) -> str:
        return f"unknown action {value!r}{_suggest(str(value), self.actions, 'actions')}"


def _walk(schema: Mapping[str, Any], parts: list[str], root: str) -> frozenset[str] | str:
    """The JSON types of the field at ``parts`` (empty: not known), or why it is not in
    the schema (``" ('order' has no field 'totl'); did you mean ..."``)."""
    nodes = _concrete(schema, schema)
    walked: list[str] = []
    for part in parts:
        props: dict[str, list[Mapping[str, Any]]] = {}
        for node in nodes:
            for key, sub in (node.get("properties") or {}).items():
                props.setdefault(key, []).extend(_concrete(sub, schema))
        if part in props:
            nodes = props[part]
        elif props:
            where = f" ({'.'.join(walked)!r} has no field {part!r})" if walked else ""
            spelt = ".".join([root, *walked, ""])
            return where + _suggest(part, sorted(props), "fields", spelt)
        elif _scalar(nodes):
            return f" ({'.'.join(walked)!r} is not an object: it has no field {part!r})"
        else:  # an object the schema does not describe (a free dict): cannot say
            return frozenset()
        walked.append(part)
    types: set[str] = set()
    for node in nodes:
        kind = node.get("type")
        types.update([kind] if isinstance(kind, str) else kind if isinstance(kind, list) else [])
        if "const" in node or "enum" in node:
            values = node.get("enum", [node.get("const")])
            types.update(json_type(v) for v in values)
    if any(not n.get("type") and "enum" not in n and "const" not in n for n in nodes):
        return frozenset()  # some branch says nothing about its type
    return frozenset(types)


def _concrete(
    node: Any, root: Mapping[str, Any], depth: int = 0, budget: list[int] | None = None
) -> list[Mapping[str, Any]]:
    """The schema nodes a value at ``node`` may match: ``$ref`` followed, unions flattened.
    A cycle, or a schema too branchy to walk (``budget`` nodes), gives ``{}``: a node that
    says nothing, so nothing below it is refused."""
    budget = [_MAX_NODES] if budget is None else budget
    budget[0] -= 1
    if depth > _MAX_DEPTH or budget[0] < 0:
        return [{}]
    if not isinstance(node, Mapping):
        return []
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target: Any = root
        for part in ref[2:].split("/"):
            target = target.get(part) if isinstance(target, Mapping) else None
        return _concrete(target, root, depth + 1, budget) if target is not None else [{}]
    branches = [b for key in ("anyOf", "oneOf", "allOf") for b in node.get(key) or []]
    if not branches:
        return [node]
    own = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf", "allOf")}
    found = [n for b in branches for n in _concrete(b, root, depth + 1, budget)]
    return [own, *found] if own.get("properties") else found


def _scalar(nodes: list[Mapping[str, Any]]) -> bool:
    """Every branch is a non-object type: a field below it cannot exist."""
    kinds = [n.get("type") for n in nodes]
    return bool(kinds) and all(isinstance(k, str) and k not in ("object", "array") for k in kinds)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _suggest(wrong: str, known: list[str], what: str, prefix: str = "") -> str:
    listing = ", ".join(known[:20]) + (", ..." if len(known) > 20 else "")
    close = did_you_mean(wrong, known)
    if close:
        return f"; did you mean '{prefix}{close}'? ({what}: {listing})"
    return f"; use one of the {what}: {listing}" if known else ""


def roster_problems(
    contract: AgentContract, held: Mapping[str, tuple[str, ...]] | None
) -> list[tuple[Loc, str]]:
    """Each ``approvals.roles`` entry that no declared reviewer holds (``held``: each
    reviewer's roles; None: the project has no reviewers.toml, nothing to hold it to). A
    role nobody holds is a rule no approval can meet: its flows would wait for ever."""
    if held is None:
        return []
    roles = sorted({role for mine in held.values() for role in mine})
    problems: list[tuple[Loc, str]] = []
    for name, action in contract.actions.items():
        for i, role in enumerate(action.approvals.roles if action.approvals else []):
            if role in roles:
                continue
            text = f"no reviewer in reviewers.toml holds role {role!r}"
            close = did_you_mean(role, roles)
            text += f"; did you mean {close!r}?" if close else ""
            text += f" (declared roles: {', '.join(roles) or 'none'})"
            problems.append((("actions", name, "approvals", "roles", i), text))
    return problems
