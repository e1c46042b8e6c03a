"""How one trace event becomes one line of a segment file, hash-chained to the last.

A segment line is a JSON object::

    {"v":1,"n":7,"hash":"<sha256>","event_id":"...",...,"data":{...}}

* ``v`` -- the line format version: compaction upgrades older lines (missing fields
  load as their defaults), so a segment written by an older mir is never stranded;
* ``n`` -- the line's position in its segment; ``hash = sha256(prev + "\\n" + body)``
  where ``prev`` is the hash of line ``n-1`` (a hash of the segment's name for line 0)
  and ``body`` the canonical JSON of the event's stored fields (model order). ``prev`` is
  not stored: it is the previous line's hash, so a removed line still breaks the next
  link. Editing, removing or moving a line breaks the chain (``mir traces verify``);
* the database keeps ``data`` as the exact JSON text of the line (DuckDB reads an
  object into a VARCHAR column verbatim), so the hash can be recomputed from a row.

Everything here is redacted before it is hashed: the chain covers what is on disk.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from mir.traces.domain import TraceEvent
from mir.traces.redaction import Redactor

LINE_FORMAT = 1
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
CHAIN_FIELDS: dict[str, str] = {"v": "INTEGER", "n": "BIGINT", "hash": "VARCHAR"}


_TEXT_FIELDS = (
    "event_id",
    "flow_id",
    "agent",
    "provider",
    "model",
    "prompt_hash",
    "prompt_version",
)
_STORED = frozenset(EVENT_FIELDS)


def instant_from_epoch_us(micros: int) -> datetime:
    # Exact integer arithmetic: a float timestamp would lose the last microsecond.
    return _EPOCH + timedelta(microseconds=micros)


@cache
def _stored_fields() -> frozenset[str] | None:
    # ``include`` costs ~1 us an event; only pass it when TraceEvent has fields that are
    # not stored (a newer model on an older store format).
    return None if set(TraceEvent.model_fields) == _STORED else _STORED


def canonical_body(event: TraceEvent) -> str:
    """The hashed text of an event: pydantic's JSON of the stored fields, in model order.

    Serialized by pydantic-core (Rust, the hot path's biggest cost otherwise). The
    database keeps ``data`` as this exact JSON text and ``at`` to the microsecond, so
    rebuilding the event from a stored row and calling this again gives the same bytes.
    """
    return event.model_dump_json(include=_stored_fields())


def stored_body(event: TraceEvent, redactor: Redactor) -> str:
    """The body written to disk: timestamps in UTC, every secret replaced."""
    return redacted_body(event, redactor)[0]


def redacted_body(event: TraceEvent, redactor: Redactor) -> tuple[str, bool]:
    """``stored_body``, and whether something secret-shaped was looked for in it (the
    stored line then differs from the event as given, or may)."""
    at = event.at
    if at.tzinfo is not UTC:  # one form per instant, so the stored row re-hashes equal
        event = event.model_copy(update={"at": at.astimezone(UTC)})
    body = canonical_body(event)
    # A cheap substring pre-check over the whole line; the walk that replaces secrets
    # runs only when something looks like one.
    if not redactor.might_contain(body):
        return body, False
    update: dict[str, Any] = {
        name: redactor.text(value)
        for name in _TEXT_FIELDS
        if isinstance(value := getattr(event, name), str)
    }
    update["reasons"] = tuple(redactor.text(r) for r in event.reasons)
    update["data"] = redactor.value(json.loads(body)["data"])  # JSON-native already
    return canonical_body(event.model_copy(update=update)), True


def genesis(segment: str) -> str:
    """The ``prev`` of a segment's first line: ties every line to its segment's name."""
    return hashlib.sha256(f"mir-trace-segment:{segment}".encode()).hexdigest()


def link(prev: str, body: str) -> str:
    return hashlib.sha256(f"{prev}\n{body}".encode()).hexdigest()


def encode_line(n: int, digest: str, body: str) -> str:
    # Splices the chain fields in front of the already serialized body: one json.dumps
    # per event on the hot path instead of two.
    return f'{{"v":{LINE_FORMAT},"n":{n},"hash":"{digest}",{body[1:]}\n'


def stored_row_body(fields: dict[str, Any]) -> str:
    """The canonical body of a stored row, for re-hashing: the same bytes that were
    hashed when it was written. ``data`` is spliced in as the exact stored JSON text,
    and the row is not validated (a tampered value must change the hash, not raise)."""
    values = dict(fields)
    values["at"] = instant_from_epoch_us(values["at"])
    values["reasons"] = tuple(values.get("reasons") or ())
    data = values.pop("data") or "{}"
    head = TraceEvent.model_construct(**values).model_dump_json(
        include=_STORED - {"data"}, warnings=False
    )
    return f'{head[:-1]},"data":{data}}}'


def event_from_fields(fields: dict[str, Any]) -> TraceEvent:
    """Rebuild the event from stored columns (``at`` as epoch microseconds)."""
    values = dict(fields)
    values["at"] = instant_from_epoch_us(values["at"])
    values["data"] = json.loads(values["data"]) if values.get("data") else {}
    values["reasons"] = tuple(values.get("reasons") or ())
    return TraceEvent.model_validate(values)


def with_instants(row: dict[str, Any]) -> dict[str, Any]:
    """A flow summary's row with its epoch-microsecond times as datetimes."""
    return {
        **row,
        "started_at": instant_from_epoch_us(row["started_at"]),
        "updated_at": instant_from_epoch_us(row["updated_at"]),
    }
