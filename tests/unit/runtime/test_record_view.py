"""A decision record as the CLI shows it: labelled rows and the review in the JSON."""

from __future__ import annotations

from mir.runtime import DecisionRecord, record_json, record_rows


def _record(**fields) -> DecisionRecord:
    return DecisionRecord(flow_id="f1", agent="desk.triage", status="pending_review", **fields)


def test_a_waiting_flow_says_how_to_act_on_it():
    rows = {label: (text, style) for label, text, style in record_rows(_record(action="refund"))}
    assert rows["status"] == ("pending_review", "bold cyan")
    assert rows["next"][0] == "mir approve f1  |  mir reject f1"
    assert "review" not in rows and "decision" not in rows


def test_a_partial_approval_and_the_json_name_the_reviewer():
    record = _record(reviewed_by="alice", reviewed_at="2026-12-01T10:11:12.5+00:00")
    rows = {label: text for label, text, _ in record_rows(record)}
    assert rows["review"] == "approved (more approvals needed) by alice at 2026-12-01 10:11:12 UTC"
    assert record_json(record)["review"] == {"by": "alice", "at": record.reviewed_at}
    assert "review" not in record_json(_record())


def test_text_from_the_model_stays_as_it_was_written():
    record = _record(reasons=["[/bold] x"], decision={"note": "[blink]PAID[/]"})
    rows = {label: text for label, text, _ in record_rows(record)}
    assert rows["reasons"] == "[/bold] x"
    assert rows["decision"] == '{"note": "[blink]PAID[/]"}'
