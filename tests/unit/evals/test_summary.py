"""What ``mir eval``'s table and progress say in words, from hand-built results."""

from __future__ import annotations

import time

from hypothesis import given
from hypothesis import strategies as st

from mir.evals import (
    LineProgress,
    baseline_notes,
    case_lines,
    has_repeats,
    judge_line,
    outcome_words,
    sparkline,
    suite_notes,
)
from mir.evals.domain import EvalReport
from tests.unit.evals.gate_factories import make_run, make_suite, result_of


def test_outcomes_say_nothing_executes():
    assert outcome_words("executed", "refund") == "would execute refund"
    assert outcome_words("pending_review", "refund") == "refund, to review"
    assert outcome_words("fallback", None) == "fallback: no action"
    assert outcome_words(None, None) == "no decision"
    assert outcome_words("aborted", None) == "aborted"
    assert outcome_words("rejected", "refund") == "rejected: refund"


def test_a_case_line_names_its_first_failure_and_its_style():
    suite = make_suite(["a", "b", "c"], repeat=2)
    runs = [make_run("a", True), make_run("a", True, repeat=1)]
    runs += [make_run("b", False), make_run("b", True, repeat=1)]
    runs += [make_run("c", False), make_run("c", False, repeat=1)]
    result = result_of(suite, runs)
    lines = {line.case_id: line for line in case_lines(result)}
    assert [lines[c].style for c in "abc"] == ["green", "yellow", "red"]
    assert lines["b"].passed == "1/2" and lines["a"].first_failure == ""
    assert lines["c"].first_failure == "action: expected 'reply', got 'escalate'"
    assert lines["a"].outcome == "would execute reply"
    assert has_repeats(result)
    totals = suite_notes(result)[0][0]
    assert totals.startswith("pass^k (every run passed): 1/3 cases")
    assert "pass@k (one run passed): 2/3 cases" in totals


def test_the_judge_line_is_short_unless_verbose():
    result = result_of(make_suite(["a"]), [make_run("a", True)])
    gate = result.gate.model_copy(update={"judge_note": "judge uncalibrated: no kappa yet"})
    noted = result.model_copy(update={"gate": gate})
    assert judge_line(result, verbose=False) == ""
    assert judge_line(noted, verbose=False) == (
        "judge: reported, not gating (uncalibrated; -v says why)"
    )
    assert judge_line(noted, verbose=True).endswith("not gating: judge uncalibrated: no kappa yet")


def test_baseline_notes_count_known_failures_and_refuse_an_interrupted_run():
    failing = result_of(make_suite(["a", "b"]), [make_run("a", False), make_run("b", True)])
    stopped = failing.model_copy(update={"interrupted": True})
    notes = baseline_notes(EvalReport(suites=(failing, stopped), exit_code=0))
    assert "1 failing case recorded as a known failure" in notes[0]
    assert notes[1].endswith("interrupted: baseline NOT updated")


@given(st.lists(st.floats(min_value=-1, max_value=2, allow_nan=False), max_size=30))
def test_a_sparkline_has_one_block_per_run_on_an_absolute_scale(rates):
    line = sparkline(rates)
    assert len(line) == len(rates)
    for rate, block in zip(rates, line, strict=True):
        if rate >= 1:
            assert block == "█"
        if rate <= 0:
            assert block == "▁"


def test_plain_progress_lines_go_to_the_writer():
    lines: list[str] = []
    progress = LineProgress(lines.append)
    progress.start(2)
    progress.advance("triage.yaml", make_run("a", True))
    progress.stop("interrupted")
    assert lines[0].startswith("[1/2] pass  triage.yaml a #1 would execute reply ")
    assert "ETA " in lines[0]
    assert lines[1] == "interrupted: finishing the runs in flight (Ctrl-C again to stop at once)"
    assert time.monotonic() >= progress.started
