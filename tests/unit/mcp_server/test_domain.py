"""The MCP server's pure parts: the address, the idempotency key and its flow id, the
tool schema, and a flow's outcome read from its events."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from mir.errors import UsageError
from mir.mcp_server import keyed_flow_id, outcome_of, parse_address
from mir.mcp_server.domain import ToolRefusal, answer_of, split_arguments, tool_schema


@pytest.mark.parametrize(
    ("text", "expected"),
    [("127.0.0.1:8765", ("127.0.0.1", 8765)), ("localhost:1", ("localhost", 1)),
     ("[::1]:9000", ("::1", 9000))],
)  # fmt: skip
def test_an_address_is_host_and_port(text: str, expected: tuple[str, int]):
    assert parse_address(text) == expected


@pytest.mark.parametrize("text", ["8765", "localhost", ":80", "host:0", "host:65536", "h:x"])
def test_a_bad_address_is_a_usage_error(text: str):
    with pytest.raises(UsageError, match="--http"):
        parse_address(text)


def test_a_key_names_one_flow_per_agent_in_every_process():
    flow = keyed_flow_id("refunds.triage", "k")
    assert flow == keyed_flow_id("refunds.triage", "k")
    assert flow != keyed_flow_id("refunds.other", "k") != keyed_flow_id("refunds.triage", "k2")
    assert flow.startswith("mcp") and 8 <= len(flow) <= 64 and flow.isalnum()


def test_the_tool_schema_adds_the_key_unless_the_input_has_that_field():
    schema, added = tool_schema({"type": "object", "properties": {"id": {"type": "string"}},
                                 "additionalProperties": False})  # fmt: skip
    assert added and set(schema["properties"]) == {"id", "idempotency_key"}
    own, added = tool_schema({"type": "object", "properties": {"idempotency_key": {}}})
    assert not added and own["properties"] == {"idempotency_key": {}}
    assert tool_schema(None)[0]["type"] == "object"


def test_the_key_comes_from_the_argument_or_the_meta():
    assert split_arguments({"a": 1, "idempotency_key": "k"}, None, key_argument=True) == (
        {"a": 1},
        "k",
    )
    assert split_arguments({"a": 1}, {"idempotency_key": "m"}, key_argument=True)[1] == "m"
    # the agent's own field of that name stays input; the key is then the meta's only
    own = split_arguments({"idempotency_key": "x"}, None, key_argument=False)
    assert own == ({"idempotency_key": "x"}, None)
    refused = [
        ({"idempotency_key": "a"}, {"idempotency_key": "b"}),
        ({"idempotency_key": 7}, None),
        ({"idempotency_key": " "}, None),
    ]
    for arguments, meta in refused:
        with pytest.raises(ToolRefusal, match="idempotency_key"):
            split_arguments(arguments, meta, key_argument=True)


@dataclass
class Event:
    step: str
    status: str | None = None
    reasons: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)
    flow_id: str = "f1"
    agent: str = "refunds.triage"
    provider: str | None = "llama"
    model: str | None = "default"


def test_an_outcome_is_the_final_record_then_the_waiting_decision_then_cut_off():
    assert outcome_of([]) is None
    record = {"flow_id": "f1", "agent": "refunds.triage", "status": "executed", "action": "x"}
    final = outcome_of([Event("snapshot"), Event("final", "executed", data={"record": record})])
    assert final is not None and final.finished and final.record == record

    decision = {"verb": "refund", "amount": 149}
    waiting = [Event("snapshot"), Event("route", "pending_review", ["low_confidence"],
                                        {"decision": decision})]  # fmt: skip
    pending = outcome_of(waiting, "verb")
    assert pending is not None and not pending.finished
    assert pending.record["status"] == "pending_review" and pending.record["action"] == "refund"
    answer = answer_of(pending)
    assert not answer.is_error and answer.structured is not None and answer.structured["pending"]
    assert any("flow_status" in line for line in answer.lines)

    cut = outcome_of([Event("snapshot"), Event("infer")])
    assert cut is not None and cut.record["status"] == "interrupted"
    assert answer_of(cut).is_error
    unknown = outcome_of([Event("snapshot")], cut="unfinished")
    assert unknown is not None and not answer_of(unknown).is_error
