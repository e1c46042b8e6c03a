"""How many case runs a worker process is handed at once."""

from mir.evals.workers import MAX_BATCH, batch_size


def test_one_at_a_time_until_a_run_was_timed():
    assert batch_size(None) == 1


def test_fast_runs_are_batched_and_slow_ones_go_alone():
    assert batch_size(1.0) == 40  # scripted: ~40 ms of work per trip through the pipe
    assert batch_size(0.0) == MAX_BATCH
    assert batch_size(800.0) == 1  # a model: progress and Ctrl-C stay prompt
