"""The eval progress's time left: the mean pace of the finished runs, times what is left."""

from __future__ import annotations

import time

from mir.evals.progress_lines import eta


def test_no_estimate_before_the_first_run_ends():
    assert eta(time.monotonic(), 0, 10) == "-:--"


def test_the_estimate_is_the_mean_pace_times_the_runs_left():
    now = time.monotonic()
    assert eta(now - 120, 2, 5) == "3:00"  # 60 s a run, 3 left
    assert eta(now - 7200, 1, 2) == "2:00:00"
    assert eta(now - 10, 5, 5) == "0:00"
