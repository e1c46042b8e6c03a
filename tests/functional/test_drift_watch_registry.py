"""`mir drift watch` re-checks at once when models.toml changes (a promotion must not
wait for the next tick to be watched)."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from tests.conftest import MIR_EXE
from tests.functional.test_drift_cli import WEEK4, desk, month  # noqa: F401 (fixture)


def test_a_models_toml_change_runs_the_next_check_at_once(desk: Path) -> None:  # noqa: F811
    month(desk)
    watch = subprocess.Popen(
        [str(MIR_EXE), "drift", "watch", "--every", "600s", "--iterations", "2", *WEEK4],
        cwd=desk,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "100", "NO_COLOR": "1"},
    )
    try:
        assert watch.stdout is not None
        while "refunds.triage" not in watch.stdout.readline():
            assert watch.poll() is None, watch.stderr.read() if watch.stderr else ""
        time.sleep(0.5)  # the observer is running before the first report is printed
        (desk / "model.gguf").write_bytes(b"GGUF")
        (desk / "models.toml").write_text(
            '[[models]]\nname = "triage"\nversion = "1"\nstage = "production"\n'
            'artifact = "model.gguf"\n'
        )
        changed = time.monotonic()
        out, err = watch.communicate(timeout=60)  # not 600 s: the change woke it
    finally:
        if watch.poll() is None:
            watch.kill()
    assert time.monotonic() - changed < 60
    assert watch.returncode == 1, err
    assert "refunds.triage" in out
