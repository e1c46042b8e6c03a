"""What a batch says about each row: its flow's outcome, read from the decision record,
or, for a row a killed run left behind, from the flow's events in the traces.

``interrupted`` is not a flow status: the run was cut off in the middle of that row's
flow, after the flow claimed an execution (its events stop there). Such a row is not
decided again (its action may have run; the ledger keeps it from running twice either
way); its flow id says where to look. A flow cut off before any execution is closed and
its row decided again instead (``entrypoints``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

INTERRUPTED = "interrupted"
_NOT_AS_DESIGNED = frozenset({"aborted", INTERRUPTED})


class RowOutcome(BaseModel):
    """One line of the results file."""

    key: str
    line: int
    flow_id: str
    status: str
    action: str | None = None
    executed: bool = False
    reasons: list[str] = Field(default_factory=list)
    decision: dict[str, Any] | None = None
    latency_ms: float = 0.0
    error: str | None = None

    @property
    def ended_as_designed(self) -> bool:
        """As ``DecisionRecord.ended_as_designed``: aborted, cut off, or an input the
        contract refused (the caller has something to fix) did not."""
        return self.status not in _NOT_AS_DESIGNED and "input_invalid" not in self.reasons


def from_record(key: str, line: int, record: Mapping[str, Any]) -> RowOutcome:
    """From a decision record's JSON (``DecisionRecord.model_dump()``, a final event's)."""
    return RowOutcome(
        key=key,
        line=line,
        flow_id=str(record["flow_id"]),
        status=str(record["status"]),
        action=record.get("action"),
        executed=bool(record.get("executed", False)),
        reasons=[str(r) for r in record.get("reasons") or ()],
        decision=record.get("decision"),
        latency_ms=float(record.get("latency_ms") or 0.0),
    )


def from_events(key: str, line: int, flow_id: str, events: Sequence[Any]) -> RowOutcome | None:
    """A row's outcome from its flow's events (TraceEvents, in order); None when the flow
    has none (it never started: the row is decided again, under the same flow id)."""
    if not events:
        return None
    finals = [e for e in events if e.step == "final"]
    if finals and isinstance(finals[-1].data.get("record"), dict):
        return from_record(key, line, finals[-1].data["record"])
    waiting = [e for e in events if e.status == "pending_review"]
    if waiting:
        decision = waiting[-1].data.get("decision")
        decision = decision if isinstance(decision, dict) else None
        return RowOutcome(
            key=key,
            line=line,
            flow_id=flow_id,
            status="pending_review",
            action=decision.get("action") if decision else None,
            reasons=list(waiting[-1].reasons),
            decision=decision,
        )
    cut = [INTERRUPTED]
    return RowOutcome(key=key, line=line, flow_id=flow_id, status=INTERRUPTED, reasons=cut)


def counts(outcomes: Iterable[RowOutcome]) -> dict[str, int]:
    """Rows by status, most frequent first."""
    return dict(Counter(o.status for o in outcomes).most_common())


@dataclass
class BatchReport:
    """What a batch run did: the rows by status, and how many were decided by this run,
    found decided by an earlier one, or recovered from the traces."""

    out: Path
    total: int
    decided: int = 0
    skipped: int = 0
    recovered: int = 0
    retried: int = 0
    stopped: bool = False
    seconds: float = 0.0
    statuses: dict[str, int] = field(default_factory=dict)
    outcomes: list[RowOutcome] = field(default_factory=list)

    @property
    def ended_as_designed(self) -> bool:
        return not self.stopped and all(o.ended_as_designed for o in self.outcomes)

    def as_json(self) -> dict[str, Any]:
        return {
            "out": str(self.out),
            "rows": self.total,
            "decided": self.decided,
            "skipped": self.skipped,
            "recovered": self.recovered,
            "retried": self.retried,
            "left": self.total - len(self.outcomes),
            "stopped": self.stopped,
            "seconds": round(self.seconds, 3),
            "statuses": self.statuses,
        }


class BatchProgress:
    """What the CLI shows while a batch runs (every method optional to override)."""

    def start(self, total: int, already: int) -> None: ...

    def advance(self, outcome: RowOutcome) -> None: ...

    def stopping(self) -> None: ...

    def finish(self) -> None: ...


class LineProgress(BatchProgress):
    """A line through ``say`` at every tenth of the rows (CI logs, a pipe)."""

    def __init__(self, say: Callable[[str], None]):
        self.say = say
        self.total = self.done = 0
        self.step = 1

    def start(self, total: int, already: int) -> None:
        self.total, self.done, self.step = total, already, max(1, total // 10)

    def advance(self, outcome: RowOutcome) -> None:
        self.done += 1
        if self.done % self.step == 0 or self.done == self.total:
            self.say(f"batch: {self.done}/{self.total} rows")

    def stopping(self) -> None:
        self.say("stopping: the rows in flight finish (Ctrl-C again stops at once)")


def summary_lines(report: BatchReport, inputs: Path) -> list[str]:
    """What a finished (or stopped) batch says, in words."""
    pace = ""
    if report.decided and report.seconds > 0:
        rate = report.decided / report.seconds
        pace = f" ({rate:.1f} rows/s)" if rate >= 1 else f" ({1 / rate:.1f} s a row)"
    lines = [
        f"decided {report.decided} of {report.total} rows of {inputs} in "
        f"{report.seconds:.1f} s{pace}: results in {report.out}"
    ]
    if report.statuses:
        lines.append("  " + ", ".join(f"{s} {n}" for s, n in report.statuses.items()))
    if report.skipped or report.recovered or report.retried:
        lines.append(
            f"  {report.skipped} already decided by an earlier run, "
            f"{report.recovered} found in the traces, {report.retried} decided again "
            "(an earlier run was killed before they executed anything)"
        )
    cut = [o for o in report.outcomes if o.status == INTERRUPTED]
    if cut:
        lines.append(
            f"  {len(cut)} cut off mid-decision by an earlier run, not decided again: "
            f"mir traces show {cut[0].flow_id}"
        )
    left = report.total - len(report.outcomes)
    if left:
        lines.append(f"stopped: {left} rows left; run the same command again to go on")
    return lines
