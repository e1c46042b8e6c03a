"""The results file: one line (or Parquet row) per input row decided so far, in the
inputs' order, replaced atomically at the end of every run (also one cut short), so it
never shows half a run's rows. ``.parquet`` is written by DuckDB (imported only then);
any other name gets JSON lines."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from pathlib import Path

from mir.batch.outcomes import RowOutcome
from mir.errors import UsageError
from mir.storage import write_atomic

_PARQUET_COLUMNS = {
    "key": "VARCHAR",
    "line": "BIGINT",
    "flow_id": "VARCHAR",
    "status": "VARCHAR",
    "action": "VARCHAR",
    "executed": "BOOLEAN",
    "reasons": "VARCHAR[]",
    "decision": "VARCHAR",  # the decision as JSON text: each agent has its own fields
    "latency_ms": "DOUBLE",
    "error": "VARCHAR",
}


def check_out(out: Path, inputs: Path) -> None:
    """Refuse, before any decision, a results path that cannot be written, or that is
    the inputs (the results would replace them)."""
    if out.resolve() == inputs.resolve():
        raise UsageError(f"--out {out} is the --batch file", hint="name another file")
    if out.is_dir():
        raise UsageError(f"--out {out} is a folder", hint="name a .jsonl or .parquet file")
    if not out.parent.is_dir():
        raise UsageError(f"--out {out}: folder {out.parent} does not exist")


def write_results(out: Path, outcomes: Sequence[RowOutcome]) -> None:
    lines = "".join(
        json.dumps(o.model_dump(), ensure_ascii=False, separators=(",", ":")) + "\n"
        for o in outcomes
    )
    if out.suffix.lower() != ".parquet":
        write_atomic(out, lines)
        return
    flat = "".join(
        json.dumps(
            {**o.model_dump(), "decision": None if o.decision is None else json.dumps(o.decision)},
            ensure_ascii=False,
        )
        + "\n"
        for o in outcomes
    )
    _write_parquet(out, flat)


def _write_parquet(out: Path, lines: str) -> None:
    import duckdb

    folder = out.parent
    with tempfile.TemporaryDirectory(dir=folder, prefix=f".{out.name}.") as scratch:
        rows, table = Path(scratch) / "rows.jsonl", Path(scratch) / "rows.parquet"
        rows.write_text(lines, encoding="utf-8")
        columns = ", ".join(f"'{name}': '{kind}'" for name, kind in _PARQUET_COLUMNS.items())
        source = f"'{_sql(rows)}', format='newline_delimited', columns={{{columns}}}"
        select = f"SELECT * FROM read_json({source})"
        if not lines:
            select += " LIMIT 0"
        con = duckdb.connect()
        try:
            con.execute(f"COPY ({select}) TO '{_sql(table)}' (FORMAT parquet)")
        finally:
            con.close()
        write_atomic(out, table.read_bytes())  # the one atomic writer: fsync, rename, folder


def _sql(path: Path) -> str:
    return str(path).replace("'", "''")
