"""Property: check_suite is total. Whatever decision schema an agent declares (nested,
self-referencing, malformed), checking a suite against it returns lines, never raises."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mir.contracts import AgentContract, EvalSuite
from mir.evals.checking import check_suite
from mir.evals.decision_paths import SchemaField, Unresolved, resolve_path
from tests.unit.runtime.fakes import contract

NAMES = ["action", "amount", "items", "refund", "0", "1", "x"]
REFS = [
    "#/$defs/A",
    "#/$defs/B",
    "#/definitions/A",
    "#",
    "#/properties/items",
    "#/nope",
    "other.json",
    3,
]

scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=5)


def schema_node(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    keyed = st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(
                ["object", "array", "string", "number", "integer", "null", "boolean"]
            )
            | st.lists(st.sampled_from(["string", "null", "object"]), max_size=3)
            | scalars,
            "properties": st.dictionaries(st.sampled_from(NAMES), inner, max_size=3) | scalars,
            "items": inner,
            "prefixItems": st.lists(inner, max_size=2) | scalars,
            "additionalProperties": inner,
            "patternProperties": st.dictionaries(st.text(max_size=3), inner, max_size=1),
            "anyOf": st.lists(inner, max_size=3) | scalars,
            "oneOf": st.lists(inner, max_size=2),
            "allOf": st.lists(inner, max_size=2),
            "$ref": st.sampled_from(REFS),
            "enum": st.lists(scalars, max_size=3) | scalars,
            "const": scalars,
        },
    )
    return keyed | st.booleans() | scalars


schemas = st.recursive(st.booleans() | st.just({}), schema_node, max_leaves=25).flatmap(
    lambda node: st.fixed_dictionaries(
        {"$defs": st.fixed_dictionaries({"A": st.just(node), "B": st.just({"$ref": "#/$defs/B"})})}
    ).map(lambda defs: {**node, **defs} if isinstance(node, dict) else node)
)
paths = st.lists(st.sampled_from(NAMES), min_size=1, max_size=5).map(".".join)


@dataclass(frozen=True)
class Parts:
    contract: AgentContract
    decision_schema: Any


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=schemas, path=paths)
def test_resolve_path_never_raises(schema: Any, path: str):
    assert isinstance(resolve_path(schema, path), SchemaField | Unresolved)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema=schemas, path=paths, value=scalars | st.lists(scalars, max_size=2))
def test_check_suite_never_raises_on_any_schema(schema: Any, path: str, value: Any):
    suite = EvalSuite.model_validate(
        {
            "agent": "refunds.triage",
            "cases": [
                {
                    "id": "p",
                    "input": {},
                    "expect": {path: value, "status": value},
                    "assert": [
                        {"type": "equals", "path": path, "value": value},
                        {"type": "one_of", "path": path, "values": [value]},
                        {"type": "contains", "path": path, "value": value},
                        {"type": "regex", "path": path, "pattern": "a("},
                        {"type": "range", "path": path, "min": 0},
                        {"type": "rubric", "rubric": "r", "path": path},
                        {"type": "pairwise", "criteria": "c", "reference": {"action": value}},
                    ],
                }
            ],
        }
    )
    lines = check_suite(
        suite, suite_path=Path("/nonexistent/suite.yaml"), parts=Parts(contract(), schema)
    )
    assert all(line.startswith("/nonexistent/suite.yaml:") for line in lines)
    assert any("invalid regex" in line for line in lines)
