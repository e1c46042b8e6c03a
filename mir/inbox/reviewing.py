"""What a reviewer's click does: the same library calls ``mir approve`` / ``mir reject``
make, attributed to the logged-in reviewer and signed with that reviewer's key when
the server holds one.

The key is ``<keys_dir>/<reviewer>.key`` (``mir review serve --keys DIR``). Without it
the review is unsigned, and an action whose contract requires signed approvals refuses
it, exactly as it refuses an unsigned ``mir approve`` (nothing executes). One outcome per
flow holds here as everywhere: the ledger's claim decides a race with the CLI or another
reviewer's page, and the loser is told who won (``FlowAlreadyDecided``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mir.errors import UsageError
from mir.runtime import DecisionRecord

# A reviewer name becomes a file name: nothing that could leave the keys folder.
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-")


@dataclass(frozen=True)
class Reviewing:
    """The review calls of one project, made on behalf of one reviewer at a time."""

    project_root: Path
    keys_dir: Path | None = None

    def key_path(self, reviewer: str) -> Path | None:
        """The reviewer's private key file, when the server was given one."""
        if self.keys_dir is None or not _safe_name(reviewer):
            return None
        path = self.keys_dir / f"{reviewer}.key"
        return path if path.is_file() else None

    def signs_for(self, reviewer: str) -> bool:
        return self.key_path(reviewer) is not None

    def approve(
        self,
        flow_id: str,
        reviewer: str,
        *,
        reason: str | None,
        correction: Mapping[str, Any] | None = None,
    ) -> DecisionRecord:
        from mir.runtime import approve

        return approve(
            flow_id,
            project=self.project_root,
            by=reviewer,
            signing_key=self._signing_key(reviewer),
            correction=dict(correction) if correction else None,
            reason=reason,
        )

    def reject(self, flow_id: str, reviewer: str, *, reason: str | None) -> DecisionRecord:
        from mir.runtime import reject

        return reject(
            flow_id,
            project=self.project_root,
            by=reviewer,
            reason=reason,
            signing_key=self._signing_key(reviewer),
        )

    def _signing_key(self, reviewer: str) -> Any:
        path = self.key_path(reviewer)
        if path is None:
            return None
        from mir.reviewers import load_signing_key

        try:
            return load_signing_key(path)
        except UsageError as exc:  # a broken key file is the server's problem: say so
            raise UsageError(f"the server's key for {reviewer} cannot be read: {exc}") from exc


def _safe_name(name: str) -> bool:
    return 0 < len(name) <= 64 and set(name) <= _NAME_CHARS and not name.startswith(".")
