"""Exports redact again with today's rules: a secret written before a variable was set or
a ``redact_patterns`` entry was added does not leave the machine in any format."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from mir.traces import TraceEvent, TraceStore, export_traces

SECRET_ENV = {"PAYMENT_API_KEY": "pk-9f8e7d6c5b4a"}
OLD = ["pk-9f8e7d6c5b4a", "ACME-20261130"]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    folder = tmp_path / "traces"
    with TraceStore(folder, environ={}) as store:  # yesterday: no variable, no pattern
        store.append(
            [
                TraceEvent(flow_id="f1", seq=0, step="snapshot", agent="a",
                           data={"input": {"note": "ref ACME-20261130 key pk-9f8e7d6c5b4a"}}),
                TraceEvent(flow_id="f1", seq=1, step="final", agent="a", status="executed",
                           reasons=("see pk-9f8e7d6c5b4a",)),
                TraceEvent(flow_id="f2", seq=0, step="snapshot", agent="a", data={"n": 1}),
            ]
        )  # fmt: skip
    return folder


@pytest.mark.parametrize("fmt", ["json", "otlp", "parquet"])
def test_exports_redact_what_todays_rules_catch(folder: Path, tmp_path: Path, fmt: str) -> None:
    assert all(s.encode() in b"".join(p.read_bytes() for p in folder.rglob("*.jsonl")) for s in OLD)
    today = TraceStore(folder, environ=SECRET_ENV, redact_patterns=["ACME-[0-9]{8}"])
    out = tmp_path / f"export.{fmt}"
    assert export_traces(today, fmt, out) == 3  # type: ignore[arg-type]
    if fmt == "parquet":
        rows = duckdb.sql(f"SELECT * FROM read_parquet('{out}') ORDER BY flow_id, seq").fetchall()
        text = repr(rows)
        assert len(rows) == 3
    else:
        text = out.read_text()
    for secret in OLD:
        assert secret not in text
    assert "[REDACTED]" in text
    assert "f2" in text  # untouched events are exported as they are


def test_parquet_without_secrets_takes_the_direct_path(folder: Path, tmp_path: Path) -> None:
    out = tmp_path / "plain.parquet"
    assert export_traces(TraceStore(folder, environ={}), "parquet", out) == 3
    assert duckdb.sql(f"SELECT count(*) FROM read_parquet('{out}')").fetchall() == [(3,)]
