from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from mir.traces import TraceEvent
from mir.traces.chains import scan_segment
from mir.traces.records import (
    EVENT_FIELDS,
    canonical_body,
    encode_line,
    event_from_fields,
    genesis,
    link,
    stored_body,
    stored_row_body,
)
from mir.traces.redaction import Redactor

from .conftest import decision_flow


def chain_lines(segment: str, events: list[TraceEvent]) -> list[str]:
    lines, prev = [], genesis(segment)
    for n, event in enumerate(events):
        body = stored_body(event, Redactor())
        prev = link(prev, body)
        lines.append(encode_line(n, prev, body))
    return lines


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(lines))
    return path


def chain_file(path: Path, events: list[TraceEvent]) -> Path:
    return write(path, chain_lines(path.name, events))


def test_every_event_field_is_stored():
    # A field added to TraceEvent must get a column, a migration and a line version:
    # otherwise the store would silently drop it.
    assert list(TraceEvent.model_fields) == list(EVENT_FIELDS)


def test_a_stored_row_rebuilds_the_same_body():
    event = decision_flow("f1")[1]
    row = event.model_dump()
    row["at"] = (event.at - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1)
    row["data"] = canonical_body(event).split('"data":', 1)[1][:-1]  # the JSON text kept
    assert canonical_body(event_from_fields(row)) == stored_body(event, Redactor())
    assert stored_row_body(row) == stored_body(event, Redactor())


def test_instants_are_stored_in_utc_whatever_the_input_zone():
    moment = datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC)
    shifted = moment.astimezone(timezone(timedelta(hours=5)))
    a, b = (
        stored_body(TraceEvent(event_id="e", flow_id="f", seq=0, step="final", agent="a", at=t),
                    Redactor())
        for t in (moment, shifted)
    )  # fmt: skip
    assert a == b
    assert '"at":"2026-01-02T03:04:05.000006Z"' in a


def test_secrets_are_redacted_before_hashing():
    secret = "key-ABCDEFGH"
    event = TraceEvent(
        flow_id="f", seq=0, step="infer", agent="a", model=secret, reasons=(secret,),
        data={"t": [secret]},
    )  # fmt: skip
    body = stored_body(event, Redactor([secret]))
    assert secret not in body
    assert body.count("[REDACTED]") == 3


def test_an_intact_chain_verifies(tmp_path):
    scan = scan_segment(chain_file(tmp_path / "s1", decision_flow("f1")))
    assert (scan.breaks, scan.lines, scan.checked, scan.torn) == ([], 3, 3, False)


def test_an_edited_line_is_detected(tmp_path):
    lines = chain_lines("s1", decision_flow("f1"))
    lines[1] = lines[1].replace('"cost_usd":0.0015', '"cost_usd":0.0')
    scan = scan_segment(write(tmp_path / "s1", lines))
    assert [(b.line, "edited" in b.problem) for b in scan.breaks] == [(1, True)]


def test_a_removed_line_is_detected(tmp_path):
    lines = chain_lines("s1", decision_flow("f1"))
    del lines[1]
    scan = scan_segment(write(tmp_path / "s1", lines))
    assert [(b.line, "out of place" in b.problem) for b in scan.breaks] == [(1, True)]


def test_a_rehashed_forgery_still_breaks_the_next_link(tmp_path):
    lines = chain_lines("s1", decision_flow("f1"))
    body = "{" + lines[1].split('",', 1)[1].rstrip("\n").replace(
        '"cost_usd":0.0015', '"cost_usd":0.0'
    )
    prev = lines[0].split('"hash":"', 1)[1][:64]
    lines[1] = encode_line(1, link(prev, body), body)
    scan = scan_segment(write(tmp_path / "s1", lines))
    assert [b.line for b in scan.breaks] == [2]


def test_a_line_moved_to_another_segment_is_detected(tmp_path):
    lines = chain_lines("s1", decision_flow("f1"))
    scan = scan_segment(write(tmp_path / "s2", lines))  # the first link names the segment
    assert [b.line for b in scan.breaks] == [0]


def test_a_torn_last_line_is_not_a_break(tmp_path):
    lines = chain_lines("s1", decision_flow("f1"))
    lines[-1] = lines[-1][:40]
    scan = scan_segment(write(tmp_path / "s1", lines))
    assert (scan.breaks, scan.lines, scan.torn) == ([], 2, True)
