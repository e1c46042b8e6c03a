"""A batch's rows and keys: every line checked before anything is decided, and a key
that names the same row across runs, also when rows are appended or reordered."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mir.batch.rows import flow_id_of, parse_rows
from mir.errors import UsageError

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8))
objects = st.dictionaries(st.text(max_size=6), scalars, max_size=4)


def _lines(*rows: object) -> list[str]:
    return [json.dumps(row) for row in rows]


@settings(max_examples=60, deadline=None)
@given(st.lists(objects, min_size=1, max_size=12), st.randoms())
def test_content_keys_are_unique_and_do_not_depend_on_the_order(rows, rnd) -> None:
    parsed = parse_rows(_lines(*rows), "in.jsonl", None)
    keys = [r.key for r in parsed]
    assert len(set(keys)) == len(keys)
    shuffled = list(rows)
    rnd.shuffle(shuffled)
    again = parse_rows(_lines(*shuffled), "in.jsonl", None)
    # the same multiset of rows gets the same keys, whatever the order
    assert sorted(r.key for r in again) == sorted(keys)
    assert {r.key: r.input for r in again} == {r.key: r.input for r in parsed}


def test_appended_rows_keep_the_keys_of_the_rows_before_them() -> None:
    first = parse_rows(_lines({"a": 1}, {"a": 1}, {"b": 2}), "f", None)
    more = parse_rows(_lines({"a": 1}, {"a": 1}, {"b": 2}, {"a": 1}, {"c": 3}), "f", None)
    assert [r.key for r in more[:3]] == [r.key for r in first]
    assert more[3].key.endswith("#3")


def test_blank_lines_are_skipped_and_lines_numbered_as_in_the_file() -> None:
    rows = parse_rows(["", json.dumps({"id": 1}), "  ", json.dumps({"id": 2})], "f", "id")
    assert [(r.position, r.line, r.key) for r in rows] == [(0, 2, "1"), (1, 4, "2")]


@pytest.mark.parametrize(
    ("lines", "key", "message"),
    [
        (["[1, 2]"], None, "f:1: expected a JSON object, got list"),
        (['{"id": 1}', "{nope"], None, "f:2: invalid JSON"),
        (['{"amount": 10, "amount": 9000}'], None, "f:1: duplicate key 'amount'"),
        (['{"amount": NaN}'], None, "f:1: NaN is not valid JSON"),
        (['{"id": 1}', '{"id": 1}'], "id", "f:2: --key id: '1' is also the key of line 1"),
        (['{"x": 1}'], "id", "f:1: --key id: the row has no field 'id'"),
        (['{"id": true}'], "id", "not a string or an integer"),
        (['{"id": {"a": 1}}'], "id", "not a string or an integer"),
        (['{"id": ""}'], "id", "not a string or an integer"),
        (["", " "], None, "no rows to decide"),
        (["[" * 100_000 + "]" * 100_000], None, "f:1:"),
    ],
)
def test_a_bad_row_is_one_error_naming_its_line(lines, key, message) -> None:
    with pytest.raises(UsageError) as caught:
        parse_rows(lines, "f", key)
    assert message in str(caught.value)


def test_flow_ids_are_per_batch_and_per_key() -> None:
    one = flow_id_of("batch-1", "k")
    assert one == flow_id_of("batch-1", "k")
    assert one != flow_id_of("batch-2", "k") != flow_id_of("batch-1", "k2")
    assert len(one) == 32 and one.startswith("b")
