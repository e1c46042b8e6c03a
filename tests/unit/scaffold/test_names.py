"""Name rules: what may become a capability/agent package or module name, and why not."""

from __future__ import annotations

import pytest

from mir.errors import UsageError
from mir.scaffold.domain import import_order, normalize_name, pascal_case


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("support_desk", "support_desk"), ("support-desk", "support_desk"), (" triage ", "triage")],
)
def test_valid_names_are_normalised(raw, expected):
    assert normalize_name(raw, kind="capability") == expected


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("", "is empty"),
        ("   ", "is empty"),
        ("class", "is a Python keyword"),
        ("../x", "path separator"),
        ("a/b", "path separator"),
        ("a\\b", "path separator"),
        ("..", "not a bare name"),
        (".hidden", "not a bare name"),
        ("1abc", "not a valid Python identifier"),
        ("a b", "not a valid Python identifier"),
        ("a.b", "not a valid Python identifier"),
        ("__init__", "starts with an underscore"),
        ("-x", "starts with an underscore"),
        ("json", "shadows the standard-library module 'json'"),
        ("email", "shadows the standard-library module 'email'"),
        ("domain", "mir layer name"),
        ("adapters", "mir layer name"),
        ("application", "mir layer name"),
    ],
)
def test_invalid_names_are_refused_with_the_reason(raw, reason):
    with pytest.raises(UsageError, match=reason) as info:
        normalize_name(raw, kind="capability")
    assert info.value.message.startswith("capability name")
    assert info.value.hint


def test_a_dashed_name_is_checked_after_normalising():
    with pytest.raises(UsageError, match="not a valid Python identifier"):
        normalize_name("1-a", kind="agent")
    assert normalize_name("my-1st", kind="agent") == "my_1st"


def test_pascal_case():
    assert pascal_case("support_desk") == "SupportDesk"
    assert pascal_case("triage") == "Triage"
    assert pascal_case("v2_router") == "V2Router"


def test_import_order_matches_ruff_isort():
    names = ["close_case", "ZebraCase", "InMemoryZebraCaseStore", "MAX", "Ab10", "Ab2"]
    assert import_order(names) == [
        "MAX",
        "Ab2",
        "Ab10",
        "InMemoryZebraCaseStore",
        "ZebraCase",
        "close_case",
    ]
