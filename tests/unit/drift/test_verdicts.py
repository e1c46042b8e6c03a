"""Verdicts, levels, windows and the contract's `drift:` section."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from mir.contracts import DriftSettings, is_drift_metric
from mir.drift.domain import Levels, judge
from mir.drift.metrics import MetricVerdicts
from mir.drift.windows import WindowOptions, parse_duration
from mir.errors import UsageError

LEVELS = Levels(warn=0.1, suspend=0.2)


@pytest.mark.parametrize(
    ("value", "p", "enough", "verdict"),
    [
        (0.05, None, True, "ok"),
        (0.15, None, True, "warn"),
        (-0.25, None, True, "suspend"),  # a drop is drift too: levels apply to |value|
        (0.25, 0.005, True, "warn"),  # past suspend, but p is not below alpha / 10
        (0.25, 0.0001, True, "suspend"),
        (0.15, 0.02, True, "ok"),  # a large-looking change that is not evidence
        (0.9, 0.0, False, "not_enough_data"),  # never trips below min_samples
        (None, None, True, "ok"),
    ],
)
def test_judge(value, p, enough, verdict):
    assert judge(value, p, LEVELS, enough=enough, alpha=0.01) == verdict


def test_a_metric_without_levels_is_information_only():
    assert judge(5.0, None, Levels(), enough=True, alpha=0.01) == "info"


def test_contract_levels_override_the_defaults_and_min_samples_applies():
    strict = MetricVerdicts(
        min_samples=10, overrides={"rate.fallback": Levels(warn=0.01, suspend=0.02)}
    )
    result = strict.rate("rate.fallback", (1, 100, 5, 100))
    assert (result.value, result.verdict) == (pytest.approx(0.04), "ok")  # p = 0.097
    result = strict.rate("rate.fallback", (10, 1000, 60, 1000))
    assert result.verdict == "suspend" and result.kind == "environmental"
    assert MetricVerdicts(min_samples=2000).rate("rate.fallback", (10, 1000, 60, 1000)).verdict == (
        "not_enough_data"
    )


def test_a_change_point_is_listed_whatever_the_sample_size():
    result = MetricVerdicts(min_samples=500).change("model", ["m2 (from 2026-11-23 09:00)"], (3, 4))
    assert (result.verdict, result.kind, result.detail) == (
        "warn",
        "semantic",
        "m2 (from 2026-11-23 09:00)",
    )


@pytest.mark.parametrize(("text", "seconds"), [("90s", 90), ("15m", 900), ("24h", 86400)])
def test_durations(text, seconds):
    assert parse_duration(text, "--window").total_seconds() == seconds


@pytest.mark.parametrize("text", ["", "24", "h", "0d", "1.5h", "-2d", "3y"])
def test_bad_durations_are_usage_errors(text):
    with pytest.raises(UsageError, match="bad --window"):
        parse_duration(text, "--window")


def test_window_options_reject_contradictions():
    with pytest.raises(UsageError, match="--reference-last needs --last"):
        WindowOptions(reference_last=10).check()
    with pytest.raises(UsageError, match="both choose the reference"):
        WindowOptions(last=5, reference_last=10, reference="7d").check()
    assert WindowOptions(reference="baseline").frozen_reference == "baseline"
    assert WindowOptions(reference="7d").frozen_reference is None


def test_the_contract_section_knows_every_metric_name():
    assert is_drift_metric("action.psi") and is_drift_metric("field.amount.ks")
    assert not is_drift_metric("field..ks") and not is_drift_metric("field.amount.mean")
    settings = DriftSettings(thresholds={"field.priority.js": {"warn": 0.2}})
    assert settings.min_samples == 200
    with pytest.raises(ValidationError, match="unknown drift metric"):
        DriftSettings(thresholds={"action.pis": {"warn": 0.1}})


def test_every_metric_name_has_a_kind():
    from mir.contracts import DRIFT_METRICS
    from mir.drift.domain import METRIC_KINDS

    assert set(DRIFT_METRICS) == set(METRIC_KINDS)
