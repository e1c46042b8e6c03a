from datetime import UTC, datetime

from mir.traces import TraceEvent
from mir.traces.integrity import ChainLine, check_chain
from mir.traces.records import (
    body_text,
    event_fields,
    event_from_fields,
    format_instant,
    genesis,
    link,
)
from mir.traces.redaction import Redactor

from .conftest import decision_flow


def chain_of(segment: str, events: list[TraceEvent]) -> list[ChainLine]:
    lines, prev = [], genesis(segment)
    for n, event in enumerate(events):
        fields = event_fields(event, Redactor())
        digest = link(prev, body_text(fields))
        lines.append(ChainLine(segment=segment, n=n, prev=prev, digest=digest, fields=fields))
        prev = digest
    return lines


def test_fields_round_trip_to_the_same_event():
    event = decision_flow("f1")[1]
    fields = event_fields(event, Redactor())
    assert event_from_fields(fields) == event


def test_instants_are_hashed_in_one_form_whatever_the_input_zone():
    from datetime import timedelta, timezone

    moment = datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC)
    shifted = moment.astimezone(timezone(timedelta(hours=5)))
    assert format_instant(moment) == format_instant(shifted) == "2026-01-02T03:04:05.000006+00:00"


def test_secrets_are_redacted_before_hashing():
    event = TraceEvent(
        flow_id="f",
        seq=0,
        step="infer",
        agent="a",
        model="key-ABCDEFGH",
        data={"t": "key-ABCDEFGH"},
    )
    fields = event_fields(event, Redactor(["key-ABCDEFGH"]))
    assert "key-ABCDEFGH" not in body_text(fields)


def test_an_intact_chain_verifies():
    report = check_chain(chain_of("s1", decision_flow("f1")) + chain_of("s2", decision_flow("f2")))
    assert report.ok
    assert (report.segments, report.lines) == (2, 6)


def test_an_edited_field_is_detected():
    lines = chain_of("s1", decision_flow("f1"))
    edited = dict(lines[1].fields, cost_usd=0.0)
    lines[1] = ChainLine("s1", 1, lines[1].prev, lines[1].digest, edited)
    report = check_chain(lines)
    assert [(b.line, b.problem.split(" ")[0]) for b in report.breaks] == [(1, "content")]


def test_a_removed_line_is_detected():
    lines = chain_of("s1", decision_flow("f1"))
    del lines[1]
    assert [b.line for b in check_chain(lines).breaks] == [2]


def test_a_rehashed_forgery_still_breaks_the_next_link():
    lines = chain_of("s1", decision_flow("f1"))
    forged = dict(lines[1].fields, cost_usd=0.0)
    lines[1] = ChainLine("s1", 1, lines[1].prev, link(lines[1].prev, body_text(forged)), forged)
    assert [b.line for b in check_chain(lines).breaks] == [2]


def test_removed_last_lines_are_detected_against_the_compaction_record():
    lines = chain_of("s1", decision_flow("f1"))
    recorded = {"s1": (3, lines[-1].digest or "")}
    assert check_chain(lines, recorded).ok
    assert not check_chain(lines[:-1], recorded).ok


def test_a_line_moved_to_another_segment_is_detected():
    lines = chain_of("s1", decision_flow("f1"))
    moved = [ChainLine("s2", line.n, line.prev, line.digest, line.fields) for line in lines]
    assert [b.line for b in check_chain(moved).breaks] == [0]


def test_the_digest_changes_with_the_content():
    a = check_chain(chain_of("s1", decision_flow("f1")))
    b = check_chain(chain_of("s1", decision_flow("f2")))
    assert a.digest != b.digest
