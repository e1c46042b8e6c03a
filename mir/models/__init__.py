"""Models as released artifacts: the ``models.toml`` registry and route resolution."""

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
from mir.models.history import ModelChange, changes, history_path, record
from mir.models.registration import author, refuse_secret, register_version
from mir.models.registry_file import (
    FILE_NAME,
    artifact_path,
    parse_registry,
    read_registry,
    registry_path,
)
from mir.models.resolution import Resolved, RouteResolver, check_routes, names_registry_model
from mir.models.watching import RegistryWatcher, Subscription

__all__ = [
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
    "changes",
    "check_routes",
    "history_path",
    "in_canary",
    "names_registry_model",
    "parse_registry",
    "read_registry",
    "record",
    "refuse_secret",
    "register",
    "register_version",
    "registry_path",
    "rollback",
    "set_stage",
]
