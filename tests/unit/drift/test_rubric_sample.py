"""Rubric drift's sample: the same decisions every run (md5 of the flow id, in SQL and in
Python alike), a share or a count, never more than the window holds; the contract's
rubric settings are checked when it loads."""

from __future__ import annotations

import uuid

import duckdb
import pytest
from pydantic import ValidationError

from mir.contracts import DriftSettings
from mir.drift.rubrics import RubricGrader, sample_order, sample_size


@pytest.fixture
def flows():
    con = duckdb.connect()
    ids = [uuid.UUID(int=i * 7919 + 13).hex for i in range(300)]
    con.execute("CREATE TEMP TABLE drift_flows (side VARCHAR, flow_id VARCHAR)")
    con.executemany(
        "INSERT INTO drift_flows VALUES (?, ?)",
        [("reference" if i < 200 else "current", f) for i, f in enumerate(ids)],
    )
    grader = RubricGrader(con, lambda where: "", None, open_judge=object)  # type: ignore[arg-type]
    yield grader, ids
    con.close()


def rubric(sample: float):
    return DriftSettings(rubrics=[{"name": "r", "rubric": "ok?", "sample": sample}]).rubrics[0]


def test_the_sample_is_the_first_flows_by_md5_and_the_same_every_run(flows):
    grader, ids = flows
    counts = {"reference": 200, "current": 100}
    first = grader._sample(rubric(25), counts)
    assert first == grader._sample(rubric(25), counts)
    assert first["reference"] == sorted(ids[:200], key=sample_order)[:25]
    assert first["current"] == sorted(ids[200:], key=sample_order)[:25]
    # a bigger sample keeps the smaller one (a rerun with more grades nothing twice)
    assert grader._sample(rubric(50), counts)["current"][:25] == first["current"]


def test_a_share_or_a_count_never_more_than_the_window():
    assert sample_size(0.1, 420) == 42
    assert sample_size(0.001, 420) == 1
    assert sample_size(50, 420) == 50
    assert sample_size(50, 12) == 12
    assert sample_size(0.5, 0) == 0


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"rubrics": [{"name": "r", "rubric": "x", "sample": 2.5}]}, "a whole count"),
        ({"rubrics": [{"name": "r", "rubric": "x", "sample": 501}]}, "less than or equal"),
        ({"rubrics": [{"name": "r", "rubric": "x"}] * 2}, "two rubrics share a name"),
        ({"thresholds": {"rubric:nope": {"warn": 0.1}}}, "unknown drift metric(s) 'rubric:nope'"),
    ],
)
def test_bad_rubric_settings_are_refused(settings, message):
    with pytest.raises(ValidationError, match=message.replace("(", r"\(").replace(")", r"\)")):
        DriftSettings(**settings)


def test_a_threshold_may_name_a_declared_rubric():
    settings = DriftSettings(
        rubrics=[{"name": "tone", "rubric": "polite?"}],
        thresholds={"rubric:tone": {"warn": 0.05, "suspend": 0.1}},
    )
    assert settings.thresholds["rubric:tone"].suspend == 0.1


def test_the_default_rubric_levels_hold_on_stable_scores():
    """Two samples of 50 graded decisions from the same score distribution (a judge's
    coarse scores), 200 times: suspend <= 1 %, warn <= 5 % (both measured: 0 %)."""
    import random

    from mir.drift import statistics as stats
    from mir.drift.metrics import MetricVerdicts

    rng = random.Random(11)
    scores, weights = [0.0, 0.25, 0.5, 0.75, 1.0], [0.1, 0.1, 0.2, 0.3, 0.3]
    verdicts = []
    for _ in range(200):
        ref = rng.choices(scores, weights, k=50)
        cur = rng.choices(scores, weights, k=50)
        drop = max(sum(ref) / 50 - sum(cur) / 50, 0.0)
        p = stats.ks_pvalue(stats.ks_statistic(stats.merge_samples(ref, cur)), 50, 50)
        verdicts.append(
            MetricVerdicts().result(
                "rubric:r", "rubric", value=drop, p_value=p, n=(50, 50), min_samples=30
            )
        )
    share = {v: sum(m.verdict == v for m in verdicts) / 200 for v in ("warn", "suspend")}
    assert share["suspend"] <= 0.01 and share["warn"] <= 0.05, share
    # and a real drop (0.7 -> 0.4 mean) is caught at that sample size
    ref = rng.choices(scores, weights, k=50)
    cur = rng.choices([0.0, 0.25, 0.5], k=50)
    p = stats.ks_pvalue(stats.ks_statistic(stats.merge_samples(ref, cur)), 50, 50)
    drop = sum(ref) / 50 - sum(cur) / 50
    verdict = (
        MetricVerdicts().result("rubric:r", "rubric", value=drop, p_value=p, n=(50, 50)).verdict
    )
    assert verdict == "not_enough_data"  # the agent's floor (200) is not the rubric's
    caught = MetricVerdicts().result(
        "rubric:r", "rubric", value=drop, p_value=p, n=(50, 50), min_samples=30
    )
    assert caught.verdict == "suspend", (drop, p)
