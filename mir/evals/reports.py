"""An eval report as JSON, JUnit XML and one self-contained HTML file.

- JSON is ``EvalReport`` itself; its schema (``eval-report.schema.json``) is published
  by ``mir schema``, so CI can validate what it parses.
- JUnit has one ``testsuite`` per suite and one ``testcase`` per case and repeat; a
  failing run's ``failure`` message lists its failed gating assertions. The gate's
  verdict is a ``property`` and its reasons the suite's ``system-out``.
- HTML is one static file, no network: see ``render_html``.

Everything rendered comes from models and trace events, whose text (model output,
decisions, reasons) is untrusted: XML escapes it and drops the characters XML 1.0
cannot hold; HTML autoescapes it and embeds the data as JSON that cannot close its
``<script>`` element.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from mir.evals.domain import AssertionResult, CaseRun, EvalReport, SuiteResult
from mir.evals.statistics import wilson_interval

TEMPLATE = Path(__file__).with_name("report.html.j2")
# XML 1.0 allows tab, newline, carriage return and these ranges, nothing else
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def render_json(report: EvalReport) -> str:
    """The report as JSON (``EvalReport``'s published schema), newline-terminated."""
    return report.model_dump_json(indent=2) + "\n"


# --------------------------------------------------------------------------- JUnit
def render_junit(report: EvalReport) -> str:
    """JUnit XML: a testsuite per suite, a testcase per case and repeat."""
    root = ElementTree.Element("testsuites", name="mir eval")
    totals = {"tests": 0, "failures": 0, "errors": 0}
    elapsed = 0.0
    for suite in report.suites:
        element = _junit_suite(suite)
        root.append(element)
        for key in totals:
            totals[key] += int(element.get(key, "0"))
        elapsed += float(element.get("time", "0"))
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", f"{elapsed:.3f}")
    ElementTree.indent(root)
    body = ElementTree.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="utf-8"?>\n' + body + "\n"


def _junit_suite(suite: SuiteResult) -> ElementTree.Element:
    failures = sum(1 for r in suite.runs if not r.passed and not r.error)
    errors = sum(1 for r in suite.runs if r.error)
    seconds = (suite.finished_at - suite.started_at).total_seconds()
    element = ElementTree.Element(
        "testsuite",
        name=_xml(suite.suite),
        tests=str(len(suite.runs)),
        failures=str(failures),
        errors=str(errors),
        skipped="0",
        time=f"{max(seconds, 0.0):.3f}",
        timestamp=suite.started_at.isoformat(),
    )
    properties = ElementTree.SubElement(element, "properties")
    for name, value in (
        ("agent", suite.agent),
        ("gate", "passed" if suite.gate.passed else "failed"),
        ("pass_rate", f"{suite.gate.pass_rate:.4f}"),
        ("provider", suite.provider),
        ("model", suite.model),
        ("prompt_hash", suite.prompt_hash),
        ("p_value", None if suite.comparison is None else f"{suite.comparison.p_value:.6g}"),
    ):
        if value is not None:
            ElementTree.SubElement(properties, "property", name=name, value=_xml(value))
    repeated = {s.case_id for s in suite.cases if s.runs > 1}
    for run in suite.runs:
        element.append(_junit_case(suite.agent, run, repeated=run.case_id in repeated))
    out = ElementTree.SubElement(element, "system-out")
    lines = [f"gate {'passed' if suite.gate.passed else 'FAILED'}", *suite.gate.reasons]
    if suite.gate.judge_note:
        lines.append(f"judge: {suite.gate.judge_note}")
    out.text = _xml("\n".join(lines))
    return element


def _junit_case(agent: str, run: CaseRun, *, repeated: bool) -> ElementTree.Element:
    name = f"{run.case_id}[{run.repeat}]" if repeated else run.case_id
    case = ElementTree.Element(
        "testcase", name=_xml(name), classname=_xml(agent), time=f"{run.latency_ms / 1000:.3f}"
    )
    if run.error:
        error = ElementTree.SubElement(case, "error", message=_xml(run.error), type="error")
        error.text = _xml(run.error)
    elif not run.passed:
        failed = failed_assertions(run)
        message = "; ".join(a.message or _describe(a) for a in failed) or "the case failed"
        failure = ElementTree.SubElement(case, "failure", message=_xml(message), type="assertion")
        failure.text = _xml("\n".join(_describe(a) for a in failed) or message)
    return case


def failed_assertions(run: CaseRun) -> list[AssertionResult]:
    """The gating assertions that failed or could not be evaluated."""
    return [a for a in run.assertions if a.gating and a.passed is not True]


def _describe(result: AssertionResult) -> str:
    where = f" {result.path}" if result.path else ""
    text = (
        f"[{result.tier}] {result.type}{where}: expected {result.expected!r}, got {result.actual!r}"
    )
    if result.message:
        text += f" ({result.message})"
    if result.reason:
        text += f"; judge: {result.reason}"
    return text


def _xml(value: object) -> str:
    return _NOT_XML.sub("\ufffd", str(value))


# --------------------------------------------------------------------------- HTML
def render_html(report: EvalReport, traces: Mapping[str, list[dict]] | None = None) -> str:
    """One self-contained static page: summary, gate verdict, the diff against the
    baseline, a filterable table of case runs with their assertions, judge reasons,
    decisions and trace events (by flow id, from ``traces``). Inline CSS and JS only."""
    traces = traces or {}
    data = json.loads(render_json(report))
    return _template().render(
        report=report,
        traces={flow: list(events) for flow, events in traces.items()},
        failed_assertions=failed_assertions,
        pretty=_pretty,
        compact=_compact,
        interval=wilson_interval,
        data_json=script_json(data),
    )


def script_json(value: Any) -> str:
    """JSON that is safe inside ``<script type="application/json">``: ``<``, ``>`` and
    ``&`` only ever occur inside strings, where their ``\\u`` escapes mean the same,
    so no decision text can end the element or open a comment."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(raw, escaped)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


@cache
def _template():
    from jinja2 import Environment, StrictUndefined

    environment = Environment(autoescape=True, undefined=StrictUndefined, trim_blocks=True)
    return environment.from_string(TEMPLATE.read_text(encoding="utf-8"))
