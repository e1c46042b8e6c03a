"""How the registry reads in a listing: the cells of ``mir models list`` and ``history``
(``None``: no value), the same with their styles (``entry_row``, ``change_row``), the
fields ``mir models show`` lists and the line ``mir models register`` answers."""

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


def entry_row(e: ModelEntry) -> list[tuple[str | None, str]]:
    """``entry_cells`` as (value, style) pairs: a production version in bold."""
    return _styled(entry_cells(e), ENTRY_COLUMNS.index("stage"), {"production": "bold"})


def registered_line(e: ModelEntry) -> str:
    """What ``mir models register`` answers: the new candidate and its file's sha256."""
    sha = f" sha256 {e.sha256[:12]}..." if e.sha256 else ""
    return f"registered {e.ref} as candidate{sha}"


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


def change_row(r: ModelChange) -> list[tuple[str | None, str]]:
    """``change_cells`` as (value, style) pairs: a refused change in red."""
    return _styled(change_cells(r), CHANGE_COLUMNS.index("to"), {"refused": "red"})


def _styled(
    cells: list[str | None], at: int, styles: dict[str, str]
) -> list[tuple[str | None, str]]:
    """Every cell with no style but the one ``at``, which takes its value's in ``styles``."""
    return [(c, styles.get(c or "", "") if i == at else "") for i, c in enumerate(cells)]
