"""Checking a suite against the agent's contract before any model call.

A suite that asserts on a field the decision cannot have, an action the contract does
not define or a pattern that does not compile would fail every run, and only after
paying for the model calls. ``check_suite`` finds all of them at once, each as one line
``<file>:<line>: cases[<i>] (<id>).assert[<j>]: <what>; <how to fix>`` (the line of the
assertion's field, or of the ``expect`` key for the shorthand). A case input the
contract's input schema refuses is not flagged: it is how a suite tests
``rejected / input_invalid``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

from mir.contracts import EvalSuite, FlowStatusName, field_line, load_contract
from mir.errors import did_you_mean
from mir.evals.assertions import DecisionParts, expand
from mir.evals.decision_paths import SchemaField, Unresolved, json_equal, json_type, resolve_path
from mir.runtime import ReasonCode

_STATUSES: tuple[str, ...] = FlowStatusName.__args__  # type: ignore[attr-defined]
_REASONS = tuple(code.value for code in ReasonCode)
_TEXT_LIKE = {"string", "array", "object"}


def check_suite(
    suite: EvalSuite,
    *,
    suite_path: Path,
    parts: DecisionParts,
    indexes: Sequence[int] | None = None,
) -> list[str]:
    """Every problem of the suite against the agent, as ``file:line: ...`` lines.

    ``indexes``: each case's index in the file, when ``suite`` holds only some of its
    cases (those that pass the format check, in a file that does not)."""
    checker = _Checker(suite_path, parts)
    out: list[str] = []
    if not suite.cases and indexes is None:  # 'gate: passed' on nothing, CI kept green
        out.append(
            f"{checker.file}:{checker.line(('cases',))}: the suite has no cases; "
            "add at least one (id, input, expect) or delete the file"
        )
    numbers = list(indexes) if indexes is not None else range(len(suite.cases))
    for i, case in zip(numbers, suite.cases, strict=True):
        shorthand = list(case.expect)
        for j, assertion in enumerate(expand(case)):
            in_expect = j < len(shorthand)
            if in_expect:  # the problem is the key's: report the key's line
                label = f"cases[{i}] ({case.id}).expect.{shorthand[j]}"
                loc: tuple[Any, ...] = ("cases", i, "expect", shorthand[j])
            else:
                k = j - len(shorthand)
                label, loc = f"cases[{i}] ({case.id}).assert[{k}]", ("cases", i, "assert", k)
            for field, problem in checker.problems(assertion):
                line = checker.line(loc if in_expect else (*loc, field))
                out.append(f"{checker.file}:{line}: {label}: {problem}")
    return out


class _Checker:
    def __init__(self, suite_path: Path, parts: DecisionParts):
        self.path = suite_path
        self.file = str(suite_path)
        self.contract = parts.contract
        self.schema = parts.decision_schema
        self.actions = sorted(self.contract.actions)
        path = getattr(parts, "contract_path", None)
        self.contract_path: Path | None = path if isinstance(path, Path) else None
        self._lines: _SuiteLines | None = None

    def line(self, loc: tuple[Any, ...]) -> int:
        if self._lines is None:  # read only when there is a problem to place
            self._lines = _SuiteLines.read(self.path)
        return self._lines.line_of(loc) or 1

    def problems(self, assertion: Any) -> Iterator[tuple[str, str]]:
        """(field of the assertion, "what; fix") for each problem."""
        kind = assertion.type
        path = getattr(assertion, "path", None)
        if kind == "status":
            yield from self._status(assertion.value)
            return
        if kind == "reason":
            yield from self._reason(assertion.value)
            return
        if kind == "route":
            yield from self._route(assertion.value)
            return
        if kind == "regex":
            yield from self._regex(assertion.pattern)
        if kind == "pairwise":
            yield from self._reference(assertion.reference)
        if not isinstance(path, str):
            return
        if not path:
            yield "path", "an empty field path; name a decision field, e.g. 'action'"
            return
        found = resolve_path(self.schema, path)
        if isinstance(found, Unresolved):
            yield "path", self._unknown_path(path, found)
            return
        yield from self._fits(assertion, path, found)

    # ------------------------------------------------------------------ per type
    def _status(self, value: Any) -> Iterator[tuple[str, str]]:
        for item in value if isinstance(value, list) else [value]:
            if item not in _STATUSES:
                yield "value", _unknown("status", item, _STATUSES)

    def _reason(self, value: Any) -> Iterator[tuple[str, str]]:
        if value in _REASONS or value in self.review_reasons:
            return
        if (
            isinstance(value, str)
            and value.startswith("review_risk:")
            and self.contract.review.risk
        ):
            return  # the score is per flow: review_risk:<score>/<threshold>
        yield "value", _unknown("reason code", value, [*_REASONS, *self.review_reasons])

    @cached_property
    def review_reasons(self) -> list[str]:
        """The reasons the contract's review rules and ``always`` actions can give."""
        review = self.contract.review
        return [
            *(f"review_rule:{rule.name}" for rule in review.when),
            *(f"review_always:{action}" for action in review.always),
        ]

    def _route(self, value: Any) -> Iterator[tuple[str, str]]:
        if value not in self.routes:
            yield "value", _unknown("route", value, self.routes, where="in the contract")

    @cached_property
    def routes(self) -> list[str]:
        """Route names and providers a flow of this agent may use. ``mir eval --provider``
        narrows the loaded contract's routes, so the contract file's own are read too:
        a suite valid for the agent stays valid under any override."""
        contracts = [self.contract]
        if self.contract_path is not None:
            # unreadable now: the loaded parts are what the run uses, and they suffice
            with contextlib.suppress(Exception):
                contracts.append(load_contract(self.contract_path))
        known = [r.name for c in contracts for r in c.routes if r.name]
        known += [r.provider for c in contracts for r in c.routes]
        known += ["scripted"]  # what answers under `mir eval --responses`
        if self.contract.fallback.rules or self.contract.fallback.default:
            known.append("rules")  # the fallback rules deciding count as the 'rules' route
        return list(dict.fromkeys(known))

    def _regex(self, pattern: str) -> Iterator[tuple[str, str]]:
        from mir.evals.patterns import ENGINE, compile_pattern

        refused = compile_pattern(pattern)
        if isinstance(refused, str):
            yield (
                "pattern",
                f"invalid regex {pattern!r} ({refused}); regex assertions run on {ENGINE} "
                "(linear time): no lookarounds, backreferences or possessive repeats, "
                "repeat counts up to 1000",
            )

    def _reference(self, reference: Any) -> Iterator[tuple[str, str]]:
        if not isinstance(reference, dict):
            return
        field = self.contract.decision.action_field
        if field in reference and not self._is_action(reference[field]):
            yield "reference", self._unknown_action(reference[field])

    def _fits(self, assertion: Any, path: str, found: SchemaField) -> Iterator[tuple[str, str]]:
        kind = assertion.type
        values: list[Any] = []
        if kind == "equals":
            values = [assertion.value]
        elif kind == "one_of":
            values = list(assertion.values)
        if path == self.contract.decision.action_field:
            for value in values:
                if not self._is_action(value):
                    yield _value_field(kind), self._unknown_action(value)
            return
        if found.values is not None:
            allowed = found.values
            for value in values:
                if not any(json_equal(value, v) for v in allowed):
                    shown = ", ".join(repr(v) for v in allowed[:10])
                    yield (
                        _value_field(kind),
                        f"{value!r} is not a value {path!r} can take; use one of {shown}",
                    )
        types = found.types
        if types is None:
            return
        described = _types(types)
        if kind == "range" and not types & {"number", "integer"}:
            yield "path", f"range on {path!r}, which is {described}; range needs a number field"
        elif kind == "contains" and not types & _TEXT_LIKE:
            yield (
                "path",
                f"contains on {path!r}, which is {described}; contains needs a text or list field",
            )
        elif kind == "regex" and "string" not in types:
            yield "path", f"regex on {path!r}, which is {described}; regex needs a text field"
        for value in values:
            if json_type(value) not in types and not _fits_type(value, types):
                own = _types(frozenset({json_type(value)}))
                yield (
                    _value_field(kind),
                    f"{value!r} is {own} but {path!r} is {described}; use a value of its type",
                )

    def _is_action(self, value: Any) -> bool:
        return isinstance(value, str) and value in self.contract.actions

    # ------------------------------------------------------------------ messages
    def _unknown_path(self, path: str, found: Unresolved) -> str:
        parent, _, leaf = found.at.rpartition(".")
        head = f"{path!r} is not in the decision schema"
        if parent:
            head += f" ({parent!r} has no field {leaf!r})"
        close = did_you_mean(leaf, found.known)
        fields = ", ".join(found.known)
        if close:
            suggestion = f"{parent}.{close}" if parent else close
            return f"{head}; did you mean {suggestion!r}? (fields: {fields})"
        if fields:
            return f"{head}; use one of its fields: {fields}"
        return f"{head}; assert on {parent!r} itself" if parent else head

    def _unknown_action(self, value: Any) -> str:
        return _unknown("action", value, self.actions, where="in the contract")


