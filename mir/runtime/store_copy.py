"""What ``mir store migrate`` does with each local row, and what it and ``mir store
status`` say (pure: rows in, verdicts and lines out).

The rules, one per row met in Postgres, which is never overwritten:
- a ledger row (an execution key, a flow claim) absent there is copied as it is: a key
  without an outcome stays claimed ("in doubt", never run again), an unsettled flow
  claim stays held (nobody's liveness: the fleet never takes it over);
- the same row there already (an earlier or a racing migrate) is counted, not copied;
- a different row there is a conflict: Postgres's is kept, and counted;
- an agent suspended locally but active in the fleet is suspended there (the safer state
  wins, said by name); every other difference keeps Postgres's state, counted.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

Row = tuple[Any, ...]
Verdict = Literal["copy", "same", "conflict", "suspend"]
MIGRATE = "mir store migrate"


class TableCopy(BaseModel):
    """One table's rows: copied (or, in a dry run, to copy), there already, conflicting."""

    copied: int = 0
    already: int = 0
    conflicts: int = 0
    examples: list[str] = Field(default_factory=list, description="a few conflicting keys")

    def count(self, verdict: Verdict, key: str) -> None:
        if verdict == "conflict":
            self.conflicts += 1
            if len(self.examples) < 5:
                self.examples.append(key)
        elif verdict == "same":
            self.already += 1
        else:
            self.copied += 1


def row_verdict(local: Row, fleet: Row | None) -> Verdict:
    """A ledger row against Postgres's row of the same key (None: there is none)."""
    if fleet is None:
        return "copy"
    return "same" if tuple(local) == tuple(fleet) else "conflict"


def agent_verdict(local: Mapping[str, Any], fleet: Mapping[str, Any] | None) -> Verdict:
    """An agent's local state against the fleet's: suspended wins, else the fleet's."""
    if fleet is None:
        return "copy"
    if all(local.get(f) == fleet.get(f) for f in ("state", "reason", "by", "at")):
        return "same"
    if local.get("state") == "suspended" and fleet.get("state") != "suspended":
        return "suspend"
    return "conflict"


def fingerprint(executions: Iterable[Row], flows: Iterable[Row], agents: Mapping) -> str:
    """The local history's digest: a marker holding it says this history was migrated."""
    body = json.dumps([sorted(executions), sorted(flows), agents], sort_keys=True, default=str)
    return hashlib.sha256(body.encode()).hexdigest()


class StoreMigration(BaseModel):
    """What ``mir store migrate`` copied (``dry_run``: would copy) into the fleet store."""

    url: str
    dry_run: bool
    executions: TableCopy = Field(default_factory=TableCopy)
    flows: TableCopy = Field(default_factory=TableCopy)
    agent_states: TableCopy = Field(default_factory=TableCopy)
    suspended: list[str] = Field(default_factory=list, description="suspended in the fleet")
    in_doubt: int = Field(0, description="copied keys without an outcome: never run again")
    held: int = Field(0, description="copied flow claims left unsettled: stay held")
    kept: list[str] = Field(default_factory=list, description="local files, no longer read")
    published: list[str] = Field(
        default_factory=list, description="flows waiting for review, published to the fleet"
    )
    histories: dict[str, TableCopy] = Field(
        default_factory=dict, description="local histories copied (eval runs, model changes)"
    )

    def lines(self) -> list[str]:
        verb = "would copy" if self.dry_run else "copied"
        lines = [f"{'dry run: ' if self.dry_run else ''}into the fleet store {self.url}"]
        for name, table in (
            ("execution keys", self.executions),
            ("flow claims", self.flows),
            ("agent states", self.agent_states),
        ):
            line = f"{name}: {verb} {table.copied}, already there {table.already}"
            if table.conflicts:
                shown = ", ".join(table.examples)
                line += f", {table.conflicts} conflicting (the fleet's kept: {shown})"
            lines.append(line)
        for name, table in self.histories.items():
            lines.append(f"{name}: {verb} {table.copied}, already there {table.already}")
        if self.in_doubt or self.held:
            lines.append(
                f"unsettled: {self.in_doubt} key(s) stay claimed (in doubt, never "
                f"run again), {self.held} flow claim(s) stay held"
            )
        for agent in self.suspended:
            lines.append(
                f"{agent}: suspended locally, active in the fleet: now suspended "
                "there (the safer state wins; `mir agents resume` to undo)"
            )
        if self.published:
            verb = "would publish" if self.dry_run else "published"
            lines.append(
                f"waiting for review: {verb} {len(self.published)} flow(s) to the fleet's "
                "queue (reviewable from every host)"
            )
        if self.kept and not self.dry_run:
            lines.append(f"kept, no longer read: {', '.join(self.kept)}")
        if self.dry_run:
            lines.append(f"nothing written: run `{MIGRATE}` to copy")
        return lines


class StoreStatus(BaseModel):
    """Which backend a project's ledger and agent states are in, and how it stands."""

    backend: Literal["local", "fleet"]
    url: str | None = None
    reachable: bool | None = None
    pending_steps: dict[str, list[str]] = Field(default_factory=dict)
    counts: dict[str, int] = Field(default_factory=dict)
    local: dict[str, int] = Field(default_factory=dict, description="rows in the local files")
    migrated_at: str | None = None
    warning: str | None = None
    lake: dict[str, Any] | None = Field(
        None, description="the fleet's trace lake ([tool.mir.store] data_path), if any"
    )

    def lines(self) -> list[str]:
        if self.backend == "local":
            return [f"backend: local files ({_counts(self.local) or 'empty'})"]
        lines = [f"backend: fleet store {self.url} (reachable)"]
        pending = [f"{scope}: {', '.join(names)}" for scope, names in self.pending_steps.items()]
        lines.append(
            f"schema: {'; '.join(pending)} not applied yet (applied on first use)"
            if pending
            else "schema: every migration applied"
        )
        lines.append(f"rows: {_counts(self.counts) or 'no tables yet (no decision used it)'}")
        if self.lake is not None:
            held = {k: v for k, v in self.lake.items() if k != "data_path"}
            lines.append(f"trace lake: {self.lake['data_path']} ({_counts(held)})")
        if self.migrated_at:
            lines.append(f"local files: migrated at {self.migrated_at}, kept, no longer read")
        if self.warning:
            lines.append(f"warning: {self.warning}")
        return lines


def unmigrated_warning(local: Mapping[str, int], files: Sequence[str]) -> str:
    return (
        f"{' and '.join(files)} ({_counts(local)}) are not in the fleet store and are "
        f"not read in fleet mode: run `{MIGRATE}` (`--dry-run` first to see the counts)"
    )


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{name}: {n}" for name, n in counts.items())
