"""Appending cases to a suite keeps every byte that was there, and any value an input
holds (YAML syntax, newlines, control characters, unicode) reads back as it was."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mir.contracts import load_eval_suite
from mir.errors import ConfigError
from mir.reviews.suite_file import append_cases

HEAD = (
    "# comment one\nagent: triage  # trailing\ncases:\n"
    "    # indented four\n    - id: a\n      input: {x: 1}\n"
)

texts = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40
)  # any text but lone surrogates (no JSON/YAML file can hold them)
values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)


def _case(n: int, input: dict) -> dict:
    return {"id": f"review-{n}", "tags": ["from-review"], "input": input, "context": {"w": 1}}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inputs=st.lists(st.dictionaries(texts, values, max_size=4), min_size=1, max_size=3))
def test_hostile_values_read_back_and_the_old_text_stays(inputs):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "triage.yaml"
        path.write_text(HEAD)
        cases = [_case(n, i) for n, i in enumerate(inputs)]
        append_cases(path, cases, agent="triage", comment="from review\nnew: line")
        assert path.read_text().startswith(HEAD)
        suite = load_eval_suite(path)
        assert [c.id for c in suite.cases] == ["a", *[c["id"] for c in cases]]
        assert [c.input for c in suite.cases[1:]] == inputs


@pytest.mark.parametrize(
    "text",
    [
        "agent: t\ncases: []\n",
        "agent: t\n",
        "agent: t\ncases:\n- id: a\n  input: {}\n# trailing comment\n",
    ],
)
def test_every_shape_of_an_empty_or_plain_case_list(tmp_path: Path, text: str):
    path = tmp_path / "s.yaml"
    path.write_text(text)
    append_cases(path, [_case(1, {"q": "x"})], agent="t")
    assert [c.id for c in load_eval_suite(path).cases][-1] == "review-1"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("cases:\n- id: a\n  input: {}\nagent: t\n", "not the last key"),
        ("agent: t\ncases: [{id: a, input: {}}]\n", "flow list"),
    ],
)
def test_a_suite_it_cannot_append_to_is_left_alone(tmp_path: Path, text: str, why: str):
    path = tmp_path / "s.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=why):
        append_cases(path, [_case(1, {})], agent="t")
    assert path.read_text() == text and list(tmp_path.iterdir()) == [path]


def test_a_new_suite_is_created(tmp_path: Path):
    path = tmp_path / "evals" / "triage.yaml"
    append_cases(path, [_case(1, {"a": 1})], agent="triage")
    suite = load_eval_suite(path)
    assert suite.agent == "triage" and [c.id for c in suite.cases] == ["review-1"]
