"""What the MCP server says, without the SDK: tool shapes, the idempotency key and the
flow id derived from it, a flow's outcome read from its events, and that outcome as
structured content and as text lines."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mir.errors import UsageError

KEY_ARGUMENT = "idempotency_key"  # the optional tool argument
KEY_META = "idempotency_key"  # the same key in the request's ``_meta``
FLOW_STATUS = "flow_status"  # agents are named ``capability.agent``: never this
MAX_KEY_CHARS = 200
KEY_HELP = (
    "Optional. Calls with the same key decide once: a retry (also concurrent, also after "
    "a server restart) returns the first call's outcome and executes nothing again."
)
FLOW_STATUS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"flow_id": {"type": "string", "description": "The flow id a call returned."}},
    "required": ["flow_id"],
}
FLOW_STATUS_HELP = (
    "The current outcome of a decision flow (poll a flow that waits for human review): "
    "its status, action, reasons, and whether it is finished."
)


class ToolRefusal(Exception):
    """A call the server answers with a tool error (``isError``) of one line."""


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]


@dataclass(frozen=True)
class ToolAnswer:
    """A tool call's result: structured content (None for an error) and text lines."""

    lines: list[str]
    structured: dict[str, Any] | None = None
    is_error: bool = False

    @classmethod
    def error(cls, line: str) -> ToolAnswer:
        return cls(lines=[line], is_error=True)


@dataclass
class Outcome:
    """A flow's record (``DecisionRecord`` as JSON) and what the server adds to it."""

    record: dict[str, Any]
    finished: bool
    replayed: bool = False
    key: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def parse_address(text: str) -> tuple[str, int]:
    """``--http HOST:PORT`` as (host, port); a usage error in one line otherwise."""
    host, sep, port = text.strip().rpartition(":")
    host = host.strip("[]")
    hint = "e.g. --http 127.0.0.1:8765"
    if not sep or not host or not (port.isascii() and port.isdigit()):
        raise UsageError(f"--http {text!r}: not HOST:PORT", hint=hint)
    number = int(port)
    if not 0 < number < 65536:
        raise UsageError(f"--http {text!r}: port {number} is not 1-65535", hint=hint)
    return host, number


def tool_schema(input_schema: Mapping[str, Any] | None) -> tuple[dict[str, Any], bool]:
    """The tool's input schema (the agent's input schema, plus ``idempotency_key`` unless
    the agent's input has a field of that name) and whether the argument was added."""
    schema = dict(input_schema or {"type": "object"})
    schema.setdefault("type", "object")
    properties = dict(schema.get("properties") or {})
    if KEY_ARGUMENT in properties:
        return schema, False
    properties[KEY_ARGUMENT] = {
        "type": "string",
        "maxLength": MAX_KEY_CHARS,
        "description": KEY_HELP,
    }
    schema["properties"] = properties
    return schema, True


def split_arguments(
    arguments: Mapping[str, Any], meta: Mapping[str, Any] | None, *, key_argument: bool
) -> tuple[dict[str, Any], str | None]:
    """(the agent's input, the idempotency key or None): the key is the argument (when the
    tool added it) or ``_meta.idempotency_key``; both given must agree."""
    data = dict(arguments)
    given = data.pop(KEY_ARGUMENT, None) if key_argument else None
    in_meta = (meta or {}).get(KEY_META)
    if given is not None and in_meta is not None and given != in_meta:
        raise ToolRefusal("idempotency_key: the argument and _meta name different keys")
    key = given if given is not None else in_meta
    if key is None:
        return data, None
    if not isinstance(key, str) or not key.strip() or len(key) > MAX_KEY_CHARS:
        raise ToolRefusal(f"idempotency_key: a non-empty string of at most {MAX_KEY_CHARS} chars")
    return data, key


def shown(value: object, limit: int = 80) -> str:
    """A caller's value quoted for a one-line error, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} chars)"


def keyed_flow_id(agent: str, key: str) -> str:
    """The flow id a key names for an agent: the same in every process, every restart."""
    return "mcp" + hashlib.sha256(f"{agent}\n{key}".encode()).hexdigest()[:32]


def input_digest(data: Mapping[str, Any]) -> str:
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def outcome_of(
    events: Sequence[Any], action_field: str = "action", *, cut: str = "interrupted"
) -> Outcome | None:
    """A flow's outcome from its events (in order): the final event's record; else the
    decision waiting for review; else ``cut``: ``interrupted`` for a flow no call is
    deciding (cut off mid-decision), ``unfinished`` where that is not known."""
    if not events:
        return None
    finals = [e for e in events if e.step == "final"]
    if finals and isinstance(finals[-1].data.get("record"), dict):
        return Outcome(record=dict(finals[-1].data["record"]), finished=True)
    first = events[0]
    record: dict[str, Any] = {"flow_id": first.flow_id, "agent": first.agent}
    waiting = [e for e in events if e.status == "pending_review"]
    if waiting:
        decision = waiting[-1].data.get("decision")
        decision = decision if isinstance(decision, dict) else None
        action = decision.get(action_field) if decision else None
        record |= {"status": "pending_review", "decision": decision, "action": action,
                   "executed": False, "reasons": list(waiting[-1].reasons),
                   "provider": waiting[-1].provider, "model": waiting[-1].model}  # fmt: skip
        return Outcome(record=record, finished=False)
    record |= {"status": cut, "action": None, "executed": False, "reasons": []}
    return Outcome(record=record, finished=False)


def answer_of(outcome: Outcome) -> ToolAnswer:
    """The tool result of an outcome; a flow cut off mid-decision is a tool error."""
    record = outcome.record
    status = record.get("status")
    structured = {
        **record,
        "pending": status == "pending_review",
        "finished": outcome.finished,
        "replayed": outcome.replayed,
        **({"idempotency_key": outcome.key} if outcome.key is not None else {}),
        **outcome.extra,
    }
    lines = outcome_lines(structured)
    return ToolAnswer(lines=lines, structured=structured, is_error=status == "interrupted")


def outcome_lines(shown: Mapping[str, Any]) -> list[str]:
    flow, status = shown.get("flow_id"), shown.get("status")
    lines = [f"{shown.get('agent')}  flow {flow}: {status}"]
    lines.append(f"action: {shown.get('action') or '-'} (executed: {shown.get('executed')})")
    if shown.get("decision") is not None:
        lines.append(f"decision: {json.dumps(shown['decision'], ensure_ascii=False)}")
    lines.append(f"reasons: {', '.join(map(str, shown.get('reasons') or [])) or '-'}")
    if status == "pending_review":
        lines.append(
            f"next: waiting for human review (mir approve {flow} | mir reject {flow}); "
            f"poll it with the {FLOW_STATUS} tool"
        )
    if status == "interrupted":
        lines.append(
            f"the flow was cut off mid-decision by an earlier server and is not decided "
            f"again (see mir traces show {flow}); use a new idempotency key"
        )
    if shown.get("replayed"):
        lines.append("replayed: the outcome of an earlier call with this key; nothing ran again")
    return lines
