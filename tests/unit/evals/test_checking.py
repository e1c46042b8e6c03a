"""check_suite: every problem of a suite against the real fixture agent, at file:line."""

from __future__ import annotations

import textwrap
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from mir.contracts import AgentContract, field_line, load_eval_suite
from mir.evals.checking import check_suite
from mir.evals.decision_paths import SchemaField, Unresolved, resolve_path
from mir.runtime.loading import load_parts
from tests.unit.runtime.fakes import contract

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "runtime" / "project"


@pytest.fixture(scope="module")
def triage():
    """The fixture's triage agent as the runtime loads it (pydantic decision schema)."""
    return load_parts(FIXTURE / "capabilities/refunds/agents/triage.yaml", FIXTURE)


@dataclass(frozen=True)
class Parts:
    contract: AgentContract
    decision_schema: dict[str, Any]


def problems(tmp_path: Path, parts: Any, body: str) -> list[str]:
    path = tmp_path / "triage.yaml"
    path.write_text("agent: refunds.triage\ncases:\n" + textwrap.dedent(body))
    return check_suite(load_eval_suite(path), suite_path=path, parts=parts)


def test_a_correct_suite_has_no_problems(tmp_path, triage):
    found = problems(
        tmp_path,
        triage,
        """\
        - id: ok
          input: {order_id: A1, amount: 10, message: hi}
          expect: {action: refund, status: [executed, fallback], amount: 10}
          assert:
            - {type: regex, path: reason, pattern: "^small"}
            - {type: range, path: confidence, min: 0.5}
            - {type: contains, path: reason, value: small}
            - {type: one_of, path: action, values: [refund, escalate]}
            - {type: reason, value: retries_exhausted, present: false}
            - {type: route, value: local}
            - {type: route, value: rules}
            - {type: schema_valid, attempt: first}
            - {type: rubric, rubric: polite, path: reason}
            - {type: pairwise, criteria: better, reference: {action: deny}}
        - id: refused input is a legitimate test
          input: {nonsense: true}
          expect: {status: rejected}
        """,
    )
    assert found == []


def test_every_problem_is_listed_at_once_with_its_line_and_a_fix(tmp_path, triage):
    found = problems(
        tmp_path,
        triage,
        """\
        - id: small
          input: {order_id: A1, amount: 10}
          expect:
            action: refnd
            status: done
            amout: 3
          assert:
            - type: regex
              path: reason
              pattern: "(unclosed"
            - type: range
              path: reason
              min: 1
            - {type: contains, path: amount, value: 3}
            - {type: route, value: locl}
            - {type: reason, value: retries_exhaustd}
            - {type: equals, path: reason.sub, value: 1}
            - {type: equals, path: confidence, value: "high"}
            - {type: one_of, path: action, values: [refund, nope]}
            - {type: regex, path: amount, pattern: "1"}
            - {type: status, value: executed}
        """,
    )
    file = tmp_path / "triage.yaml"
    assert found == [
        f"{file}:6: cases[0] (small).expect.action: unknown action 'refnd'; "
        "did you mean 'refund'? (actions in the contract: deny, escalate, refund)",
        f"{file}:7: cases[0] (small).expect.status: unknown status 'done'; use one of the "
        "statuses: executed, rejected, pending_review, fallback, stale, aborted",
        f"{file}:8: cases[0] (small).expect.amout: 'amout' is not in the decision schema; "
        "did you mean 'amount'? (fields: action, confidence, amount, reason)",
        f"{file}:12: cases[0] (small).assert[0]: invalid regex '(unclosed' (missing ): "
        "(unclosed); regex assertions run on RE2 (linear time): no lookarounds, "
        "backreferences or possessive repeats, repeat counts up to 1000",
        f"{file}:14: cases[0] (small).assert[1]: range on 'reason', which is a string; "
        "range needs a number field",
        f"{file}:16: cases[0] (small).assert[2]: contains on 'amount', which is a number; "
        "contains needs a text or list field",
        f"{file}:17: cases[0] (small).assert[3]: unknown route 'locl'; did you mean 'local'? "
        "(routes in the contract: local, remote, llama, litellm, scripted, rules)",
        f"{file}:18: cases[0] (small).assert[4]: unknown reason code 'retries_exhaustd'; "
        "did you mean 'retries_exhausted'?",
        f"{file}:19: cases[0] (small).assert[5]: 'reason.sub' is not in the decision schema "
        "('reason' has no field 'sub'); assert on 'reason' itself",
        f"{file}:20: cases[0] (small).assert[6]: 'high' is a string but 'confidence' is a "
        "number; use a value of its type",
        f"{file}:21: cases[0] (small).assert[7]: unknown action 'nope'; use one of the "
        "actions in the contract: deny, escalate, refund",
        f"{file}:22: cases[0] (small).assert[8]: regex on 'amount', which is a number; "
        "regex needs a text field",
    ]


