"""Running mir's own Python entry points in a child process, with a probe around them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_python(code: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -c CODE ARGS`` in ``cwd`` with the terminal settings functional tests use."""
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
