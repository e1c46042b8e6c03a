"""The execution ledger: one file per idempotency key under ``<state_dir>/executions``.

``os.open(O_CREAT | O_EXCL)`` is atomic on every local filesystem: exactly one process
can create the claim file, whatever the others do and whenever any of them dies. The
claim is made (and fsynced) BEFORE the executor runs and the outcome written after, so a
claim without an outcome is a crash in the middle: "in doubt", never run again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

_OUTCOME = ".outcome"


class FileExecutionLedger:
    def __init__(self, folder: Path):
        self.folder = Path(folder)

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
            os.write(fd, json.dumps(dict(info), default=str).encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        return True

    def complete(self, key: str, outcome: Mapping[str, Any]) -> None:
        path = self._path(key).with_suffix(_OUTCOME)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(dict(outcome), default=str), encoding="utf-8")
        os.replace(tmp, path)

    def outcome(self, key: str) -> Mapping[str, Any] | None:
        try:
            return json.loads(self._path(key).with_suffix(_OUTCOME).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
