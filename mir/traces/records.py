"""How one trace event becomes one line of a segment file, hash-chained to the last.

A segment line is a JSON object::

    {"v":1,"n":7,"prev":"<sha256>","hash":"<sha256>","event_id":...,"data":"{...}"}

* ``v`` -- the line format version: compaction upgrades older lines (missing fields
  load as their defaults), so a segment written by an older mir is never stranded;
* ``n`` -- the line's position in its segment; ``prev`` -- the hash of line ``n-1``
  (of the segment's name for line 0); ``hash = sha256(prev + "\\n" + body)``, where
  ``body`` is the canonical JSON of the event's fields in a fixed order. Editing,
  removing or moving a line breaks the chain, which ``mir traces verify`` detects;
* ``data`` is stored as JSON *text*, so its bytes survive the database unchanged and
  the hash can be recomputed from a stored row.

Everything here is redacted before it is hashed: the chain covers what is on disk.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import TypeAdapter

from mir.traces.domain import TraceEvent
from mir.traces.redaction import Redactor

LINE_FORMAT = 1
_SEPARATORS = (",", ":")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# Column name -> DuckDB type, in the canonical (hashed) order.
EVENT_FIELDS: dict[str, str] = {
    "event_id": "VARCHAR",
    "flow_id": "VARCHAR",
    "seq": "BIGINT",
    "step": "VARCHAR",
    "agent": "VARCHAR",
    "at": "TIMESTAMPTZ",
    "status": "VARCHAR",
    "reasons": "VARCHAR[]",
    "provider": "VARCHAR",
    "model": "VARCHAR",
    "prompt_hash": "VARCHAR",
    "prompt_version": "VARCHAR",
    "prompt_tokens": "BIGINT",
    "completion_tokens": "BIGINT",
    "cost_usd": "DOUBLE",
    "latency_ms": "DOUBLE",
    "data": "VARCHAR",
}
CHAIN_FIELDS: dict[str, str] = {"v": "INTEGER", "n": "BIGINT", "prev": "VARCHAR", "hash": "VARCHAR"}
_TEXT_FIELDS = (
    "event_id",
    "flow_id",
    "agent",
    "provider",
    "model",
    "prompt_hash",
    "prompt_version",
)


def format_instant(moment: datetime) -> str:
    """The one textual form of a timestamp that is hashed: UTC, microseconds."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def instant_from_epoch_us(micros: int) -> datetime:
    # Exact integer arithmetic: a float timestamp would lose the last microsecond.
    return _EPOCH + timedelta(microseconds=micros)


def _jsonable(value: Any) -> Any:
    # Only for values json cannot encode itself (datetime, Decimal, models): rare.
    return TypeAdapter(type(value)).dump_python(value, mode="json")


def event_fields(event: TraceEvent, redactor: Redactor) -> dict[str, Any]:
    """The event's stored fields (canonical order), with every secret replaced."""
    data_text = json.dumps(
        event.data, ensure_ascii=False, separators=_SEPARATORS, default=_jsonable
    )
    if redactor.might_contain(data_text):
        data_text = json.dumps(
            redactor.value(json.loads(data_text)), ensure_ascii=False, separators=_SEPARATORS
        )
    fields: dict[str, Any] = {
        "event_id": event.event_id,
        "flow_id": event.flow_id,
        "seq": event.seq,
        "step": event.step,
        "agent": event.agent,
        "at": format_instant(event.at),
        "status": event.status,
        "reasons": list(event.reasons),
        "provider": event.provider,
        "model": event.model,
        "prompt_hash": event.prompt_hash,
        "prompt_version": event.prompt_version,
        "prompt_tokens": event.prompt_tokens,
        "completion_tokens": event.completion_tokens,
        "cost_usd": float(event.cost_usd),
        "latency_ms": float(event.latency_ms),
        "data": data_text,
    }
    texts = [fields[name] or "" for name in _TEXT_FIELDS] + fields["reasons"]
    if redactor.might_contain("\x00".join(texts)):
        for name in _TEXT_FIELDS:
            if fields[name] is not None:
                fields[name] = redactor.text(fields[name])
        fields["reasons"] = [redactor.text(r) for r in fields["reasons"]]
    return fields


def body_text(fields: dict[str, Any]) -> str:
    return json.dumps(fields, ensure_ascii=False, separators=_SEPARATORS)


def genesis(segment: str) -> str:
    """The ``prev`` of a segment's first line: ties every line to its segment's name."""
    return hashlib.sha256(f"mir-trace-segment:{segment}".encode()).hexdigest()


def link(prev: str, body: str) -> str:
    return hashlib.sha256(f"{prev}\n{body}".encode()).hexdigest()


def encode_line(n: int, prev: str, digest: str, body: str) -> str:
    # Splices the chain fields in front of the already serialized body: one json.dumps
    # per event on the hot path instead of two.
    return f'{{"v":{LINE_FORMAT},"n":{n},"prev":"{prev}","hash":"{digest}",{body[1:]}\n'


def event_from_fields(fields: dict[str, Any]) -> TraceEvent:
    """Rebuild the event from stored fields (``at`` as epoch microseconds or ISO text)."""
    values = dict(fields)
    at = values["at"]
    values["at"] = instant_from_epoch_us(at) if isinstance(at, int) else at
    values["data"] = json.loads(values["data"]) if values.get("data") else {}
    values["reasons"] = tuple(values.get("reasons") or ())
    return TraceEvent.model_validate(values)
