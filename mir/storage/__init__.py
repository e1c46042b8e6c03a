"""Storage shared by every capability: the one migration runner, the one reading of a
DuckDB lock conflict, the one atomic file writer, file locks, the stat-keyed digest
cache, the Protocols a second backend implements, and that backend's connection: the
fleet store, one Postgres shared by many hosts."""

from mir.storage.atomic import atomic_file, write_atomic
from mir.storage.conflicts import is_lock_conflict, retrying_while_locked
from mir.storage.digests import DigestCache, Identity, identity
from mir.storage.flock import file_lock, lock_descriptor
from mir.storage.migrations import Migration, UnknownMigrationError, migrate, pending, recorded
from mir.storage.paths import input_folder, output_file, output_folder
from mir.storage.ports import (
    AgentStateStore,
    EvalRunLog,
    ExecutionLedger,
    ModelChangeLog,
    ReviewAlertLog,
)
from mir.storage.postgres import (
    FleetStore,
    ScopedStore,
    StoreSettings,
    StoreUnavailable,
    fleet_url,
    hide_password,
    lake_path,
    one_line_errors,
    quiet_pool_log,
)
from mir.storage.records import FlowClaim, FlowHolder

__all__ = [
    "AgentStateStore",
    "DigestCache",
    "EvalRunLog",
    "ExecutionLedger",
    "FleetStore",
    "FlowClaim",
    "FlowHolder",
    "Identity",
    "Migration",
    "ModelChangeLog",
    "ReviewAlertLog",
    "ScopedStore",
    "StoreSettings",
    "StoreUnavailable",
    "UnknownMigrationError",
    "atomic_file",
    "file_lock",
    "fleet_url",
    "hide_password",
    "identity",
    "input_folder",
    "is_lock_conflict",
    "lake_path",
    "lock_descriptor",
    "migrate",
    "one_line_errors",
    "output_file",
    "output_folder",
    "pending",
    "quiet_pool_log",
    "recorded",
    "retrying_while_locked",
    "write_atomic",
]
