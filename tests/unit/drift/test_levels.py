"""A contract's drift levels: a level whose warn is above its suspend is refused (a metric
would suspend before it warns), and a misspelt metric name gets the closest known one."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from mir.contracts import DRIFT_METRICS, DriftLevel, DriftSettings

LEVEL = st.one_of(st.none(), st.floats(min_value=0, max_value=1e6, allow_nan=False))


@given(LEVEL, LEVEL)
def test_a_level_is_refused_exactly_when_warn_is_above_suspend(warn, suspend):
    inverted = warn is not None and suspend is not None and warn > suspend
    if inverted:
        with pytest.raises(ValidationError, match="a metric would suspend the agent before"):
            DriftLevel(warn=warn, suspend=suspend)
    else:
        DriftLevel(warn=warn, suspend=suspend)


@pytest.mark.parametrize("metric", DRIFT_METRICS)
def test_every_known_metric_is_accepted_and_a_typo_of_it_is_named(metric: str):
    DriftSettings(thresholds={metric: {"warn": 0.1}})
    typo = metric[:-1] + ("x" if metric[-1] != "x" else "y")
    with pytest.raises(ValidationError) as raised:
        DriftSettings(thresholds={typo: {"warn": 0.1}})
    message = str(raised.value)
    [guess] = [known for known in DRIFT_METRICS if f"did you mean '{known}'?" in message]
    assert guess.partition(".")[0] == metric.partition(".")[0]  # the metric or a sibling
