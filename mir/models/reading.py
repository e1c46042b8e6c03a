"""How the registry reads in a listing: the cells of ``mir models list`` and ``history``
(``None``: no value) and the fields ``mir models show`` lists."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # read, never built: no runtime import of the history's store
    from mir.models.domain import ModelEntry
    from mir.models.history import ModelChange

ENTRY_COLUMNS = ("name", "version", "stage", "share", "provider", "artifact")
CHANGE_COLUMNS = ("at", "version", "from", "to", "by", "gate", "why")


def entry_cells(e: ModelEntry) -> list[str | None]:
    """One row of ``mir models list``, in ``ENTRY_COLUMNS`` order."""
    share = None if e.share is None else f"{e.share:g}"
    return [e.name, e.version, str(e.stage), share, e.provider, e.artifact]


def entry_fields(e: ModelEntry) -> list[str]:
    """``key: value`` of every field set, but the name, version and stage (the heading)."""
    data = e.model_dump(mode="json", exclude_none=True)
    return [f"{key}: {value}" for key, value in data.items() if key not in ENTRY_COLUMNS[:3]]


def gate_words(forced: bool, gate: dict | None) -> str:
    """``passed`` / ``failed`` when a gate ran, then ``forced`` and ``replayed``."""
    gate = gate or {}
    words = [("passed" if gate.get("passed") else "failed")] if gate.get("ran") else []
    words += [word for word, on in (("forced", forced), ("replayed", gate.get("replayed"))) if on]
    return ", ".join(words)


def change_cells(r: ModelChange) -> list[str | None]:
    """One row of ``mir models history``, in ``CHANGE_COLUMNS`` order."""
    at = r.at.strftime("%Y-%m-%d %H:%M:%S")
    return [at, r.version, r.from_stage, r.to_stage, r.by, gate_words(r.forced, r.gate), r.why]
