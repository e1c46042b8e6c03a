"""Editing ``models.toml``: stage changes, registration, rollback — every one recorded.

tomlkit round-trips the file (comments and order kept). Each edit is applied to the
parsed document, the new text is validated with ``parse_registry`` BEFORE anything is
written, and the file is replaced atomically (temp file + ``os.replace``): on any error
the file is byte-for-byte what it was.

Order of writes: the history rows are inserted in an open transaction (DuckDB, or the
fleet store's Postgres: ``mir.models.stores``), then the file is replaced, then the
transaction commits. A locked or corrupt history (or a fleet store that is down) fails
before the file is touched; a failed file write rolls the rows back; a failed commit
(after the file was replaced) restores the old text. History first because it is the
part that can fail for reasons outside our control (another program holding the file).

Every edit is a read-modify-write of the whole file, so edits are serialized by an
exclusive ``flock`` on ``.mir/models.lock`` held from the read to the commit: without it
two ``mir models`` processes (or a CLI promotion and a long-running process's automatic
rollback) both read the old file and the second write drops the first one's change while
its history row stays (the file and the history disagree).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mir.errors import ConfigError, UsageError
from mir.models.domain import SINGLE_STAGES, ModelEntry, Registry, Stage
from mir.models.history import ModelChange
from mir.models.locking import serialized
from mir.models.registry_file import (
    FILE_NAME,
    parse_registry,
    read_registry_text,
    registry_path,
)
from mir.models.stores import changes, model_log
from mir.storage import write_atomic

_HEADER = (
    "# The model registry: every model version routes may name (`model: NAME` is the\n"
    "# production version, `NAME@VERSION` a pinned one). Edited by `mir models`.\n"
)


@serialized
def set_stage(
    root: Path,
    name: str,
    version: str,
    stage: Stage,
    *,
    by: str,
    why: str,
    share: float | None = None,
    forced: bool = False,
    gate: dict | None = None,
    from_stage: Stage | None = None,
    tested: ModelEntry | None = None,
) -> ModelEntry:
    """Move ``NAME@VERSION`` into ``stage`` and return its new entry.

    ``from_stage``: move it only if it is still there (read under the edit lock), for a
    decision taken on an older read of the file (the automatic rollback of a canary that
    someone promoted meanwhile must not demote the new production).

    ``tested``: the entry as it was when a gate started; the move is refused
    (``EntryChanged``) if, read under the edit lock, the version now names anything else
    (artifact, digest, provider, context...): a promotion never moves an untested file.

    The previous holder of a single stage (production, canary, shadow) becomes
    ``candidate`` (a former production can be rolled back to). A retired version never
    leaves ``retired``. ``share`` is required for (and only for) a canary."""
    stage = Stage(stage)
    text, registry = _load(root)
    entry = registry.get(name, version)
    if entry is None:
        raise ConfigError(_unknown(registry, name, version), where=FILE_NAME)
    if entry.stage == Stage.RETIRED and stage != Stage.RETIRED:
        raise ConfigError(
            f"{entry.ref} is retired and can never leave 'retired'",
            where=FILE_NAME,
            hint="register a new version instead",
        )
    now, then = _tested_fields(entry), _tested_fields(tested) if tested else {}
    if tested is not None and now != then:
        changed = sorted(key for key in now.keys() | then.keys() if now.get(key) != then.get(key))
        raise EntryChanged(
            f"{entry.ref} changed in {FILE_NAME} while its gate ran ({', '.join(changed)}); "
            "it was not promoted",
            hint="run the promotion again to gate what it names now",
        )
    if from_stage is not None and entry.stage != from_stage:
        raise UsageError(
            f"{entry.ref} is no longer {from_stage} (it is {entry.stage}); "
            f"{FILE_NAME} was not changed"
        )
    if entry.stage == stage and (stage != Stage.CANARY or share == entry.share):
        # Nothing would move: writing it anyway put "shadow -> shadow" rows in the history
        # (and re-ran a production gate for nothing).
        raise UsageError(
            f"{entry.ref} is already {stage}"
            + (f" with share {share}" if stage == Stage.CANARY else "")
            + f"; {FILE_NAME} was not changed"
        )
    if stage == Stage.CANARY:
        if share is None or not 0 < share < 1:
            raise UsageError(
                f"a canary needs --share strictly between 0 and 1 (got {share})",
                hint="e.g. --share 0.1",
            )
    elif share is not None:
        raise UsageError(f"--share is for the canary stage only (not {stage})")
    at = datetime.now(UTC)
    moves: list[ModelChange] = []
    if stage in SINGLE_STAGES:
        holder = registry.in_stage(name, stage)
        if holder is not None and holder.version != version:
            moves.append(_change(holder, Stage.CANDIDATE, by, why, at))
    moves.append(_change(entry, stage, by, why, at, share=share, forced=forced, gate=gate))
    document = _document(text)
    for move in moves:
        _set_table_stage(document, move.name, move.version, Stage(move.to_stage), move.share)
    new = _commit(root, text, document, moves)
    result = new.get(name, version)
    assert result is not None
    return result


@serialized
def register(root: Path, entry: ModelEntry, *, by: str, why: str | None = None) -> ModelEntry:
    """Add a new version (any stage but a single one already held is refused by the
    registry rules); creates ``models.toml`` when the project has none."""
    import tomlkit

    path = registry_path(root)
    existing = read_registry_text(path)
    text = existing or ""
    registry = parse_registry(text, path) if text else Registry()
    if registry.get(entry.name, entry.version) is not None:
        raise ConfigError(f"duplicate version {entry.ref}", where=FILE_NAME)
    document = _document(text) if text else tomlkit.parse(_HEADER)
    table = tomlkit.table()
    for key, value in entry.model_dump(mode="json", exclude_none=True).items():
        table[key] = value
    if "models" not in document:
        document["models"] = tomlkit.aot()
    document["models"].append(table)
    change = _change(entry, entry.stage, by, why, datetime.now(UTC), share=entry.share)
    change = change.model_copy(update={"from_stage": None})
    _commit(root, text, document, [change], created=existing is None)
    return entry


@serialized
def rollback(root: Path, name: str, *, by: str, why: str) -> ModelEntry:
    """Production goes back to the version that was production before the current one
    (read from history); the current one becomes ``candidate``."""
    _, registry = _load(root)
    current = registry.in_stage(name, Stage.PRODUCTION)
    if current is None:
        raise (
            ConfigError(f"{name} has no production version to roll back", where=FILE_NAME)
            if name in registry.names
            else ConfigError(_unknown(registry, name, None), where=FILE_NAME)
        )
    target = previous_production(root, registry, name, current.version)
    if target is None:
        raise UsageError(
            f"nothing to roll back to: no earlier production version of {name} in the "
            "history that is still in the registry and not retired",
            hint=f"see `mir models history {name}`",
        )
    return set_stage(root, name, target, Stage.PRODUCTION, by=by, why=why or "rollback")


def previous_production(root: Path, registry: Registry, name: str, current: str) -> str | None:
    """The last version, other than ``current``, that was moved into production before
    ``current`` last was, and can still be promoted."""
    # A version moved out of production was production too: a hand-written models.toml
    # has no row that put its first production version there.
    promoted = [
        c.version for c in changes(root, name) if Stage.PRODUCTION in (c.to_stage, c.from_stage)
    ]
    while promoted and promoted[-1] == current:
        promoted.pop()
    for version in reversed(promoted):
        entry = registry.get(name, version)
        if version != current and entry is not None and entry.stage != Stage.RETIRED:
            return version
    return None


def _load(root: Path) -> tuple[str, Registry]:
    path = registry_path(root)
    text = read_registry_text(path)
    if text is None:
        raise ConfigError(
            f"the project has no {FILE_NAME}",
            where=str(root),
            hint="register a model first (`mir models register NAME VERSION --artifact ...`)",
        )
    return text, parse_registry(text, path)


class EntryChanged(UsageError):
    """The version a gate tested is not what the registry names any more."""


def _tested_fields(entry: ModelEntry) -> dict[str, Any]:
    """Everything of an entry but where it is (stage, share): what a gate tested."""
    return entry.model_dump(mode="json", exclude={"stage", "share"})


def _unknown(registry: Registry, name: str, version: str | None) -> str:
    if name not in registry.names:
        return f"unknown model {name!r} (registry names: {', '.join(registry.names) or 'none'})"
    versions = ", ".join(e.version for e in registry.versions(name))
    return f"{name} has no version {version!r} (versions: {versions})"


def _change(
    entry: ModelEntry,
    to: Stage,
    by: str,
    why: str | None,
    at: datetime,
    *,
    share: float | None = None,
    forced: bool = False,
    gate: dict | None = None,
) -> ModelChange:
    return ModelChange(
        name=entry.name,
        version=entry.version,
        from_stage=str(entry.stage),
        to_stage=str(to),
        share=share,
        by=by,
        at=at,
        why=why,
        forced=forced,
        gate=gate,
    )


def _document(text: str) -> Any:
    import tomlkit

    return tomlkit.parse(text)


def _set_table_stage(
    document: Any, name: str, version: str, stage: Stage, share: float | None
) -> None:
    for table in document["models"]:
        if table.get("name") == name and str(table.get("version")) == version:
            table["stage"] = str(stage)
            if share is not None:
                table["share"] = share
            elif "share" in table:
                del table["share"]
            return
    raise AssertionError(f"{name}@{version} validated but not found in the document")


def _commit(
    root: Path, old: str, document: Any, moves: list[ModelChange], *, created: bool = False
) -> Registry:
    """Validate the new text, then history (open transaction) -> file -> commit."""
    import tomlkit

    path = registry_path(root)
    new_text = tomlkit.dumps(document)
    registry = parse_registry(new_text, path)
    before = parse_registry(old, path) if old else Registry()
    with model_log(root).writing() as log:
        try:
            log.begin()
            log.insert([*_unrecorded(log.latest_stages(), before, moves), *moves])
        except log.errors as exc:
            raise ConfigError(
                f"cannot record the change in the model history ({exc})",
                where=log.where,
                hint=f"{FILE_NAME} was not changed",
            ) from exc
        try:
            _write_atomically(path, new_text)
        except BaseException:
            log.rollback()
            raise
        try:
            log.commit()
        except BaseException:
            # The file already says the new thing but its history was not kept: put the
            # old file back so the two never disagree.
            if created:
                path.unlink(missing_ok=True)
            else:
                _write_atomically(path, old)
            raise
    return registry


UNRECORDED = (
    "found in models.toml without a history record (edited by hand, merged, or a mir "
    "command interrupted between the file and its history)"
)
BASELINE = "in models.toml when its history began"


def _unrecorded(
    recorded: dict[tuple[str, str], str], before: Registry, moves: list[ModelChange]
) -> list[ModelChange]:
    """Stages the file holds that the history does not say (the history's latest move of
    that version went elsewhere, or it has none), recorded before this edit's own moves,
    so the history stays the story of the file. On a history's first use, every version
    the file already holds is recorded as its starting point. ``recorded``: each
    version's latest stage in the history."""
    first_use = not recorded  # (refused promotions alone never recorded a starting point)
    at = moves[0].at if moves else datetime.now(UTC)
    found = []
    for entry in before.entries:
        stage = recorded.get((entry.name, entry.version))
        if stage != str(entry.stage):
            found.append(
                ModelChange(
                    name=entry.name,
                    version=entry.version,
                    from_stage=stage,
                    to_stage=str(entry.stage),
                    share=entry.share,
                    by="mir",
                    at=at,
                    why=BASELINE if first_use else UNRECORDED,
                )
            )
    return found


def _write_atomically(path: Path, text: str) -> None:
    write_atomic(path, text, mode=None if path.exists() else 0o600)  # kept, or owner-only
