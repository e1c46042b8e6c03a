from __future__ import annotations

import pytest

from mir.runtime.snapshot import ContextSnapshot, canonical_json, sha256_hex


def test_canonical_json_ignores_key_order_and_refuses_nan():
    assert canonical_json({"b": 1, "a": [1, {"d": 2, "c": 3}]}) == '{"a":[1,{"c":3,"d":2}],"b":1}'
    with pytest.raises(ValueError):
        canonical_json({"x": float("nan")})


def test_snapshot_is_frozen_all_the_way_down():
    snap = ContextSnapshot.take({"a": {"b": [1, 2]}}, {"c": 1})
    with pytest.raises(TypeError):
        snap.input["a"] = 1  # type: ignore[index]
    with pytest.raises(TypeError):
        snap.input["a"]["b"] = 1  # type: ignore[index]
    assert snap.input["a"]["b"] == (1, 2)


def test_the_caller_mutating_its_dict_changes_nothing():
    given = {"total": 10}
    snap = ContextSnapshot.take({}, given)
    given["total"] = 99
    assert snap.context["total"] == 10


def test_scope_limits_what_the_prompt_sees_but_not_the_state_hash():
    a = ContextSnapshot.take(
        {"id": 1, "secret": "x"},
        {"total": 1, "internal": 1},
        input_scope=["id"],
        context_scope=["total"],
    )
    b = ContextSnapshot.take(
        {"id": 1, "secret": "x"},
        {"total": 1, "internal": 2},
        input_scope=["id"],
        context_scope=["total"],
    )
    assert dict(a.visible_input) == {"id": 1}
    assert dict(a.visible_context) == {"total": 1}
    assert a.state_hash != b.state_hash  # a hidden field changed: the world changed


def test_hashes_are_stable_across_key_order():
    a = ContextSnapshot.take({"x": 1, "y": 2}, {"p": 1, "q": 2})
    b = ContextSnapshot.take({"y": 2, "x": 1}, {"q": 2, "p": 1})
    assert (a.state_hash, a.snapshot_hash) == (b.state_hash, b.snapshot_hash)
    assert a.state_hash == sha256_hex({"p": 1, "q": 2})


def test_a_field_the_scope_does_not_list_never_reaches_the_prompt():
    snap = ContextSnapshot.take({"id": 1}, {"total": 1})
    assert dict(snap.visible_input) == {} and dict(snap.visible_context) == {}
    assert snap.context["total"] == 1  # still part of the snapshot and its hash


def test_world_state_json_cannot_spell_still_hashes_deterministically():
    from datetime import datetime

    when = datetime(2026, 1, 1)
    a = ContextSnapshot.take({}, {"seen": when, "reading": float("nan")})
    b = ContextSnapshot.take({}, {"reading": float("nan"), "seen": when})
    assert a.state_hash == b.state_hash
