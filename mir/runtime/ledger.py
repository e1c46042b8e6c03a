"""The execution ledger: one file per idempotency key under ``<state_dir>/executions``.

``os.open(O_CREAT | O_EXCL)`` is atomic on every local filesystem: exactly one process
can create the claim file, whatever the others do and whenever any of them dies. The
claim (first line) is written BEFORE the executor runs and the outcome (second line)
after, so a claim without a complete outcome line is a crash in the middle: "in doubt",
never run again.

A claim survives the claiming process being killed as soon as ``os.open`` returns (the
kernel has the file). Surviving a power loss needs ``fsync`` of the file and its folder:
that costs milliseconds per decision, so it follows the same switch as the trace store
(``[tool.mir.traces] fsync = true``), whose events a resume needs just as much.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any


class FileExecutionLedger:
    def __init__(self, folder: Path, *, fsync: bool = False):
        self.folder = Path(folder)
        self.fsync = fsync
        # Claim files stay open until their outcome is written: one open per execution.
        self._claimed: dict[str, int] = {}

    def _path(self, key: str) -> Path:
        if not key.isalnum():  # keys are hex digests; anything else must not make a path
            raise ValueError(f"bad idempotency key {key!r}")
        return self.folder / key

    def claim(self, key: str, info: Mapping[str, Any]) -> bool:
        self.folder.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(self._path(key), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            return False
        try:
            os.write(fd, (json.dumps(dict(info), default=str) + "\n").encode("utf-8"))
            if self.fsync:
                os.fsync(fd)
                self._sync_folder()
        except BaseException:
            os.close(fd)
            raise
        self._claimed[key] = fd
        return True

    def complete(self, key: str, outcome: Mapping[str, Any]) -> None:
        line = (json.dumps(dict(outcome), default=str) + "\n").encode("utf-8")
        fd = self._claimed.pop(key, None)
        if fd is None:
            fd = os.open(self._path(key), os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, line)
            if self.fsync:
                os.fsync(fd)
        finally:
            os.close(fd)

    def outcome(self, key: str) -> Mapping[str, Any] | None:
        try:
            lines = self._path(key).read_text(encoding="utf-8").split("\n")
        except FileNotFoundError:
            return None
        if len(lines) < 3:  # claim line, outcome line, and the final newline's empty tail
            return None
        try:
            return json.loads(lines[1])
        except json.JSONDecodeError:  # torn write: the process died while recording
            return None

    def _sync_folder(self) -> None:
        fd = os.open(self.folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
