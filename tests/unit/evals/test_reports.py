"""Reports: JSON against the published schema, JUnit read back by junitparser, and an
HTML page whose untrusted text cannot escape its elements."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

import jsonschema
import junitparser

from mir.evals.baselines import baseline_of
from mir.evals.domain import AssertionResult, EvalReport
from mir.evals.reports import render_html, render_json, render_junit, script_json
from tests.unit.evals.gate_factories import make_run, make_suite, result_of, runs_of

EVIL = "</script><script>alert(1)</script><!-- <b>bold</b> & \u2028 \x07"


def nasty_report() -> EvalReport:
    """Two suites: one with a baseline, repeats, a judge reason and a decision carrying
    HTML; one with a crashed case."""
    suite = make_suite(["a", "b<i>", "c"], critical=["c"], repeat=2)
    baseline = baseline_of(
        result_of(
            suite,
            [make_run(i, i != "c", repeat=r) for i in ("a", "b<i>", "c") for r in (0, 1)],
        )
    )
    judged = AssertionResult(
        type="rubric",
        tier="judge",
        passed=False,
        score=0.2,
        reason=EVIL,
        message="score 0.20 is below 0.5",
    )
    runs = [
        make_run("a", True, repeat=0, decision={"action": "reply", "text": EVIL}, confidence=0.9),
        make_run("a", True, repeat=1, confidence=0.8),
        make_run("b<i>", False, repeat=0, assertions=(judged,), confidence=0.4),
        make_run("b<i>", True, repeat=1, confidence=0.7),
        make_run("c", True, repeat=0),
        make_run("c", True, repeat=1),
    ]
    first = result_of(suite, runs, baseline=baseline)
    other_suite = make_suite(["x", "y"], agent="refunds")
    crashed = make_run("y", False).model_copy(update={"error": f"crashed: {EVIL}"})
    second = result_of(other_suite, [make_run("x", True), crashed])
    suites = (first, second)
    return EvalReport(suites=suites, exit_code=0 if all(s.gate.passed for s in suites) else 1)


def test_json_validates_against_the_published_schema() -> None:
    from mir.schemas import all_schemas

    schema = all_schemas()["eval-report.schema.json"]
    data = json.loads(render_json(nasty_report()))
    jsonschema.validate(data, schema)
    assert data["suites"][0]["comparison"]["broken"] == ["b<i>"]
    assert data["suites"][0]["comparison"]["fixed"] == ["c"]
    broken = dict(data)
    broken["exit_code"] = 3
    try:
        jsonschema.validate(broken, schema)
    except jsonschema.ValidationError:
        pass
    else:
        raise AssertionError("an exit code of 3 passed the schema")


def test_junit_reads_back_with_junitparser(tmp_path) -> None:
    report = nasty_report()
    path = tmp_path / "report.xml"
    path.write_text(render_junit(report), encoding="utf-8")
    xml = junitparser.JUnitXml.fromfile(str(path))
    suites = list(xml)
    assert [s.name for s in suites] == [s.suite for s in report.suites]
    first, second = suites
    assert first.tests == 6 and first.failures == 1 and first.errors == 0
    cases = {case.name: case for case in first}
    assert sorted(cases) == ["a[0]", "a[1]", "b<i>[0]", "b<i>[1]", "c[0]", "c[1]"]
    (failure,) = cases["b<i>[0]"].result
    assert isinstance(failure, junitparser.Failure)
    assert failure.message == "score 0.20 is below 0.5"
    assert "</script>" in failure.text  # the judge's reason, as text
    assert cases["a[0]"].is_passed
    assert second.tests == 2 and second.errors == 1
    (error,) = next(c for c in second if c.name == "y").result
    assert isinstance(error, junitparser.Error)
    assert error.message.startswith("crashed: </script>")
    assert xml.tests == 8


class _Scripts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[tuple[dict, str]] = []
        self._open: dict | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self._open = dict(attrs)
            self.scripts.append((self._open, ""))

    def handle_data(self, data):
        if self._open is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)

    def handle_endtag(self, tag):
        if tag == "script":
            self._open = None


def test_html_is_self_contained_and_escapes_untrusted_text() -> None:
    report = nasty_report()
    html = render_html(report, {"flow-a-0": [{"seq": 0, "step": "snapshot", "data": {"x": EVIL}}]})
    parser = _Scripts()
    parser.feed(html)
    # exactly our two scripts: the data block and the inline code; nothing injected
    assert [attrs.get("type") for attrs, _ in parser.scripts] == ["application/json", None]
    assert "alert(1)" not in parser.scripts[1][1]
    assert json.loads(parser.scripts[0][1]) == json.loads(render_json(report))
    assert "<b>bold</b>" not in html and "&lt;b&gt;bold&lt;/b&gt;" in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)  # no network
    assert "<link" not in html


def test_script_json_never_closes_its_element() -> None:
    text = script_json({"k": EVIL, "<": ["-->", "&"]})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text) == {"k": EVIL, "<": ["-->", "&"]}


def test_no_baseline_report_renders() -> None:
    suite = make_suite(["a"])
    report = EvalReport(suites=(result_of(suite, runs_of({"a": True})),), exit_code=0)
    html = render_html(report)
    assert "Against the baseline" not in html and "no baseline" in html
