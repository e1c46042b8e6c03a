"""The stores a second backend (Postgres, shared by many hosts) implements, as Protocols.

Typed by what the capabilities call today, method for method (tests/unit/storage/
test_ports.py holds each local store to its Protocol's signatures). Records a capability
owns (an eval report, a model change) are type parameters, so this module imports no
capability: a backend binds them, e.g. ``EvalRunLog[EvalReport, HistoryRow]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, Protocol, TypeVar

from mir.storage.records import FlowClaim, FlowHolder

KindT = TypeVar("KindT", bound=str)
ReportT = TypeVar("ReportT", contravariant=True)
RowT = TypeVar("RowT", covariant=True)
ChangeT = TypeVar("ChangeT")


class ExecutionLedger(Protocol):
    """At-most-once execution and one outcome per flow, shared by every process.

    A key is claimed atomically BEFORE its executor runs; a flow's outcome (approve,
    reject, replay, or the run that executes it) is claimed by exactly one holder.
    """

    def claim(self, key: str, info: Mapping[str, Any]) -> bool:
        """True if this call claimed the key; False if any process ever claimed it.

        ``info["flow_id"]`` is claimed with it (same transaction) unless this ledger
        already holds it; a flow held by another raises ``FlowAlreadyDecided``.
        """
        ...

    def complete(self, key: str, outcome: Mapping[str, Any]) -> None: ...

    def outcome(self, key: str) -> Mapping[str, Any] | None:
        """The recorded outcome, or None when claimed but never completed (in doubt)."""
        ...

    def claimed(self, key: str) -> bool:
        """Whether any process ever claimed the key (a replay re-checks when not)."""
        ...

    def claim_flow(self, flow_id: str, state: str, *, by: str) -> FlowClaim:
        """Become the one holder of the flow's outcome (first writer wins; an unsettled
        claim of a process known to be dead is taken over)."""
        ...

    def holder(self, flow_id: str) -> FlowHolder | None: ...

    def settle_flow(self, flow_id: str, final: str) -> None:
        """Record the final status, once the flow's ``final`` event is durable."""
        ...

    def release_flow(self, flow_id: str) -> None:
        """Give back an unsettled claim this ledger holds (nothing was done under it)."""
        ...


class AgentStateStore(Protocol):
    """Each agent's state (active or suspended, by whom, why): ``agents.json`` today."""

    def read(self) -> dict[str, dict[str, Any]]: ...

    def is_suspended(self, agent: str) -> bool: ...

    def set(self, agent: str, state: str, *, reason: str | None, by: str) -> dict[str, Any]:
        """Record the agent's new state; returns its entry."""
        ...


class ReviewAlertLog(Protocol[KindT]):
    """Which review alerts went out: each (flow, kind, period) claimed once, by one
    process, before it is sent (``mir.alerts.SentLog``)."""

    def claim(self, items: Sequence[tuple[str, KindT, int]]) -> list[tuple[str, KindT, int]]:
        """The items this call claimed; every other one was claimed before."""
        ...

    def release(self, items: Sequence[tuple[str, KindT, int]]) -> None:
        """Give claims back (alerts no channel delivered), so the next read sends them."""
        ...


class EvalRunLog(Protocol[ReportT, RowT]):
    """Eval runs over time (``mir eval history``; ``mir.evals.EvalHistory``)."""

    def record(
        self, report: ReportT, *, at: datetime | None = None, origin: str | None = None
    ) -> list[str]:
        """Every suite of the report in one transaction; returns the run ids."""
        ...

    def try_record(self, report: ReportT, *, origin: str | None = None) -> str | None:
        """``record``, a failure returned as a warning instead of raised."""
        ...

    def rows(self, agent: str, *, limit: int = 20) -> list[RowT]: ...

    def case_rows(self, run_id: str) -> list[dict[str, Any]]: ...


class ModelChangeLog(Protocol[ChangeT]):
    """Every stage change of the model registry (``mir models history``)."""

    def record(self, changes: list[ChangeT]) -> None:
        """Changes that edit no file (a refused promotion), in one transaction."""
        ...

    def changes(self, name: str | None = None) -> list[ChangeT]:
        """Every recorded change (of one name), oldest first."""
        ...
