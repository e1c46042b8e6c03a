"""Trace events: the append-only record of every decision.

A decision flow is a sequence of events sharing one ``flow_id``. Events are never
updated: resuming a flow (``mir approve``) appends more events, and the flow's current
status is the ``status`` of its latest event that sets one. Append-only events are what
let several processes write at once without coordination, and a reader rebuild any
flow exactly.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any, Literal, Protocol, get_args
from uuid import uuid4

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mir.errors import MirUserError

FlowStatus = Literal[
    "executed", "rejected", "pending_review", "fallback", "stale", "aborted", "expired"
]
FLOW_STATUSES: tuple[str, ...] = get_args(FlowStatus)
# What `mir traces list` calls a flow with no status yet (no final event): still
# running, or its process stopped. `--status unfinished` lists them.
UNFINISHED = "unfinished"
# Where a flow comes from (its snapshot's and final event's ``data.source``). Only
# ``production`` flows are evidence (drift, release comparisons); ``eval`` (``mir eval``,
# the promotion gate, the judge) and ``shadow`` never execute; ``replay`` is a
# production-mode run on recorded model answers (it may execute, it proves nothing about
# a model). A flow written before sources were explicit is ``production`` unless its
# snapshot names another source.
FlowSource = Literal["production", "eval", "shadow", "replay"]
FLOW_SOURCES: tuple[str, ...] = get_args(FlowSource)
Step = Literal[
    "snapshot", "infer", "validate", "route", "review", "recheck", "execute", "fallback", "final"
]


def _now() -> datetime:
    return datetime.now(UTC)


class TraceEvent(BaseModel):
    model_config = ConfigDict(frozen=True)

    event_id: str = Field(default_factory=lambda: uuid4().hex, description="Dedupe key.")
    flow_id: str
    seq: int = Field(ge=0, description="Order of the event within its flow.")
    step: Step
    agent: str
    at: datetime = Field(default_factory=_now)
    status: FlowStatus | None = Field(None, description="Flow status after this event, if set.")
    reasons: tuple[str, ...] = Field((), description="Reason codes, e.g. 'schema_invalid'.")
    provider: str | None = None
    model: str | None = None
    prompt_hash: str | None = None
    prompt_version: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    latency_ms: float = 0.0
    data: dict[str, Any] = Field(default_factory=dict, description="Step-specific payload.")


class FlowSummary(BaseModel):
    """One decision flow as ``mir traces list`` shows it (aggregated over its events)."""

    model_config = ConfigDict(frozen=True)

    flow_id: str
    agent: str
    status: FlowStatus | None = Field(None, description="Status of the latest event setting one.")
    started_at: datetime
    updated_at: datetime
    steps: int = Field(description="Number of events in the flow.")
    provider: str | None = None
    model: str | None = None
    tokens: int = Field(0, description="Prompt + completion tokens over every step.")
    cost_usd: float = 0.0
    latency_ms: float = 0.0
    action: str | None = Field(None, description="The proposed action, when a step recorded one.")
    # str, not FlowSource: a store's text is shown as it is (an edited line must not
    # break the listing), and anything but "production" is no evidence.
    source: str = Field(
        "production",
        description="production, eval (`mir eval`, the promotion gate), shadow (a registry "
        "shadow version) or replay (a run on recorded model answers).",
    )


class CompactionResult(BaseModel):
    """What one compaction did: closed segments folded into the database file."""

    model_config = ConfigDict(frozen=True)

    segments: int = Field(0, description="Closed segment files loaded (and then removed).")
    events: int = Field(0, description="Event lines loaded into the database.")
    skipped_lines: int = Field(0, description="Torn or malformed lines that could not be read.")
    quarantined: tuple[str, ...] = Field(
        (), description="Segments with unreadable lines, moved aside instead of deleted."
    )
    skipped: bool = Field(False, description="True when another process was already compacting.")
    shipped: int = Field(
        0, description="Segments shipped to the fleet's trace lake ([tool.mir.store] data_path)."
    )
    shipped_events: int = Field(0, description="Event lines shipped to the lake.")


class ChainBreak(BaseModel):
    """One place where the hash chain does not hold: an edited, removed or moved line."""

    model_config = ConfigDict(frozen=True)

    segment: str
    line: int
    event_id: str | None
    problem: str


class IntegrityReport(BaseModel):
    """The result of ``mir traces verify``: the store checked against its manifest, and
    every line re-hashed (``full``) or every line added since the last verify."""

    model_config = ConfigDict(frozen=True)

    segments: int
    lines: int
    checked: int = Field(0, description="Lines re-hashed by this run.")
    full: bool = Field(
        True,
        description="False when only lines added since the last verify "
        "were re-hashed (counts and heads are always checked in full).",
    )
    breaks: tuple[ChainBreak, ...] = ()
    notices: tuple[str, ...] = Field((), description="Not tampering: torn last lines, ...")
    digest: str = Field(description="Hash over every segment head; record it to anchor the log.")

    @property
    def ok(self) -> bool:
        return not self.breaks


class OtelSettings(BaseModel):
    """``[tool.mir.otel]``: every flow's spans sent live to an OpenTelemetry backend."""

    model_config = ConfigDict(extra="forbid")

    endpoint: str | None = Field(
        None,
        description="OTLP/HTTP base URL, e.g. http://127.0.0.1:4318 (spans go to "
        "<endpoint>/v1/traces). Unset: $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the full URL), "
        "then $OTEL_EXPORTER_OTLP_ENDPOINT; neither: no live export. Headers (an API key) "
        "come from $OTEL_EXPORTER_OTLP_HEADERS, never from this file.",
    )
    enabled: bool = Field(
        True, description="false: no live export even with an endpoint ($OTEL_SDK_DISABLED too)."
    )
    service_name: str = Field("mir", min_length=1, description="The spans' service.name.")
    timeout_s: float = Field(
        2.0, gt=0, le=60, description="How long one export may take before it is dropped."
    )
    max_queue: int = Field(
        2048,
        ge=1,
        le=1_000_000,
        description="Spans waiting to leave; past it the oldest are dropped (and counted).",
    )


