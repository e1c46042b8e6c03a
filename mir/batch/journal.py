"""A batch's journal: what a re-run needs to skip the rows already decided.

One JSONL file per results file, under ``<state_dir>/batches/``: a header (the batch id,
the agent, the inputs and results paths), then ``{"start": key, "flow": id}`` before a
row is handed to a decision and ``{"done": key, "outcome": {...}}`` once its outcome is
known. Each line is written whole, flushed and fsynced before the run goes on. A line
cut short by a kill is the last one, and is dropped (the row it named is looked up in
the traces); any other line that does not parse is corruption, refused in one line.

The run holds ``<journal>.lock`` while it writes (a second run on the same results
file is refused), and its worker processes hold ``<journal>.workers`` shared for as
long as they live: a re-run waits for the workers of a killed run to exit before it
looks at the rows they had.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mir.batch.outcomes import RowOutcome
from mir.errors import UsageError
from mir.storage import file_lock

WORKERS_WAIT_S = 30.0


def journal_path(state_dir: Path, out: Path) -> Path:
    digest = hashlib.sha256(str(out.resolve()).encode("utf-8", "surrogatepass")).hexdigest()
    return state_dir / "batches" / f"{digest[:20]}.jsonl"


@dataclass
class Journal:
    path: Path
    batch_id: str
    agent: str
    started: dict[str, str] = field(default_factory=dict)  # key -> flow id
    done: dict[str, RowOutcome] = field(default_factory=dict)
    _handle: Any = None
    # The trace store's redactor: an outcome's decision, reasons and error are written
    # here and to the results file with the traces' secrets replaced, as the traces are.
    # The key, line and flow id are kept as they are (they name the row).
    redact: Callable[[Any], Any] | None = None

    def start(self, key: str, flow_id: str) -> None:
        self.started[key] = flow_id
        self._write({"start": key, "flow": flow_id})

    def finish(self, outcome: RowOutcome) -> None:
        if self.redact is not None:
            shown = outcome.model_dump()
            names = {k: shown[k] for k in ("key", "line", "flow_id")}
            outcome = RowOutcome.model_validate({**self.redact(shown), **names})
        self.done[outcome.key] = outcome
        self._write({"done": outcome.key, "outcome": outcome.model_dump()})

    def in_doubt(self) -> dict[str, str]:
        """Rows handed to a decision by an earlier run and never finished there."""
        return {k: f for k, f in self.started.items() if k not in self.done}

    def _write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
        self._handle.write(line.encode("utf-8", "surrogatepass"))
        self._handle.flush()
        os.fsync(self._handle.fileno())


@contextlib.contextmanager
def opened_journal(
    state_dir: Path,
    out: Path,
    *,
    agent: str,
    inputs: Path,
    redact: Callable[[Any], Any] | None = None,
) -> Iterator[Journal]:
    """The results file's journal (new or read back), held by this run until the block
    ends; a UsageError when another run holds it, or the file is not a journal of this
    agent's batch."""
    path = journal_path(state_dir, out)
    with file_lock(path.with_suffix(".lock"), timeout=0) as held:
        if not held:
            raise UsageError(
                f"another `mir run agent --batch` (or one of its workers) is writing {out}",
                hint="wait for it to finish, or write to another --out",
            )
        with file_lock(path.with_suffix(".workers"), timeout=WORKERS_WAIT_S) as quiet:
            if not quiet:
                raise UsageError(
                    f"worker processes of an earlier batch into {out} are still deciding",
                    hint="wait for them to exit (or kill them), then run it again",
                )
        journal = _read(path, out, agent) if path.exists() else None
        with open(path, "ab") as handle:
            if journal is None:
                journal = Journal(path, uuid.uuid4().hex, agent, _handle=handle)
                journal._write(_header(journal, out, inputs))
            journal._handle, journal.redact = handle, redact
            yield journal


def _header(journal: Journal, out: Path, inputs: Path) -> dict[str, Any]:
    return {
        "batch": journal.batch_id,
        "agent": journal.agent,
        "inputs": str(inputs.resolve()),
        "out": str(out.resolve()),
        "created_at": datetime.now(UTC).isoformat(),
    }


def _read(path: Path, out: Path, agent: str) -> Journal | None:
    """The journal read back; None when not even its header was written whole (the
    first run was killed at once): a new batch starts."""
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end < len(data):  # a line cut short by a kill: only ever the last one
        with open(path, "r+b") as handle:
            handle.truncate(end)
            os.fsync(handle.fileno())
    lines = data[:end].decode("utf-8", "surrogatepass").splitlines()
    records = [_line(text, f"{path}:{n}") for n, text in enumerate(lines, start=1)]
    if not records:
        return None
    if "batch" not in records[0]:
        raise UsageError(
            "the batch journal has no header",
            where=f"{path}:1",
            hint=f"delete it to start {out} again (its rows would then be decided again)",
        )
    header = records[0]
    if header.get("agent") != agent:
        raise UsageError(
            f"{out} holds the results of a batch of {header.get('agent')}, not {agent}",
            hint="write this agent's results to another --out",
        )
    journal = Journal(path, str(header["batch"]), agent)
    for number, record in enumerate(records[1:], start=2):
        try:
            if "start" in record:
                journal.started[str(record["start"])] = str(record["flow"])
            elif "done" in record:
                journal.done[str(record["done"])] = RowOutcome.model_validate(record["outcome"])
            else:
                raise ValueError("neither start nor done")
        except (KeyError, TypeError, ValueError) as exc:
            where = f"{path}:{number}"
            raise UsageError(f"not a batch journal line ({exc})", where=where) from None
    return journal


def _line(text: str, where: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise UsageError(
            "the batch journal is damaged (a line that is not a JSON object)",
            where=where,
            hint="delete it to start again (its rows would then be decided again)",
        )
    return value
