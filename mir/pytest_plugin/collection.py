"""pytest plugin (entry point ``pytest11``): ``pytest --mir-evals`` collects eval suites
(``evals/*.yaml``) as test items, so a team that only runs pytest gets the gate too.

Each suite gives one item per case and a last ``gate`` item. The suite runs once, when
its first item runs (through ``mir.run_eval``, the same path as ``mir eval``), and says
so as it goes: a line per finished case run with the time left (``mir eval``'s plain
progress), written past pytest's output capture so a 15-minute suite is not silent:

* a case item passes when every run of the case passed; a failing case fails only when
  the suite's gate failed, and is an expected failure (``x``) when the gate holds (a
  case that was already failing, or noise within the gate);
* the ``gate`` item fails with the gate's reasons, exactly when ``mir eval`` exits 1.

Without ``--mir-evals`` nothing is collected and nothing of mir is imported: the plugin
costs one option. (It is its own package, not a module of ``mir.evals``, whose package
import alone would cost every pytest run of every project a quarter of a second.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

SUFFIXES = (".yaml", ".yml")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mir", "mir eval suites")
    group.addoption(
        "--mir-evals",
        action="store_true",
        default=False,
        help="Collect mir eval suites (evals/*.yaml) as tests and run them through mir.",
    )
    group.addoption(
        "--mir-evals-responses",
        default=None,
        metavar="FILE",
        help="Replay scripted model outputs (as `mir eval --responses`), per suite run.",
    )
    group.addoption(
        "--mir-evals-provider", default=None, help="Override routes (as `mir eval --provider`)."
    )


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if not parent.config.getoption("mir_evals"):
        return None
    if file_path.suffix not in SUFFIXES or file_path.parent.name != "evals":
        return None
    return SuiteFile.from_parent(parent, path=file_path)


class SuiteFile(pytest.File):
    def collect(self) -> Any:
        from mir.contracts import load_eval_suite

        suite = load_eval_suite(self.path)  # a bad suite: a collection error, file:line
        for case in suite.cases:
            yield CaseItem.from_parent(self, name=case.id, case_id=case.id)
        yield GateItem.from_parent(self, name="gate")

    def report(self) -> Any:
        """The suite's ``SuiteResult``, run on first use."""
        cached = getattr(self, "_result", None)
        if cached is None:
            from mir.errors import MirUserError
            from mir.evals import run_eval

            config = self.config
            try:
                result = run_eval(
                    [self.path],
                    responses=config.getoption("mir_evals_responses"),
                    provider=config.getoption("mir_evals_provider"),
                    progress=LiveProgress(config),
                )
            except MirUserError as exc:  # what `mir eval` says in one line, exit 2
                cached = CaseFailed(f"mir eval: {exc}")
            else:
                cached = result.suites[0]
            self._result = cached
        if isinstance(cached, CaseFailed):
            raise cached
        return cached


class _SuiteItem(pytest.Item):
    @property
    def suite_file(self) -> SuiteFile:
        assert isinstance(self.parent, SuiteFile)
        return self.parent

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"{self.path.name}::{self.name}"


class CaseItem(_SuiteItem):
    def __init__(self, *, case_id: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.case_id = case_id

    def runtest(self) -> None:
        result = self.suite_file.report()
        runs = [r for r in result.runs if r.case_id == self.case_id]
        if not runs:
            pytest.skip("not run (the eval was interrupted)")
        failed = [r for r in runs if not r.passed]
        if not failed:
            return
        lines = [f"{len(failed)} of {len(runs)} run(s) failed"]
        for run in failed:
            where = f"run {run.repeat + 1}: {run.status or '-'}/{run.action or '-'}"
            if run.error:
                lines.append(f"{where}: {run.error}")
            for a in run.assertions:
                if a.gating and a.passed is not True:
                    lines.append(f"{where}: {a.type} {a.path or ''} {a.message}".rstrip())
        message = "\n".join(lines)
        if result.gate.passed:
            pytest.xfail(f"failing within the gate: {message}")
        raise CaseFailed(message)

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, CaseFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style))


class GateItem(_SuiteItem):
    def runtest(self) -> None:
        gate = self.suite_file.report().gate
        if not gate.passed:
            raise CaseFailed("gate failed:\n" + "\n".join(f"  {r}" for r in gate.reasons))

    def repr_failure(self, excinfo: Any, style: Any = None) -> str:
        if isinstance(excinfo.value, CaseFailed):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo, style))


class LiveProgress:
    """``mir eval``'s plain progress lines, on pytest's terminal while items run."""

    def __init__(self, config: pytest.Config) -> None:
        import time

        self._config = config
        self._clock = time.monotonic
        self.total = self.done = 0
        self.started = self._clock()

    def _write(self, line: str) -> None:
        reporter = self._config.pluginmanager.get_plugin("terminalreporter")
        capture = self._config.pluginmanager.get_plugin("capturemanager")
        if reporter is None:
            return
        if capture is not None:
            with capture.global_and_fixture_disabled():
                reporter.write_line(line)
        else:
            reporter.write_line(line)

    def start(self, total: int) -> None:
        self.total, self.started = total, self._clock()
        self._write(f"\nmir eval: {total} case run(s)")

    def advance(self, suite: str, run: Any) -> None:
        from mir.evals import eta

        self.done += 1
        verdict = "ERROR" if run.error else ("pass" if run.passed else "FAIL")
        self._write(
            f"mir eval [{self.done}/{self.total}] {verdict} {suite} {run.case_id}"
            f" #{run.repeat + 1} {run.latency_ms:.0f} ms,"
            f" ETA {eta(self.started, self.done, self.total)}"
        )

    def stop(self, reason: str) -> None:
        self._write(f"mir eval: {reason}: finishing the runs in flight")

    def finish(self) -> None:
        pass


class CaseFailed(AssertionError):
    """A case or the gate failed: its messages are the whole report (no traceback)."""
