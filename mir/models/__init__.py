"""Models as released artifacts: the ``models.toml`` registry and route resolution."""

from mir.models.changing import project_root, retire_version, rollback_production
from mir.models.domain import (
    ModelEntry,
    ModelRef,
    Registry,
    RegistryError,
    Selection,
    Stage,
    in_canary,
)
from mir.models.editing import EntryChanged, register, rollback, set_stage
from mir.models.history import ModelChange, history_path
from mir.models.listing import model_entries, model_history, model_versions
from mir.models.reading import (
    CHANGE_COLUMNS,
    ENTRY_COLUMNS,
    change_cells,
    change_row,
    entry_cells,
    entry_fields,
    entry_row,
    gate_words,
    registered_line,
)
from mir.models.registration import author, refuse_secret, register_version
from mir.models.registry_file import (
    FILE_NAME,
    artifact_path,
    parse_registry,
    read_registry,
    registry_path,
)
from mir.models.resolution import Resolved, RouteResolver, check_routes, names_registry_model
from mir.models.stores import changes, copy_model_history, record
from mir.models.watching import RegistryWatcher, Subscription

__all__ = [
    "CHANGE_COLUMNS",
    "ENTRY_COLUMNS",
    "FILE_NAME",
    "EntryChanged",
    "ModelChange",
    "ModelEntry",
    "ModelRef",
    "Registry",
    "RegistryError",
    "RegistryWatcher",
    "Resolved",
    "RouteResolver",
    "Selection",
    "Stage",
    "Subscription",
    "artifact_path",
    "author",
    "change_cells",
    "change_row",
    "changes",
    "check_routes",
    "copy_model_history",
    "entry_cells",
    "entry_fields",
    "entry_row",
    "gate_words",
    "history_path",
    "in_canary",
    "model_entries",
    "model_history",
    "model_versions",
    "names_registry_model",
    "parse_registry",
    "project_root",
    "read_registry",
    "record",
    "refuse_secret",
    "register",
    "register_version",
    "registered_line",
    "registry_path",
    "retire_version",
    "rollback",
    "rollback_production",
    "set_stage",
]
