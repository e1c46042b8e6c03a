"""How a drift result reads, for the terminal table and the HTML page alike."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from mir.drift import AgentDrift, MetricResult, Window, agent_notes, metric_cells, short_hashes

HEX = st.text(alphabet="0123456789abcdef", min_size=0, max_size=80)


@given(st.lists(st.one_of(HEX, st.text(max_size=10)), max_size=6))
def test_hashes_are_cut_to_twelve_and_cutting_twice_changes_nothing(parts: list[str]) -> None:
    text = " ".join(parts)
    once = short_hashes(text)
    assert short_hashes(once) == once
    assert len(once) <= len(text)
    for word in once.split(" "):
        if len(word) >= 20 and set(word) <= set("0123456789abcdef"):
            raise AssertionError(f"a long hash survived: {word}")


def test_a_rate_reads_as_a_percentage_and_its_levels_as_plain_numbers() -> None:
    m = MetricResult(
        metric="rate.fallback",
        kind="optimization",
        family="rate",
        reference=0.05,
        current=0.2,
        value=0.15,
        warn=0.05,
        suspend=0.1,
        verdict="suspend",
        detail="model " + "a" * 64,
    )
    cells = metric_cells(m)
    assert cells[:3] == ["rate.fallback", "5.0%", "20.0%"]
    assert cells[5] == "0.05/0.1"
    assert cells[6] == "suspend"
    assert cells[8] == "model " + "a" * 12


def _agent(*verdicts: str) -> AgentDrift:
    metrics = [
        MetricResult(metric=f"m{i}", kind="environmental", family="rate", verdict=v)
        for i, v in enumerate(verdicts)
    ]
    window = Window(label="24h", decisions=10)
    return AgentDrift(agent="shop.triage", reference=window, current=window, metrics=metrics)


def test_the_notes_under_an_agent_say_why_nothing_was_listed() -> None:
    none_moved = ["  2 metrics, none moved (--all to list them)"]
    assert agent_notes(_agent("ok", "ok"), False) == none_moved
    assert agent_notes(_agent("not_enough_data"), False) == [
        "  1 metrics: not enough data in a window to judge any (--all to list them)"
    ]
    assert agent_notes(_agent("warn", "ok"), False) == []
    assert agent_notes(_agent("ok"), True) == []