class _SuiteLines:
    """Lines of the suite file, parsed once.

    ``mir.contracts.field_line`` parses the file on every call: right for one error,
    quadratic for a suite with hundreds of problems (300 took 10 s). The walk below is
    the same as ``field_line``'s (the key's line; the deepest node found along ``loc``),
    on one node tree; a file that does not compose falls back to ``field_line``.
    """

    def __init__(self, path: Path, root: Any):
        self.path, self.root = path, root

    @classmethod
    def read(cls, path: Path) -> _SuiteLines:
        try:
            import yaml

            loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
            return cls(path, yaml.compose(path.read_text(encoding="utf-8"), Loader=loader))
        except Exception:  # unreadable here: each line is asked of field_line instead
            return cls(path, None)

    def line_of(self, loc: tuple[Any, ...]) -> int | None:
        if self.root is None:
            return field_line(self.path, loc)
        import yaml

        node, line = self.root, self.root.start_mark.line
        for part in loc:
            key: Any = None
            match: Any = None
            if isinstance(node, yaml.MappingNode):
                pair = next(((k, v) for k, v in node.value if k.value == str(part)), None)
                key, match = pair if pair else (None, None)
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
                match = node.value[part] if part < len(node.value) else None
                key = match
            if match is None or key is None:
                break
            node, line = match, key.start_mark.line
        return line + 1


def _value_field(kind: str) -> str:
    return "values" if kind == "one_of" else "value"


def _fits_type(value: Any, types: frozenset[str]) -> bool:
    # every integer is a number (a number field accepts 3; decision_paths already lets
    # an integer field accept 3.0)
    return json_type(value) == "integer" and "number" in types


def _types(types: frozenset[str]) -> str:
    names = sorted(t for t in types if not (t == "number" and "integer" in types))
    if not names:
        return "never set"
    return " or ".join(f"a {n}" if n[0] not in "aeiou" else f"an {n}" for n in names)


def _unknown(what: str, value: Any, known: Sequence[str], *, where: str = "") -> str:
    kinds = f"{what}es" if what.endswith("s") else f"{what}s"
    place = f"{kinds} {where}" if where else kinds
    head = f"unknown {what} {value!r}"
    close = did_you_mean(value, known) if isinstance(value, str) else None
    listing = ", ".join(known)
    if close and len(known) > 10:  # a long list buries the suggestion
        return f"{head}; did you mean {close!r}?"
    if close:
        return f"{head}; did you mean {close!r}? ({place}: {listing})"
    return f"{head}; use one of the {place}: {listing}"
