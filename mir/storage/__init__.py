"""Storage shared by every capability: the one migration runner, the one reading of a
DuckDB lock conflict, and the Protocols a second backend implements."""

from mir.storage.conflicts import is_lock_conflict, retrying_while_locked
from mir.storage.migrations import Migration, UnknownMigrationError, migrate, pending, recorded
from mir.storage.ports import (
    AgentStateStore,
    EvalRunLog,
    ExecutionLedger,
    ModelChangeLog,
    ReviewAlertLog,
)
from mir.storage.records import FlowClaim, FlowHolder

__all__ = [
    "AgentStateStore",
    "EvalRunLog",
    "ExecutionLedger",
    "FlowClaim",
    "FlowHolder",
    "Migration",
    "ModelChangeLog",
    "ReviewAlertLog",
    "UnknownMigrationError",
    "is_lock_conflict",
    "migrate",
    "pending",
    "recorded",
    "retrying_while_locked",
]
