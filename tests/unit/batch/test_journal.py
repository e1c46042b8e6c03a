"""The batch journal: read back whole after a kill (a torn last line dropped), refused in
one line when damaged or another agent's, held by one run at a time; and the outcome a
killed run's row is given from its flow's events."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from mir.batch.entrypoints import _settle_earlier
from mir.batch.journal import journal_path, opened_journal
from mir.batch.outcomes import BatchReport, RowOutcome, from_events
from mir.batch.rows import parse_rows
from mir.errors import UsageError


def _open(tmp_path: Path, agent: str = "refunds.triage"):
    return opened_journal(tmp_path / ".mir", tmp_path / "out.jsonl", agent=agent, inputs=tmp_path)


def _outcome(key: str, status: str = "executed") -> RowOutcome:
    return RowOutcome(key=key, line=1, flow_id=f"flow-{key}", status=status)


def test_a_journal_reads_back_what_was_written(tmp_path: Path) -> None:
    with _open(tmp_path) as journal:
        batch = journal.batch_id
        journal.start("a", "fa")
        journal.finish(_outcome("a"))
        journal.start("b", "fb")
    with _open(tmp_path) as again:
        assert again.batch_id == batch
        assert set(again.done) == {"a"}
        assert again.in_doubt() == {"b": "fb"}


def test_a_line_torn_by_a_kill_is_dropped_and_the_next_write_starts_clean(
    tmp_path: Path,
) -> None:
    with _open(tmp_path) as journal:
        journal.start("a", "fa")
        path = journal.path
    with open(path, "ab") as handle:
        handle.write(b'{"done": "a", "outco')  # the kill came mid-write
    with _open(tmp_path) as journal:
        assert journal.in_doubt() == {"a": "fa"}
        journal.finish(_outcome("a"))
    with _open(tmp_path) as journal:
        assert set(journal.done) == {"a"}
    lines = path.read_text().splitlines()
    assert all(json.loads(line) for line in lines)


@pytest.mark.parametrize("damage", ["not json\n", "[1]\n", '{"what": 1}\n', '{"done": "x"}\n'])
def test_damage_before_the_last_line_is_refused_naming_the_line(tmp_path: Path, damage) -> None:
    with _open(tmp_path) as journal:
        journal.start("a", "fa")
        path = journal.path
    text = path.read_text().splitlines(keepends=True)
    path.write_text(text[0] + damage + text[1])
    with pytest.raises(UsageError) as caught, _open(tmp_path):
        pass
    assert f"{path}:2" in str(caught.value)


def test_another_agents_results_are_not_mixed_in(tmp_path: Path) -> None:
    with _open(tmp_path):
        pass
    wrong = r"a batch of refunds\.triage, not refunds\.quick"
    with pytest.raises(UsageError, match=wrong), _open(tmp_path, agent="refunds.quick"):
        pass


def test_one_run_at_a_time_per_results_file(tmp_path: Path) -> None:
    with _open(tmp_path), pytest.raises(UsageError, match="is writing"), _open(tmp_path):
        pass


def test_the_journal_lives_under_the_state_dir_per_results_file(tmp_path: Path) -> None:
    one = journal_path(tmp_path / ".mir", tmp_path / "a.jsonl")
    assert one.parent == tmp_path / ".mir" / "batches"
    assert one != journal_path(tmp_path / ".mir", tmp_path / "b.jsonl")


def _event(step: str, status: str | None = None, **data) -> SimpleNamespace:
    return SimpleNamespace(step=step, status=status, data=data, reasons=("low_confidence",))


def test_a_row_left_in_doubt_is_settled_from_its_flows_events() -> None:
    record = {"flow_id": "f", "status": "fallback", "action": "deny", "reasons": ["x"]}
    final = from_events(
        "k", 3, "f", [_event("snapshot"), _event("final", "fallback", record=record)]
    )
    assert (final.status, final.action, final.reasons) == ("fallback", "deny", ["x"])
    waiting = from_events(
        "k", 3, "f", [_event("route", "pending_review", decision={"action": "refund"})]
    )
    assert (waiting.status, waiting.action) == ("pending_review", "refund")
    cut = from_events("k", 3, "f", [_event("snapshot"), _event("execute")])
    assert (cut.status, cut.ended_as_designed) == ("interrupted", False)
    assert from_events("k", 3, "f", []) is None  # never started: decided again


def test_settling_skips_done_rows_and_decides_only_those_with_no_events(tmp_path: Path) -> None:
    rows = parse_rows([json.dumps({"id": i}) for i in range(4)], "f", "id")
    executed = [_event("snapshot"), _event("execute")]  # cut off in its executor
    deps = SimpleNamespace(traces=SimpleNamespace(flow={"f1": executed, "f2": []}.__getitem__))
    with _open(tmp_path) as journal:
        journal.finish(_outcome("0"))
        journal.start("1", "f1")
        journal.start("2", "f2")
        report = BatchReport(out=tmp_path / "out.jsonl", total=4)
        todo = _settle_earlier(journal, rows, deps, report)
    assert [r.key for r in todo] == ["2", "3"]  # row 2 never started: decided, same id
    assert journal.started["2"] == "f2"
    assert (report.skipped, report.recovered, report.retried) == (1, 1, 0)
    assert journal.done["1"].status == "interrupted"


def test_a_header_torn_by_a_kill_starts_a_new_batch(tmp_path: Path) -> None:
    path = journal_path(tmp_path / ".mir", tmp_path / "out.jsonl")
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"batch": "abc", "ag')  # killed while writing the very first line
    with _open(tmp_path) as journal:
        assert journal.batch_id != "abc" and not journal.started
        journal.start("a", "fa")
    with _open(tmp_path) as again:
        assert again.batch_id == journal.batch_id and again.in_doubt() == {"a": "fa"}