def test_problems_of_several_cases_keep_case_order_and_ids(tmp_path, triage):
    found = problems(
        tmp_path,
        triage,
        """\
        - id: one
          input: {}
          expect: {acton: refund}
        - id: two
          input: {}
          assert:
            - {type: status, value: executed}
            - {type: equals, path: action, value: 3}
        """,
    )
    assert [line.split(": ")[1] for line in found] == [
        "cases[0] (one).expect.acton",
        "cases[1] (two).assert[1]",
    ]
    assert found[1].startswith(f"{tmp_path / 'triage.yaml'}:10:")


def test_values_outside_an_enum_cannot_pass_and_are_flagged(tmp_path):
    schema = {
        "type": "object",
        "properties": {
            "action": {"type": "string"},
            "confidence": {"type": "number"},
            "priority": {"enum": ["low", "high"]},
            "count": {"type": "integer"},
        },
    }
    found = problems(
        tmp_path,
        Parts(contract(), schema),
        """\
        - id: e
          input: {}
          assert:
            - {type: equals, path: priority, value: urgent}
            - {type: one_of, path: priority, values: [low, high]}
            - {type: equals, path: count, value: 3.0}
            - {type: equals, path: count, value: true}
            - {type: range, path: priority, min: 1}
        """,
    )
    assert [f.split(": ", 2)[2] for f in found] == [
        "'urgent' is not a value 'priority' can take; use one of 'low', 'high'",
        "True is a boolean but 'count' is an integer; use a value of its type",
        "range on 'priority', which is a string; range needs a number field",
    ]


# --------------------------------------------------------------------- schema walking
NESTED = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "action": {"type": "string"},
        "refund": {"$ref": "#/$defs/Refund"},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}},
        "pair": {"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]},
        "meta": {"type": "object"},
        "scores": {"type": "object", "additionalProperties": {"type": "number"}},
        "loop": {"$ref": "#/$defs/Loop"},
    },
    "$defs": {
        "Refund": {
            "type": "object",
            "properties": {"amount": {"type": "number"}, "currency": {"const": "EUR"}},
        },
        "Item": {"type": "object", "properties": {"sku": {"type": "string"}}},
        "Loop": {"$ref": "#/$defs/Loop"},
    },
}


@pytest.mark.parametrize(
    ("path", "types"),
    [
        ("refund.amount", {"number"}),
        ("refund.currency", {"string"}),
        ("note", {"string", "null"}),
        ("items.0.sku", {"string"}),
        ("pair.1", {"integer", "number"}),
        ("meta.anything.below", None),  # an object without properties accepts any path
        ("scores.math", {"number"}),
        ("loop.x", None),  # a $ref cycle stops, it does not recurse forever
    ],
)
def test_paths_resolve_through_refs_unions_and_arrays(path, types):
    found = resolve_path(NESTED, path)
    assert isinstance(found, SchemaField)
    assert found.types == (None if types is None else frozenset(types))


@pytest.mark.parametrize(
    ("path", "at"),
    [
        ("refund.amont", "refund.amont"),
        ("items.sku", "items.sku"),  # an array is indexed: items.0.sku
        ("action.length", "action.length"),
        ("nope.deeper", "nope"),
    ],
)
def test_paths_outside_the_schema_say_where_they_leave_it(path, at):
    found = resolve_path(NESTED, path)
    assert isinstance(found, Unresolved) and found.at == at


def test_a_nested_typo_gets_a_dotted_suggestion(tmp_path):
    found = problems(
        tmp_path,
        Parts(contract(), NESTED),
        """\
        - id: n
          input: {}
          assert: [{type: equals, path: refund.amont, value: 1}]
        """,
    )
    assert found[0].endswith(
        "'refund.amont' is not in the decision schema ('refund' has no field 'amont'); "
        "did you mean 'refund.amount'? (fields: amount, currency)"
    )


