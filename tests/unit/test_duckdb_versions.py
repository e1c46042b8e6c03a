"""Which DuckDB the suite runs on: ``make test`` runs on the fleet extra's pinned 1.5.5
(whose DuckLake extensions ship as wheels), then ``make test-duckdb2`` runs the local
trace and drift tests again with DuckDB 2 first on the path; this says each run is on
the DuckDB it claims (a path that did not take effect would pass on the wrong one)."""

from __future__ import annotations

import os
import subprocess

import duckdb

from tests.conftest import MIR_EXE


def test_the_suite_runs_on_the_duckdb_it_was_asked_for():
    expected = os.environ.get("MIR_EXPECT_DUCKDB", "1.5.5")
    assert duckdb.__version__.startswith(expected), duckdb.__version__


def test_a_mir_subprocess_runs_on_the_same_duckdb():
    code = "import duckdb; print(duckdb.__version__)"
    python = MIR_EXE.parent / "python"
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == duckdb.__version__
