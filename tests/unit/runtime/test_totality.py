"""The pipeline is total: every model output and every caller input ends in a record.

Property-based attacks (hypothesis) on a whole DecisionFlow with a real jinja2 template
that does arithmetic on the input, an input schema and parameter bindings: arbitrary
JSON values, mutated valid decisions and arbitrary byte strings as model output;
arbitrary (and hostile) inputs. Each run asserts: no exception, the executor ran only
with a decision that passes the contract (re-checked here), exactly one `final` event.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field

from mir.runtime.decision_schema import pydantic_schema_check, schema_fields
from mir.runtime.flow import DecisionFlow
from mir.runtime.integrity import Circumstances, IntegrityCheck
from mir.runtime.records import DecisionRecord
from mir.runtime.schema_adapters import json_schema_check
from mir.runtime.templates import JinjaPromptRenderer
from tests.unit.runtime.fakes import FakeProvider, World, harness

# Seconds in the suite; MIR_PROPERTY_EXAMPLES=5000 for a deeper attack run.
PROPERTY = settings(
    max_examples=int(os.environ.get("MIR_PROPERTY_EXAMPLES", "120")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


class Payout(BaseModel):
    model_config = ConfigDict(extra="forbid")

    action: Literal["refund", "deny", "escalate"]
    confidence: float
    order_id: str = Field(max_length=20)
    amount: float = Field(ge=0)
    reason: str = Field(max_length=200)


INPUT_SCHEMA = {
    "type": "object",
    "required": ["order_id", "amount", "message"],
    "properties": {
        "order_id": {"type": "string", "maxLength": 20},
        "amount": {"type": "number"},
        "message": {"type": "string", "maxLength": 500},
    },
}
ACTIONS = {
    "refund": {
        "executor": "adapters:refund",
        "limits": {"amount": {"minimum": 0, "maximum": 500}},
        "bindings": {"order_id": "$input.order_id", "amount": {"maximum": "$context.total"}},
    },
    "deny": {"executor": "adapters:deny", "bindings": {"order_id": "$input.order_id"}},
    "escalate": {"executor": "adapters:escalate"},
}
FALLBACK = {
    "default": {
        "action": "escalate",
        "params": {"order_id": "$input.order_id", "amount": 0, "reason": "fallback"},
    }
}
INPUT = {"order_id": "A-1", "amount": 40, "message": "arrived broken"}
GOOD = {"action": "refund", "confidence": 0.9, "order_id": "A-1", "amount": 40, "reason": "ok"}
# Arithmetic on the input, and the untrusted-data block: both must survive any input.
TEMPLATE = "{{ mission }} asks {{ input.amount + 1 }} EUR\n{{ data }}\n{{ errors | join(' ') }}"


def build(tmp_path: Path, outputs: list[str], *, schema_checked_input: bool = True):
    h = harness(outputs, world=World(state={"total": 80}), fallback=FALLBACK, actions=ACTIONS)
    template = tmp_path / "t.j2"
    template.write_text(TEMPLATE)
    schema = Payout.model_json_schema()
    integrity = IntegrityCheck(
        contract=h.parts.contract,
        schema_check=pydantic_schema_check(Payout),
        schema_fields=schema_fields(schema),
        input_check=json_schema_check(INPUT_SCHEMA, "t") if schema_checked_input else None,
    )
    h.parts = replace(
        h.parts,
        integrity=integrity,
        decision_schema=schema,
        prompt=JinjaPromptRenderer(template, "1"),
    )
    return h


def decide(h, input: Any = INPUT) -> DecisionRecord:
    # The one assertion every property shares: whatever came in, a record came out.
    record = DecisionFlow(h.parts, h.deps).decide(input)
    assert isinstance(record, DecisionRecord)
    events = h.traces.flow(record.flow_id)
    finals = [e for e in events if e.step == "final"]
    if record.status == "pending_review":  # waits for a reviewer: its final comes later
        assert finals == [] and events[-1].status == "pending_review"
    else:
        assert len(finals) == 1 and finals[0].status == record.status
    assert {e.flow_id for e in h.traces.events} == {record.flow_id}
    for action, params, _key in h.executions.calls:
        # Executed means: the decision it came from passes the contract, re-checked here.
        assert record.executed and record.decision is not None
        assert record.action == action
        assert {k: v for k, v in record.decision.items() if k not in ("action", "confidence")} == (
            params
        )
        when = Circumstances(
            role="agent",
            created_at=h.clock.now,
            now=h.clock.now,
            input=input,
            context={"total": 80},
        )
        assert h.parts.integrity.check_decision(record.decision, when).ok
    assert len(h.executions.calls) <= 1
    return record


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=20,
)

# Shapes the issue found crashing the runtime, as raw text.
hostile_texts = st.one_of(
    st.integers(300, 6000).map(lambda n: json.dumps(GOOD).replace("40", "1" + "0" * n)),
    st.integers(30, 2000).map(
        lambda n: json.dumps({**GOOD, "reason": "R"}).replace('"R"', "[" * n + "]" * n)
    ),
    st.integers(30, 2000).map(lambda n: "[" * n),
    st.just(json.dumps({k: v for k, v in GOOD.items() if k != "action"})),
    st.just(json.dumps(GOOD).replace("0.9", "1e400")),
    st.just(json.dumps({**GOOD, "order_id": "A-2"})),  # another customer's order
    st.just(json.dumps({**GOOD, "amount": 81})),  # more than the world allows
)


_field = st.sampled_from(sorted(GOOD))
mutated = st.one_of(
    st.tuples(_field, json_values).map(lambda fv: json.dumps({**GOOD, fv[0]: fv[1]})),
    _field.map(lambda f: json.dumps({k: v for k, v in GOOD.items() if k != f})),
    st.tuples(st.text(max_size=8), json_values).map(lambda kv: json.dumps({**GOOD, kv[0]: kv[1]})),
    st.integers(0, len(json.dumps(GOOD))).map(lambda n: json.dumps(GOOD)[:n]),
)


@PROPERTY
@given(outputs=st.lists(json_values.map(json.dumps), min_size=1, max_size=3))
def test_any_json_value_as_model_output_ends_in_a_record(tmp_path_factory, outputs):
    decide(build(tmp_path_factory.mktemp("t"), outputs))


@PROPERTY
@given(outputs=st.lists(mutated | hostile_texts, min_size=1, max_size=3))
def test_mutated_and_hostile_decisions_never_execute_invalid(tmp_path_factory, outputs):
    record = decide(build(tmp_path_factory.mktemp("t"), outputs))
    if record.executed and record.provider != "rules":
        assert record.decision is not None and record.decision["order_id"] == "A-1"
        assert record.decision["amount"] <= 80


@PROPERTY
@given(outputs=st.lists(st.binary(max_size=200), min_size=1, max_size=3))
def test_arbitrary_bytes_as_model_output_end_in_a_record(tmp_path_factory, outputs):
    texts = [raw.decode("utf-8", "surrogateescape") for raw in outputs]
    decide(build(tmp_path_factory.mktemp("t"), texts))


hostile_inputs = st.one_of(
    st.dictionaries(st.text(max_size=10), json_values, max_size=5),
    st.fixed_dictionaries(
        {"order_id": st.text(max_size=30), "amount": json_values, "message": st.text(max_size=40)}
    ),
    st.integers(30, 3000).map(lambda n: {**INPUT, "message": _deep(n)}),
    st.integers(39, 500).map(lambda n: {**INPUT, "amount": 10**n}),
    json_values,  # not even a mapping
)


def _deep(n: int) -> Any:
    value: Any = []
    for _ in range(n):
        value = [value]
    return value


@PROPERTY
@given(input=hostile_inputs, schema_checked=st.booleans())
def test_any_caller_input_ends_in_a_record_and_never_a_crash(
    tmp_path_factory, input, schema_checked
):
    h = build(
        tmp_path_factory.mktemp("t"), [json.dumps(GOOD)] * 3, schema_checked_input=schema_checked
    )
    record = decide(h, input)
    if record.status == "rejected":
        assert record.reasons == ["input_invalid"] and not record.executed


def test_a_string_where_the_template_does_arithmetic_is_input_invalid(tmp_path: Path):
    h = build(tmp_path, [json.dumps(GOOD)], schema_checked_input=False)
    record = decide(h, {**INPUT, "amount": "forty"})
    assert (record.status, record.reasons) == ("rejected", ["input_invalid"])
    assert h.providers["local"].requests == []  # the model never saw it
    validate = [e for e in h.traces.flow(record.flow_id) if e.step == "validate"]
    assert "TypeError" in validate[0].data["problems"][0]


@pytest.mark.parametrize(
    ("input", "why"),
    [
        ({}, "order_id"),
        ({**INPUT, "amount": 10**400}, "integer of"),
        ({**INPUT, "message": _deep(500)}, "nested deeper"),
        ({**INPUT, "amount": "40"}, "amount"),
    ],
)
def test_an_input_the_schema_refuses_is_rejected_before_the_model(tmp_path, input, why):
    h = build(tmp_path, [json.dumps(GOOD)])
    record = decide(h, input)
    assert (record.status, record.reasons) == ("rejected", ["input_invalid"])
    assert h.providers["local"].requests == []
    events = h.traces.flow(record.flow_id)
    assert [e.step for e in events] == ["snapshot", "validate", "final"]
    assert why in " ".join(events[1].data["problems"])


def test_a_decision_for_another_order_is_refused_by_the_binding(tmp_path: Path):
    other = json.dumps({**GOOD, "order_id": "A-2"})
    h = build(tmp_path, [other, other, other])
    record = decide(h)
    assert "binding_violated" in record.reasons
    assert record.status == "fallback" and record.action == "escalate"
    assert all(call[0] != "refund" for call in h.executions.calls)


def test_a_context_loader_that_raises_aborts_with_a_trace(tmp_path: Path):
    h = build(tmp_path, [json.dumps(GOOD)])

    def broken(_input):
        raise ConnectionError("orders database down")

    h.parts = replace(h.parts, context_loader=broken)
    record = decide(h)
    assert (record.status, record.reasons) == ("aborted", ["context_unavailable"])
    snapshot = h.traces.flow(record.flow_id)[0]
    assert "ConnectionError: orders database down" in snapshot.data["error"]
    assert h.providers["local"].requests == []


def test_the_snapshot_is_written_before_the_model_is_called(tmp_path: Path):
    h = build(tmp_path, [])
    seen: list[list[str]] = []
    provider: FakeProvider = h.providers["local"]

    def watching(request):
        seen.append([e.step for e in h.traces.events])  # what the store holds right now
        return FakeProvider("local", [json.dumps(GOOD)]).complete(request)

    provider.complete = watching  # type: ignore[method-assign]
    decide(h)
    assert seen == [["snapshot"]]