def test_a_schema_without_properties_accepts_every_path(tmp_path):
    found = problems(
        tmp_path,
        Parts(contract(), {"type": "object"}),
        """\
        - id: open
          input: {}
          assert: [{type: range, path: anything.at.all, max: 3}]
        """,
    )
    assert found == []


def test_a_combinatorial_self_referencing_schema_is_resolved_quickly():
    # every level branches four ways back to the root: unbounded, this is 4**depth work
    schema = {
        "anyOf": [{"$ref": "#"}, {"$ref": "#"}, {"$ref": "#"}, {"$ref": "#"}],
        "properties": {"x": {"anyOf": [{"$ref": "#"}] * 4}},
    }
    started = time.perf_counter()
    found = resolve_path(schema, ".".join(["x"] * 12))
    assert time.perf_counter() - started < 1.0
    assert isinstance(found, SchemaField)


def test_hundreds_of_problems_are_placed_in_one_read_of_the_file(tmp_path, triage):
    body = "".join(f"- id: c{i}\n  input: {{}}\n  expect: {{acton: refund}}\n" for i in range(300))
    started = time.perf_counter()
    found = problems(tmp_path, triage, body)
    assert time.perf_counter() - started < 2.0  # one parse per problem took 10 s
    assert len(found) == 300
    path = tmp_path / "triage.yaml"
    for i in (0, 150, 299):
        line = field_line(path, ("cases", i, "expect", "acton"))
        assert found[i].startswith(f"{path}:{line}: cases[{i}] (c{i}).expect.acton: ")


def test_routes_of_the_contract_file_stay_known_when_a_run_narrows_them(tmp_path, triage):
    # `mir eval --provider llama` loads the agent with its llama routes only
    llama_only = [r for r in triage.contract.routes if r.provider == "llama"]
    narrowed = replace(triage, contract=triage.contract.model_copy(update={"routes": llama_only}))
    body = """\
        - id: r
          input: {}
          assert:
            - {type: route, value: remote, used: false}
            - {type: route, value: scripted, used: false}
            - {type: route, value: nowhere}
        """
    found = problems(tmp_path, narrowed, body)
    assert len(found) == 1 and "unknown route 'nowhere'" in found[0]


def test_judge_assertions_are_checked_too(tmp_path, triage):
    body = """\
        - id: j
          input: {}
          assert:
            - {type: rubric, rubric: polite, path: reasn}
            - {type: pairwise, criteria: better, reference: {action: refnd}}
        """
    found = [line.split(": ", 2)[2] for line in problems(tmp_path, triage, body)]
    assert found == [
        "'reasn' is not in the decision schema; did you mean 'reason'? "
        "(fields: action, confidence, amount, reason)",
        "unknown action 'refnd'; did you mean 'refund'? "
        "(actions in the contract: deny, escalate, refund)",
    ]


def test_a_reason_assertion_may_name_what_the_contracts_review_rules_give(tmp_path, triage):
    review = {
        "always": ["deny"],
        "when": [
            {"name": "big", "conditions": [{"field": "action", "op": "==", "value": "refund"}]}
        ],
    }
    parts = Parts(
        contract=AgentContract.model_validate(
            {**triage.contract.model_dump(exclude_none=True), "review": review}
        ),
        decision_schema=triage.decision_schema,
    )
    found = problems(
        tmp_path,
        parts,
        """\
        - id: rules
          input: {order_id: A1, amount: 10, message: hi}
          expect: {status: pending_review}
          assert:
            - {type: reason, value: "review_rule:big"}
            - {type: reason, value: "review_always:deny", present: false}
            - {type: reason, value: "review_rule:bigg"}
            - {type: reason, value: "review_risk:1.00/1.00"}
        """,
    )
    file = tmp_path / "triage.yaml"
    assert len(found) == 2
    assert found[0] == (
        f"{file}:9: cases[0] (rules).assert[2]: unknown reason code 'review_rule:bigg'; "
        "did you mean 'review_rule:big'?"
    )
    # no risk score in this contract: no review_risk reason either
    assert found[1].startswith(
        f"{file}:10: cases[0] (rules).assert[3]: unknown reason code 'review_risk:1.00/1.00'"
    )
