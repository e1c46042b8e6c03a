"""The text format's words: what each line says, and that a path or message holding
markup stays a plain part (the CLI draws the parts as rich Text, never as markup)."""

from __future__ import annotations

from mir.boundaries import Finding, LintReport, LintStats, text_lines


def _plain(report: LintReport) -> list[str]:
    return ["".join(text for text, _ in line) for line in text_lines(report)]


def test_a_clean_run_says_all_checks_passed_with_its_scope() -> None:
    report = LintReport(findings=(), stats=LintStats(files=1, capabilities=3))
    assert _plain(report) == ["All checks passed (1 file, 3 capabilities)."]
    assert text_lines(report)[0][0] == ("All checks passed", "bold green")


def test_a_finding_is_one_line_and_the_summary_counts_it() -> None:
    finding = Finding(
        code="MIR101", path="mir/[bold]x.py", line=3, column=0, message="[/] no", rule="r"
    )
    report = LintReport(findings=(finding,), stats=LintStats(files=2, capabilities=1))
    assert _plain(report) == [
        "mir/[bold]x.py:3:1: MIR101 [/] no",
        "Found 1 finding (2 files, 1 capability).",
    ]
    path, _, code, message = text_lines(report)[0]
    assert path == ("mir/[bold]x.py", "bold")
    assert code == ("MIR101", "bold red")
    assert message == (" [/] no", "")
