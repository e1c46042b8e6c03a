"""Agent states (active / SUSPENDED) in ``<state_dir>/agents.json``.

Written by ``mir agents suspend|resume`` and by drift monitors; read before every
decision. Updates take an exclusive ``flock`` and replace the file atomically, fsynced
(``mir.storage``), so a reader never sees half a file, two writers never lose each
other's change, and a suspension survives a power cut.
"""

from __future__ import annotations

import getpass
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mir.errors import ConfigError
from mir.storage import file_lock, write_atomic


def current_user() -> str:
    """Who approves, rejects or suspends: recorded with the change."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (containers)
        return "unknown"


def requester() -> str:
    """Who asks for a decision, recorded in its snapshot: ``$MIR_USER`` (a service that
    decides for its users sets it), else the OS user."""
    named = os.environ.get("MIR_USER", "").strip()
    return named or current_user()


class AgentStateFile:
    def __init__(self, path: Path):
        self.path = Path(path)

    def read(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise self._corrupt() from exc
        # A file that parses but is not {agent: {...}} is as corrupt as one that does not:
        # reading it as "no state" would silently resume a suspended agent.
        if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
            raise self._corrupt()
        for agent, entry in data.items():
            problem = _entry_problem(entry)
            if problem is not None:  # hand-edited: say which agent and field
                raise self._corrupt(f"{agent!r}: {problem}")
        return data

    def _corrupt(self, detail: str | None = None) -> ConfigError:
        return ConfigError(
            "agent state file is corrupt" + (f": {detail}" if detail else ""),
            where=str(self.path),
            hint="fix or delete it",
        )

    def is_suspended(self, agent: str) -> bool:
        return self.read().get(agent, {}).get("state") == "suspended"

    def set(self, agent: str, state: str, *, reason: str | None, by: str) -> dict[str, Any]:
        entry = {
            "state": state,
            "reason": reason,
            "by": by,
            "at": datetime.now(UTC).isoformat(),
        }
        with self._locked():
            data = self.read()
            data[agent] = entry
            write_atomic(self.path, json.dumps(data, indent=2, sort_keys=True))
        return entry

    @contextmanager
    def _locked(self) -> Iterator[None]:
        # 0o666 less the umask: what the plain open() this lock file had before gave it
        with file_lock(self.path.with_name(f"{self.path.name}.lock"), mode=0o666):
            yield


STATES = ("active", "suspended")


def _entry_problem(entry: dict[str, Any]) -> str | None:
    """What is wrong with one agent's entry (as mir writes it: a known state, texts or
    null, an ISO time), or None."""
    state = entry.get("state")
    if state not in STATES:
        return f"state is {state!r}, not one of {', '.join(STATES)}"
    for field in ("reason", "by", "at"):
        value = entry.get(field)
        if value is not None and not isinstance(value, str):
            return f"{field} is {value!r}, not text"
    at = entry.get("at")
    if at is not None:
        try:
            datetime.fromisoformat(at)
        except ValueError:
            return f"at is {at!r}, not an ISO time such as 2026-01-31T12:00:00+00:00"
    return None
