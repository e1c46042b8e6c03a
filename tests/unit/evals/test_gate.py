"""The gate on hand-built runs: the issue's three scenarios and the rules around them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mir.evals.baselines import baseline_of
from mir.evals.domain import AssertionResult
from tests.unit.evals.gate_factories import make_run, make_suite, result_of, runs_of

OUTCOMES = st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans()), min_size=1, max_size=60)

IDS = [f"case-{i:02d}" for i in range(40)]


def _baseline(suite, outcomes=None):
    outcomes = outcomes or dict.fromkeys((c.id for c in suite.cases), True)
    return baseline_of(result_of(suite, runs_of(outcomes)))


def test_planted_regression_of_six_in_forty_fails_and_names_them() -> None:
    suite = make_suite(IDS)
    broken = IDS[3:9]
    now = {i: i not in broken for i in IDS}
    result = result_of(suite, runs_of(now), baseline=_baseline(suite))
    assert not result.gate.passed
    assert result.comparison is not None
    assert result.comparison.broken == tuple(broken)
    assert result.comparison.p_value == pytest.approx(2 / 64)
    (reason,) = result.gate.reasons
    assert "6 broken, 0 fixed: a regression" in reason
    assert all(case_id in reason for case_id in broken)
    changes = {s.case_id: s.change for s in result.cases}
    assert changes["case-03"] == "broken" and changes["case-00"] is None


def test_two_broken_two_fixed_is_noise_and_passes() -> None:
    suite = make_suite(IDS)
    before = {i: i not in ("case-10", "case-11") for i in IDS}
    now = {i: i not in ("case-01", "case-02") for i in IDS}
    result = result_of(suite, runs_of(now), baseline=_baseline(suite, before))
    assert result.gate.passed
    assert result.comparison.fixed == ("case-10", "case-11")
    assert result.comparison.broken == ("case-01", "case-02")
    assert result.gate.reasons == (
        "2 broken, 2 fixed: within noise (McNemar p = 1.00, alpha 0.05)",
    )


def test_a_broken_critical_case_fails_alone() -> None:
    suite = make_suite(IDS, critical=["case-07"])
    now = {i: i != "case-07" for i in IDS}
    result = result_of(suite, runs_of(now), baseline=_baseline(suite))
    assert not result.gate.passed
    assert result.gate.reasons == ("critical case broken: case-07",)


def test_a_critical_case_failing_in_the_baseline_too_does_not_gate() -> None:
    suite = make_suite(IDS, critical=["case-07"])
    now = {i: i != "case-07" for i in IDS}
    result = result_of(suite, runs_of(now), baseline=_baseline(suite, now))
    assert result.gate.passed
    assert result.comparison.still_failing == ("case-07",)
    assert result.gate.reasons[0].startswith("no case changed against the baseline")


def test_without_a_baseline_a_failure_gates_unless_a_threshold_allows_it() -> None:
    suite = make_suite(["a", "b", "c", "d"], min_pass_rate=0.8)
    result = result_of(suite, runs_of({"a": True, "b": True, "c": True, "d": False}))
    assert not result.gate.passed
    assert result.gate.pass_rate == 0.75
    assert result.gate.reasons == ("pass rate 75.0% is below min_pass_rate 80.0%",)
    assert result.comparison is None
    tolerant = make_suite(["a", "b", "c", "d"], min_pass_rate=0.7)
    assert result_of(tolerant, runs_of({"a": True, "b": True, "c": True, "d": False})).gate.passed
    # no baseline and no threshold: nothing says the failure is known or tolerated
    bare = make_suite(["a", "b", "c", "d"])
    failed = result_of(bare, runs_of({"a": True, "b": True, "c": True, "d": False}))
    assert not failed.gate.passed
    assert failed.gate.reasons[0].startswith("1 of 4 runs failed, with no baseline")
    clean = result_of(bare, runs_of(dict.fromkeys("abcd", True)))
    assert clean.gate.passed and "every run passed" in clean.gate.reasons[0]
    critical = make_suite(["a", "b"], critical=["b"], min_pass_rate=0.5)
    failing = result_of(critical, runs_of({"a": True, "b": False}))
    assert failing.gate.reasons == ("critical case failing: b",)


def test_alpha_is_the_suites() -> None:
    suite = make_suite(IDS, alpha=0.01)
    now = {i: i not in IDS[:6] for i in IDS}
    result = result_of(suite, runs_of(now), baseline=_baseline(suite))
    assert result.gate.passed  # p = 0.031 is not below 0.01
    assert "6 broken, 0 fixed: within noise (McNemar p = 0.03, alpha 0.01)" in result.gate.reasons


def test_repeats_pair_on_pass_hat_k_and_flaky_cases_are_listed() -> None:
    suite = make_suite(["a", "b"], repeat=3)
    runs = [make_run("a", True, repeat=r) for r in range(3)] + [
        make_run("b", r != 1, repeat=r)
        for r in (2, 0, 1)  # out of order, as -j returns them
    ]
    result = result_of(suite, runs)
    a, b = result.cases
    assert (a.runs, a.passes, a.pass_all, a.pass_any, a.flaky) == (3, 3, True, True, False)
    assert (b.runs, b.passes, b.pass_all, b.pass_any, b.flaky) == (3, 2, False, True, True)
    assert result.flaky == ("b",)
    assert [(r.case_id, r.repeat) for r in result.runs][3:] == [("b", 0), ("b", 1), ("b", 2)]
    assert result.gate.pass_rate == pytest.approx(5 / 6)
    later = result_of(suite, runs, baseline=baseline_of(result_of(suite, runs)))
    assert later.comparison.still_failing == ("b",)


def test_new_and_removed_cases() -> None:
    old = make_suite(["a", "b", "gone"])
    baseline = baseline_of(result_of(old, runs_of({"a": True, "b": True, "gone": True})))
    suite = make_suite(["a", "b", "fresh"])
    result = result_of(suite, runs_of({"a": True, "b": True, "fresh": False}), baseline=baseline)
    assert result.comparison.new == ("fresh",)
    assert result.comparison.removed == ("gone",)
    assert result.comparison.still_passing == 2
    assert result.gate.passed


def test_an_interrupted_run_concludes_on_what_ran_and_says_so() -> None:
    suite = make_suite(IDS)
    result = result_of(suite, runs_of({i: True for i in IDS[:10]}), interrupted=True)
    assert result.interrupted and result.gate.passed
    assert result.gate.reasons[-1] == "interrupted: concluded on the 10 of 40 runs that finished"
    assert len(result.cases) == 10
    repeated = result_of(
        suite, runs_of({i: True for i in IDS[:10]}), interrupted=True, planned_runs=120
    )
    assert repeated.gate.reasons[-1] == "interrupted: concluded on the 10 of 120 runs that finished"


def test_judge_note_and_position_consistency() -> None:
    def pairwise(consistent: bool) -> AssertionResult:
        return AssertionResult(
            type="pairwise", tier="judge", passed=True, position_consistent=consistent
        )

    suite = make_suite(["a", "b"])
    runs = [
        make_run("a", True, assertions=(pairwise(True), pairwise(True))),
        make_run("b", True, assertions=(pairwise(False), pairwise(True))),
    ]
    result = result_of(
        suite, runs, judge_gating=False, judge_note="judge kappa 0.41 < min_kappa 0.6"
    )
    assert result.position_consistency == 0.75
    assert not result.gate.judge_gating
    assert result.gate.judge_note == "judge kappa 0.41 < min_kappa 0.6"
    assert result_of(suite, runs_of({"a": True, "b": True})).position_consistency is None


def test_confidence_report() -> None:
    suite = make_suite(["a", "b", "c", "d", "e"])
    runs = [
        make_run("a", True, confidence=0.9),
        make_run("b", False, confidence=0.95),
        make_run("c", False, confidence=0.2),
        make_run("d", True, confidence=0.6),
        make_run("e", False),  # no decision, no confidence: left out
    ]
    report = result_of(suite, runs, confidence_source="logprobs").confidence
    assert report.source == "logprobs" and report.samples == 4 and report.wrong == 2
    assert report.review_threshold == 0.6
    assert report.wrong_sent_to_review == 0.5  # 0.2 is below 0.6; 0.95 is not
    # bins: 9 -> {0.9 ok, 0.95 wrong}: |0.5 - 0.925| * 2/4; 2 -> |0 - 0.2| / 4; 6 -> 0.4 / 4
    assert report.ece == pytest.approx(0.425 * 0.5 + 0.05 + 0.1)


def test_no_runs_at_all() -> None:
    result = result_of(make_suite(["a"]), [], interrupted=True)
    assert result.gate.passed and result.gate.pass_rate == 0.0
    assert result.confidence.samples == 0 and result.confidence.ece is None


@settings(max_examples=150, deadline=None)
@given(OUTCOMES, st.sampled_from([0.01, 0.05, 0.2]), st.sampled_from([None, 0.5, 0.9]))
def test_the_gate_follows_its_three_rules(rows, alpha, min_pass_rate) -> None:
    """Random baselines and runs: the comparison partitions the cases, and the gate
    fails exactly when a rule says so."""
    from mir.evals.statistics import mcnemar_exact

    ids = [f"c{i}" for i in range(len(rows))]
    critical = [i for i, (_, _, crit) in zip(ids, rows, strict=True) if crit]
    suite = make_suite(ids, critical=critical, alpha=alpha, min_pass_rate=min_pass_rate)
    before = {i: was for i, (was, _, _) in zip(ids, rows, strict=True)}
    now = {i: is_ for i, (_, is_, _) in zip(ids, rows, strict=True)}
    result = result_of(suite, runs_of(now), baseline=_baseline(suite, before))
    comparison = result.comparison
    broken = [i for i in ids if before[i] and not now[i]]
    fixed = [i for i in ids if not before[i] and now[i]]
    assert list(comparison.broken) == broken and list(comparison.fixed) == fixed
    assert list(comparison.still_failing) == [i for i in ids if not before[i] and not now[i]]
    assert comparison.still_passing == sum(before[i] and now[i] for i in ids)
    p = mcnemar_exact(len(broken), len(fixed))
    assert comparison.p_value == p
    rate = sum(now.values()) / len(ids)
    should_fail = (
        (len(broken) > len(fixed) and p < alpha)
        or any(i in critical for i in broken)
        or (min_pass_rate is not None and rate < min_pass_rate)
    )
    assert result.gate.passed is not should_fail
    assert result.gate.reasons  # always says why, in words
