from datetime import UTC, datetime, timedelta, timezone

from mir.traces import TraceEvent
from mir.traces.integrity import ChainLine, check_chain
from mir.traces.records import (
    EVENT_FIELDS,
    canonical_body,
    event_from_fields,
    genesis,
    link,
    stored_body,
    stored_row_body,
)
from mir.traces.redaction import Redactor

from .conftest import decision_flow


def chain_of(segment: str, events: list[TraceEvent]) -> list[ChainLine]:
    lines, prev = [], genesis(segment)
    for n, event in enumerate(events):
        body = stored_body(event, Redactor())
        digest = link(prev, body)
        lines.append(ChainLine(segment, n, digest, body, event.event_id))
        prev = digest
    return lines


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


def test_an_intact_chain_verifies():
    report = check_chain(chain_of("s1", decision_flow("f1")) + chain_of("s2", decision_flow("f2")))
    assert report.ok
    assert (report.segments, report.lines) == (2, 6)


def test_an_edited_line_is_detected():
    lines = chain_of("s1", decision_flow("f1"))
    edited = lines[1].body.replace('"cost_usd":0.0015', '"cost_usd":0.0')
    assert edited != lines[1].body
    lines[1] = ChainLine("s1", 1, lines[1].digest, edited, lines[1].event_id)
    report = check_chain(lines)
    assert [(b.line, b.event_id) for b in report.breaks] == [(1, lines[1].event_id)]


def test_a_removed_line_is_detected():
    lines = chain_of("s1", decision_flow("f1"))
    del lines[1]
    assert [b.line for b in check_chain(lines).breaks] == [2]


def test_a_rehashed_forgery_still_breaks_the_next_link():
    lines = chain_of("s1", decision_flow("f1"))
    forged = lines[1].body.replace('"cost_usd":0.0015', '"cost_usd":0.0')
    lines[1] = ChainLine("s1", 1, link(lines[0].digest or "", forged), forged)
    assert [b.line for b in check_chain(lines).breaks] == [2]


def test_removed_last_lines_are_detected_against_the_compaction_record():
    lines = chain_of("s1", decision_flow("f1"))
    recorded = {"s1": (3, lines[-1].digest or "")}
    assert check_chain(lines, recorded).ok
    assert not check_chain(lines[:-1], recorded).ok


def test_a_line_moved_to_another_segment_is_detected():
    lines = chain_of("s1", decision_flow("f1"))
    moved = [ChainLine("s2", line.n, line.digest, line.body) for line in lines]
    assert [b.line for b in check_chain(moved).breaks] == [0]


def test_the_digest_changes_with_the_content():
    a = check_chain(chain_of("s1", decision_flow("f1")))
    b = check_chain(chain_of("s1", decision_flow("f2")))
    assert a.digest != b.digest