class TraceSettings(BaseModel):
    """``[tool.mir.traces]``: where traces live and what must never be written."""

    model_config = ConfigDict(extra="forbid")

    path: str | None = Field(
        None, description="Trace folder relative to the project root (default <state_dir>/traces)."
    )
    redact_env: list[str] = Field(
        default_factory=list,
        description="Environment variables whose values are replaced by [REDACTED] before "
        "writing (names with a word KEY, SECRET, TOKEN, PASS, PASSWORD, CREDENTIAL or AUTH, "
        "e.g. API_KEY, DB_PASS, always are).",
    )
    redact_patterns: list[str] = Field(
        default_factory=list,
        description="Extra regular expressions (Python syntax) whose matches are replaced by "
        '[REDACTED] before writing and exporting, e.g. ["ACME-[0-9]{8}"].',
    )
    fsync: bool = Field(
        False,
        description="fsync every append: survives power loss, not only a process crash (slower).",
    )
    segment_events: int = Field(
        20_000, ge=1, description="Lines per segment file before a writer starts a new one."
    )
    compact_after: int = Field(
        8, ge=1, description="Closed segments that trigger an automatic compaction."
    )

    @field_validator("redact_patterns")
    @classmethod
    def _patterns_compile(cls, patterns: list[str]) -> list[str]:
        # Checked when the project loads: a bad pattern found while writing a trace
        # would lose the event it was meant to protect.
        for index, pattern in enumerate(patterns):
            try:
                compiled = re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"entry {index} {pattern!r} is not a valid regex: {exc}") from None
            if compiled.search(""):
                raise ValueError(f"entry {index} {pattern!r} matches the empty string")
        return patterns


class TraceStoreError(MirUserError):
    """The trace store cannot be read or written as it is (a corrupt or foreign-locked
    database file); the message names the file and how to recover, and nothing is lost."""


class TamperedTraceError(TraceStoreError):
    """A flow's stored events do not verify against the hash chain and the manifest:
    nothing may act on them (``mir approve`` / ``mir reject`` refuse)."""


class EventsSql(Protocol):
    """``events(where)``: the SQL of every unique stored event matching ``where``;
    ``stored=False``: only those not in this host's database (its live segment files,
    and in a fleet with a trace lake the lake's rows of other hosts); ``lake=False``
    leaves the lake's rows out, ``live=False`` the live segment lines. ``lake`` (the
    attribute) says whether a trace lake is part of the view."""

    lake: bool

    def __call__(
        self, where: str = "true", *, stored: bool = True, lake: bool = True, live: bool = True
    ) -> str: ...
