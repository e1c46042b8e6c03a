"""Storage shared by every capability: the one migration runner, the one reading of a
DuckDB lock conflict, the one atomic file writer, file locks, the stat-keyed digest
cache, and the Protocols a second backend implements."""

from mir.storage.atomic import atomic_file, write_atomic
from mir.storage.conflicts import is_lock_conflict, retrying_while_locked
from mir.storage.digests import DigestCache, Identity, identity
from mir.storage.flock import file_lock, lock_descriptor
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
    "DigestCache",
    "EvalRunLog",
    "ExecutionLedger",
    "FlowClaim",
    "FlowHolder",
    "Identity",
    "Migration",
    "ModelChangeLog",
    "ReviewAlertLog",
    "UnknownMigrationError",
    "atomic_file",
    "file_lock",
    "identity",
    "is_lock_conflict",
    "lock_descriptor",
    "migrate",
    "pending",
    "recorded",
    "retrying_while_locked",
    "write_atomic",
]
