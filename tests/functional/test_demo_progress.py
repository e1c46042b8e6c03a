"""`make demo` (examples/demo.py) shows progress while a slow command runs: the command's
output as it comes, and its elapsed time while it is still running."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

DEMO = Path(__file__).parents[2] / "examples" / "demo.py"

RUNNER = """
import importlib.util, sys
from pathlib import Path
spec = importlib.util.spec_from_file_location("demo", sys.argv[1])
demo = importlib.util.module_from_spec(spec)
spec.loader.exec_module(demo)
demo.MIR = Path(sys.argv[2])
demo.HEARTBEAT_S = 0.2
result = demo.mir("run", "agent", cwd=Path.cwd())
print("RESULT", result.returncode, repr(result.stdout))
"""


def test_a_slow_command_streams_its_output_and_says_it_is_still_running(tmp_path):
    slow = tmp_path / "slow-mir"
    slow.write_text("#!/bin/sh\necho deciding\nsleep 1\necho decided\n")
    slow.chmod(0o755)
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(DEMO), str(slow)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "$ mir run agent" or lines[1] == "$ mir run agent", lines
    deciding, decided = lines.index("deciding"), lines.index("decided")
    still = [i for i, line in enumerate(lines) if "still running (" in line]
    assert still and deciding < still[0] < decided, lines  # streamed, with a heartbeat
    assert any(line.startswith("  (took ") for line in lines), lines
    assert lines[-1] == "RESULT 0 'deciding\\ndecided\\n'"
