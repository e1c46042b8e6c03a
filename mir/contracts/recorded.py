"""The contract a flow names in its snapshot (``contract``: a path relative to the project
root, or absolute), loaded once per path for everything that reads many flows (the
review queue, the review audit of ``mir traces verify``).

A contract that is gone or no longer loads is ``None``: the reader then has no rule to
hold the flow to, and says so in its own way; it never stops the whole read.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from mir.contracts.domain import AgentContract
from mir.contracts.entrypoints import load_contract
from mir.errors import MirUserError


class RecordedContracts:
    """Contracts by the reference flows recorded, each loaded (and hashed) once."""

    def __init__(self, root: Path):
        self.root = root
        self._loaded: dict[str, tuple[AgentContract | None, str]] = {}

    def get(self, ref: Any) -> AgentContract | None:
        return self._entry(ref)[0]

    def digest(self, ref: Any) -> str:
        """The first 32 hex digits of the file's sha256 as loaded ("-": none loaded)."""
        return self._entry(ref)[1]

    def _entry(self, ref: Any) -> tuple[AgentContract | None, str]:
        if not isinstance(ref, str) or not ref:
            return None, "-"
        if ref not in self._loaded:
            path = Path(ref) if Path(ref).is_absolute() else self.root / ref
            try:
                data = path.read_bytes()
                self._loaded[ref] = (load_contract(path), hashlib.sha256(data).hexdigest()[:32])
            except (MirUserError, OSError):
                self._loaded[ref] = (None, "-")
        return self._loaded[ref]
