"""watchdog's own shutdown race must not print a stray line on a user's stderr.

Run in a fresh interpreter: pytest's logging plugin gives the root logger handlers,
which would hide the line whatever mir does.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = """
import logging, sys
from pathlib import Path
from mir.models import RegistryWatcher
subscription = RegistryWatcher.for_root(Path(sys.argv[1])).subscribe(lambda registry: None)
# what InotifyEmitter logs when it is stopped before its thread ran
logging.getLogger("watchdog.observers.inotify").error(
    "InotifyEmitter.queue_events() called when the thread is inactive"
)
subscription.close()
"""


def test_watchdog_errors_never_reach_the_users_stderr(tmp_path: Path):
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "InotifyEmitter" not in done.stderr
