"""Machine-readable renderings of a lint report: JSON, SARIF 2.1.0, GitHub annotations, JUnit.

Pure functions from a ``LintReport`` to text (stdlib only), so every format is tested
without a terminal. The human text format's words are ``text_format``'s; the CLI draws them.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from mir import __version__
from mir.boundaries.findings import Finding
from mir.boundaries.report import LintReport

if TYPE_CHECKING:  # the rule catalogue loads only for SARIF: a cached run never needs it
    from mir.boundaries.rules import RuleInfo

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def render(report: LintReport, fmt: str) -> str:
    renderers = {
        "json": render_json,
        "sarif": render_sarif,
        "github": render_github,
        "junit": render_junit,
    }
    return renderers[fmt](report)


def _located(finding: Finding) -> dict[str, object]:
    """A finding as JSON: ``column`` counts from 1, as in the text, SARIF and GitHub
    formats and in ruff's JSON (``Finding.column`` is ``ast``'s 0-based offset)."""
    data = finding.as_dict()
    data["column"] = finding.column + 1
    return data


def render_json(report: LintReport) -> str:
    payload = {
        "findings": [_located(finding) for finding in report.findings],
        "baselined": [_located(finding) for finding in report.baselined],
        "stale": [entry.as_dict() for entry in report.stale],
        "unchecked": [item.as_dict() for item in report.unchecked],
        "summary": report.summary(),
    }
    return json.dumps(payload, indent=2)


def _descriptor(rule: RuleInfo) -> dict[str, object]:
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.doc},
        "help": {"text": rule.doc, "markdown": rule.doc},
        "defaultConfiguration": {"level": "error"},
    }


def render_sarif(report: LintReport) -> str:
    from mir.boundaries.rules import all_rules

    findings = list(report.findings)
    descriptors = [_descriptor(rule) for rule in all_rules()]
    index = {descriptor["id"]: i for i, descriptor in enumerate(descriptors)}
    for finding in findings:  # codes from outside the catalogue (import-linter contracts)
        if finding.code not in index:
            index[finding.code] = len(descriptors)
            descriptors.append(
                {
                    "id": finding.code,
                    "name": finding.rule,
                    "shortDescription": {"text": finding.rule},
                }
            )
    results = [
        {
            "ruleId": finding.code,
            "ruleIndex": index[finding.code],
            "level": "error",
            "message": {"text": finding.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": finding.path, "uriBaseId": "%SRCROOT%"},
                        "region": {
                            "startLine": max(finding.line, 1),
                            "startColumn": finding.column + 1,
                        },
                    }
                }
            ],
            "partialFingerprints": {
                "mirFinding/v1": "|".join(
                    str(part)
                    for part in (finding.code, finding.path, finding.importer, finding.imported)
                )
            },
        }
        for finding in findings
    ]
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "mir",
                        "version": __version__,
                        "rules": descriptors,
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": "./"}},
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(report: LintReport) -> str:
    """GitHub Actions workflow commands: one ``::error`` annotation per finding."""
    lines = [
        f"::error file={_escape_property(f.path)},line={max(f.line, 1)},col={f.column + 1},"
        f"title={_escape_property(f'{f.code} {f.rule}')}::{_escape_data(f.message)}"
        for f in report.findings
    ]
    lines.extend(
        f"::notice file={_escape_property(entry.path)},"
        f"title={_escape_property(f'{entry.code} stale baseline entry')}::"
        f"{_escape_data('fixed: run mir lint boundaries --update-baseline to drop it')}"
        for entry in report.stale
    )
    return "\n".join(lines)


def render_junit(report: LintReport) -> str:
    """JUnit XML: one test case per rule that passed, one failing case per finding."""
    from xml.etree import ElementTree

    from mir.boundaries.rules import all_rules

    rules = all_rules()
    failing = {finding.code for finding in report.findings}
    suites = ElementTree.Element("testsuites", name="mir lint boundaries")
    suite = ElementTree.SubElement(suites, "testsuite", name="mir lint boundaries")
    cases = 0
    for rule in rules:
        if rule.code not in failing:
            ElementTree.SubElement(
                suite, "testcase", classname=f"mir.{rule.code}", name=rule.name, time="0"
            )
            cases += 1
    for finding in report.findings:
        case = ElementTree.SubElement(
            suite,
            "testcase",
            classname=f"mir.{finding.code}",
            name=f"{finding.path}:{finding.line}",
            file=finding.path,
            line=str(finding.line),
            time="0",
        )
        failure = ElementTree.SubElement(
            case, "failure", message=finding.message, type=f"{finding.code} {finding.rule}"
        )
        failure.text = f"{finding.path}:{finding.line}:{finding.column + 1}: {finding.message}"
        cases += 1
    for element in (suites, suite):
        element.set("tests", str(cases))
        element.set("failures", str(len(report.findings)))
        element.set("errors", "0")
    suite.set("skipped", "0")
    ElementTree.indent(suites)
    body = ElementTree.tostring(suites, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body
