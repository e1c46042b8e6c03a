"""What ``mir doctor`` reports: one ``Check`` per thing looked at, and the verdict
(exit 0 when no check found a problem, warnings allowed; 1 on any problem)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Status = Literal["ok", "warn", "problem"]
COLUMNS = ("check", "status", "found", "fix")
STYLES = {"ok": "green", "warn": "yellow", "problem": "bold red"}


class Check(BaseModel):
    """One row: what was checked, how it stands, what was found, and for a problem the fix."""

    name: str
    status: Status
    found: str
    fix: str | None = None


def ok(name: str, found: str) -> Check:
    return Check(name=name, status="ok", found=found)


def warn(name: str, found: str, fix: str | None = None) -> Check:
    return Check(name=name, status="warn", found=found, fix=fix)


def problem(name: str, found: str, fix: str) -> Check:
    return Check(name=name, status="problem", found=found, fix=fix)


class Diagnosis(BaseModel):
    """Every check that ran, in order."""

    checks: list[Check] = Field(default_factory=list)

    @property
    def problems(self) -> list[Check]:
        return [check for check in self.checks if check.status == "problem"]

    @property
    def exit_code(self) -> int:
        return 1 if self.problems else 0

    def summary(self) -> str:
        counts = {s: sum(c.status == s for c in self.checks) for s in ("ok", "warn", "problem")}
        return (
            f"{len(self.checks)} check(s): {counts['ok']} ok, {counts['warn']} warning(s), "
            f"{counts['problem']} problem(s)"
        )

    def rows(self) -> list[tuple[object, ...]]:
        """The table's cells: status styled, an empty fix as ``-``."""
        return [(c.name, (c.status, STYLES[c.status]), c.found, c.fix) for c in self.checks]

    def as_json(self) -> dict[str, object]:
        return {
            "ok": not self.problems,
            "summary": self.summary(),
            "checks": [c.model_dump(mode="json") for c in self.checks],
        }
