"""The verdict: warnings never fail ``mir doctor``, one problem does."""

from __future__ import annotations

from mir.doctor import Check, Diagnosis
from mir.doctor.domain import ok, problem, warn


def test_no_checks_or_only_ok_and_warnings_exit_0():
    assert Diagnosis().exit_code == 0
    diagnosis = Diagnosis(checks=[ok("a", "fine"), warn("b", "hm", "maybe")])
    assert diagnosis.exit_code == 0
    assert diagnosis.problems == []
    assert diagnosis.as_json()["ok"] is True


def test_one_problem_among_many_exits_1_and_is_listed():
    bad = problem("c", "broken", "fix it")
    diagnosis = Diagnosis(checks=[ok("a", "fine"), bad, warn("b", "hm")])
    assert diagnosis.exit_code == 1
    assert diagnosis.problems == [bad]
    assert diagnosis.summary() == "3 check(s): 1 ok, 1 warning(s), 1 problem(s)"
    assert diagnosis.as_json()["ok"] is False


def test_json_has_one_entry_per_check_in_order_and_rows_match():
    diagnosis = Diagnosis(checks=[ok("a", "x"), problem("b", "y", "z")])
    entries = diagnosis.as_json()["checks"]
    assert [e["name"] for e in entries] == ["a", "b"]
    assert entries[1] == {"name": "b", "status": "problem", "found": "y", "fix": "z"}
    assert [row[0] for row in diagnosis.rows()] == ["a", "b"]
    assert diagnosis.rows()[1][1] == ("problem", "bold red")


def test_a_status_outside_ok_warn_problem_is_refused():
    import pytest
    from pydantic import ValidationError

    with pytest.raises(ValidationError):
        Check(name="a", status="bad", found="x")  # type: ignore[arg-type]
