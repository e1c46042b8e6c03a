"""The baseline file: JSON, sorted, one entry per (code, path, importer, imported)."""

from __future__ import annotations

import json
from pathlib import Path

from mir.boundaries.report import BaselineEntry
from mir.errors import ConfigError, UsageError
from mir.storage import write_atomic

BASELINE_VERSION = 1


class JsonBaselineFile:
    """``BaselineStore`` in a JSON file meant to be committed next to the code."""

    def __init__(self, path: Path, shown_as: str | None = None) -> None:
        self.path = path
        self._shown = shown_as or str(path)

    @property
    def location(self) -> str:
        return self._shown

    def ensure_exists(self) -> None:
        """``UsageError`` naming the path when there is no such file."""
        if not self.path.is_file():
            raise UsageError(
                "baseline file not found",
                where=self._shown,
                hint="check the path, or create it with --update-baseline",
            )

    def load(self) -> list[BaselineEntry]:
        """The recorded entries. A missing file is an error, not an empty baseline: a
        misspelled path would otherwise silently fail every known finding (or, in a
        pipeline that tolerates exit 1, hide that the baseline is not applied at all);
        ``--update-baseline`` writes the file before it is loaded."""
        self.ensure_exists()
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return [
                BaselineEntry(
                    code=str(item["code"]),
                    path=str(item["path"]),
                    importer=item.get("importer"),
                    imported=item.get("imported"),
                    count=int(item.get("count", 1)),
                )
                for item in data["findings"]
            ]
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(
                f"not a mir baseline file ({exc})",
                where=self._shown,
                hint="re-create it with --update-baseline",
            ) from exc

    def write(self, entries: list[BaselineEntry]) -> None:
        payload = {
            "version": BASELINE_VERSION,
            "tool": "mir lint boundaries",
            "findings": [entry.as_dict() for entry in entries],
        }
        # never create folders: `--baseline typo/lint-baseline.json --update-baseline`
        # made a `typo/` folder and said "Baseline written", as other paths say it
        folder = self.path.parent
        if not folder.is_dir():
            raise UsageError(
                f"folder {folder} does not exist",
                where=self._shown,
                hint=f"create it first: mkdir -p {folder}, or check the path",
            )
        try:
            # replaced whole (a crash never leaves a torn committed baseline), through a
            # symlink to its target as a plain write would
            write_atomic(self.path.resolve(), json.dumps(payload, indent=2) + "\n")
        except OSError as exc:
            raise UsageError(
                f"cannot write the baseline: {exc.strerror}", where=self._shown
            ) from exc
