"""What ``mir models list / show / history`` ask of the registry: its entries, one
model's versions, one model's changes (an unknown name is a usage error, one line)."""

from __future__ import annotations

from pathlib import Path

from mir.errors import UsageError
from mir.models.domain import ModelEntry
from mir.models.history import ModelChange
from mir.models.registry_file import read_registry
from mir.models.stores import changes


def model_entries(root: Path) -> list[ModelEntry]:
    """Every version of every model (none without a ``models.toml``)."""
    registry = read_registry(root)
    return list(registry.entries) if registry else []


def model_versions(root: Path, name: str) -> list[ModelEntry]:
    """Every version of ``name``; an unknown name says which names there are."""
    registry = read_registry(root)
    versions = registry.versions(name) if registry else []
    if not versions:
        known = ", ".join(registry.names) if registry else "none"
        raise UsageError(f"unknown model {name!r} (registry names: {known or 'none'})")
    return versions


def model_history(root: Path, name: str) -> list[ModelChange]:
    """Every recorded change of ``name``'s versions, oldest first. A name neither in
    the history nor in the registry is unknown (a typo must not read as "no history")."""
    rows = changes(root, name)
    registry = read_registry(root)
    if not rows and (registry is None or name not in registry.names):
        known = ", ".join(registry.names) if registry else "none"
        raise UsageError(f"unknown model {name!r} (registry names: {known})")
    return rows
