"""The rows of a batch: one JSON object a line, each with a key that names it across runs.

A row's key is the value of ``--key FIELD`` when given (a string or an integer, unique in
the file), else its content: the sha256 of its canonical JSON, with ``#2``, ``#3`` ... for
a repeat of an identical row. Either way a re-run recognises the rows already decided,
also after rows were appended or reordered. A row's flow id comes from the batch's id
and its key, so a run cut off mid-row finds that row's flow in the traces again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from mir.errors import UsageError


@dataclass(frozen=True)
class BatchRow:
    position: int  # 0-based, among the file's rows (a scripted reply is matched by it)
    line: int  # 1-based line in the file
    key: str
    input: dict[str, Any]


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def parse_rows(lines: Iterable[str], source: str, key_field: str | None) -> list[BatchRow]:
    """Every row of ``lines`` (blank lines skipped), or a UsageError at ``source:line``."""
    rows: list[BatchRow] = []
    seen: dict[str, int] = {}
    repeats: dict[str, int] = {}
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        where = f"{source}:{number}"
        value = _object(text, where)
        if key_field is not None:
            key = _field_key(value, key_field, where)
        else:
            digest = hashlib.sha256(canonical(value).encode("utf-8", "surrogatepass"))
            base = f"sha256:{digest.hexdigest()[:20]}"
            repeats[base] = repeats.get(base, 0) + 1
            key = base if repeats[base] == 1 else f"{base}#{repeats[base]}"
        if key in seen:
            raise UsageError(
                f"--key {key_field}: {key!r} is also the key of line {seen[key]}",
                where=where,
                hint="a key names one row: pick a field that is unique, or leave --key out",
            )
        seen[key] = number
        rows.append(BatchRow(len(rows), number, key, value))
    if not rows:
        raise UsageError("no rows to decide (the file is empty)", where=source)
    return rows


def _object(text: str, where: str) -> dict[str, Any]:
    # As strict as --input: NaN / Infinity and a key given twice are refused too.
    from mir.runtime import parse_json_object

    return parse_json_object(text, where, hint="one JSON object a line (JSONL)")


def _field_key(value: dict[str, Any], field: str, where: str) -> str:
    if field not in value:
        raise UsageError(f"--key {field}: the row has no field {field!r}", where=where)
    key = value[field]
    if isinstance(key, bool) or not isinstance(key, str | int) or key == "":
        raise UsageError(
            f"--key {field}: the key is {canonical(key)[:40]}, not a string or an integer",
            where=where,
        )
    return str(key)


def flow_id_of(batch_id: str, key: str) -> str:
    """The flow id a row is decided under in one batch (the same on every re-run)."""
    material = f"{batch_id}\0{key}".encode("utf-8", "surrogatepass")
    return "b" + hashlib.sha256(material).hexdigest()[:31]
