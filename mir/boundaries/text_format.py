"""The human text format of a lint report, in words: one line per finding, stale or
unchecked baseline entry, then the summary. Each line is a list of ``(text, style)``
parts (style names as rich reads them, ``""`` for none), so the CLI only draws them and
no path or message is ever read as markup."""

from __future__ import annotations

from mir.boundaries.report import LintReport

Line = list[tuple[str, str]]


def text_lines(report: LintReport) -> list[Line]:
    lines: list[Line] = []
    for finding in report.findings:
        lines.append(
            [
                (finding.path, "bold"),
                (f":{finding.line}:{finding.column + 1}: ", ""),
                (finding.code, "bold red"),
                (f" {finding.message}", ""),
            ]
        )
    for entry in report.stale:
        lines.append(
            [
                ("stale baseline entry", "yellow"),
                (
                    f" {entry.code} {entry.path} ({entry.importer or '-'} -> "
                    f"{entry.imported or '-'}): fixed, run with --update-baseline to drop it",
                    "",
                ),
            ]
        )
    for item in report.unchecked:
        entry = item.entry
        words = (
            f"baseline entry {entry.code} {entry.path} ({entry.importer or '-'} -> "
            f"{entry.imported or '-'}): not checked, {item.why}; kept"
        )
        lines.append([(words, "")])
    stats = report.stats
    scope = f"{_count(stats.files, 'file')}, {_count(stats.capabilities, 'capability')}"
    extra = f", {len(report.baselined)} baselined" if report.baselined else ""
    if report.baseline_written:
        lines.append([(f"Baseline written: {report.baseline_path}", "")])
    if report.findings:
        found = _count(len(report.findings), "finding")
        lines.append([(f"Found {found}", "bold red"), (f" ({scope}{extra}).", "")])
    else:
        lines.append([("All checks passed", "bold green"), (f" ({scope}{extra}).", "")])
    return lines


def _count(number: int, noun: str) -> str:
    plural = noun[:-1] + "ies" if noun.endswith("y") else noun + "s"
    return f"{number} {noun if number == 1 else plural}"
