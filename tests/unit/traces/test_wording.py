"""What ``mir traces show`` puts in an event's row and below the table."""

from __future__ import annotations

from mir.traces import EVENT_COLUMNS, TraceEvent, event_cells, event_details


def test_an_event_row_joins_reasons_and_cuts_the_prompt_hash() -> None:
    event = TraceEvent(
        flow_id="f", seq=2, step="infer", agent="a", provider="llama", model="m",
        reasons=("schema_invalid", "retry"), prompt_hash="ab" * 32, prompt_tokens=7,
        completion_tokens=3, cost_usd=0.0, latency_ms=12.34,
    )  # fmt: skip
    cells = event_cells(event)
    assert len(cells) == len(EVENT_COLUMNS) + 3  # tokens, cost, ms
    assert cells[:6] == [2, "infer", None, "schema_invalid, retry", "llama/m", "ab" * 6]
    assert cells[6:] == ["7/3", "-", "12.3"]


def test_only_an_infer_step_keeps_its_prompt_apart_from_its_data() -> None:
    prompt = {"template": "t", "text": "hello"}
    infer = TraceEvent(flow_id="f", seq=1, step="infer", agent="a", data={"prompt": prompt, "k": 1})
    final = TraceEvent(flow_id="f", seq=2, step="final", agent="a", data={"prompt": "kept"})
    assert event_details(infer) == ({"k": 1}, prompt)
    assert event_details(final) == ({"prompt": "kept"}, None)
    assert infer.data["prompt"] == prompt  # the event itself is left as it was
