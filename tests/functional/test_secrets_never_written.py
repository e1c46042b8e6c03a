"""No secret is written: 30 secret shapes in every field a user or a model controls, through
the real ``mir`` CLI on a copy of examples/support_desk, then a grep of everything mir
wrote or prints.

Fields: the input (the ticket's message), the context (the loader's customer record),
the model's raw output, the decision's reason, the executor's result and its error, the
reviewer's reason; plus secrets in environment variables and a project pattern
(``[tool.mir.traces] redact_patterns``). The copy's adapters are wrapped so the context
and the executors carry the samples (an executor echoing an API response or error is
what leaks in real life).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import MIR_EXE
from tests.functional.reviewer_keys import sign_as
from tests.support.secret_samples import CUSTOM_PATTERN, ENV_SECRETS, SAMPLES

EXAMPLE = Path(__file__).parents[2] / "examples" / "support_desk"
SECRETS = [secret for _, _, secret in SAMPLES]
TEXTS = [text for _, text, _ in SAMPLES]
# Short samples that fit the decision's 40-character reason (one per flow).
REASONS = ["sk_live_51HqLyjWDarjtT1zdp7dc", "api_key: 9f8e7d6c5b4a3210", "fail pwd=letmein2024"]

HARNESS = """

# --- test harness: secrets in the context, the executor's result and its error --------
_SAMPLES = json.loads((PROJECT / "secrets.json").read_text(encoding="utf-8"))
_load_context, _pay = load_ticket_context, issue_refund


def load_ticket_context(ticket):
    context = dict(_load_context(ticket))
    context["customer"] = {**(context.get("customer") or {}), "notes": _SAMPLES}
    return context


def issue_refund(params, *, idempotency_key):
    if str(params.get("reason", "")).startswith("fail"):
        raise RuntimeError("gateway refused: " + " | ".join(_SAMPLES))
    return {**_pay(params, idempotency_key=idempotency_key), "gateway": _SAMPLES}
"""


def chunks(texts: list[str], limit: int = 480) -> list[str]:
    """The samples joined into messages short enough for a ticket (500 characters)."""
    out: list[str] = [""]
    for text in texts:
        if out[-1] and len(out[-1]) + len(text) + 3 > limit:
            out.append("")
        out[-1] = f"{out[-1]} | {text}" if out[-1] else text
    return out


class Desk:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.flows: list[str] = []  # approved, rejected, failed in the executor
        self.env = {
            **os.environ,
            **ENV_SECRETS,
            "COLUMNS": "200",
            "NO_COLOR": "1",
            # The example's own ledger is the shop's data, not mir's: keep it outside .mir.
            "SUPPORT_DESK_LEDGER": str(root.parent / "ledger.sqlite3"),
        }

    def mir(self, *args: str, expect: int | None = 0) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(MIR_EXE), *args],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if expect is not None:
            assert done.returncode == expect, (args, done.stdout, done.stderr)
        return done

    def run(self, name: str, ticket: dict, decision: dict) -> dict:
        (self.root / f"{name}.json").write_text(json.dumps(ticket))
        # The model's raw output: first one holding every sample (invalid: the schema has
        # no "notes"; it is traced, then retried), then the decision itself.
        raw = [json.dumps({**decision, "notes": TEXTS}), json.dumps(decision)]
        (self.root / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in raw))
        done = self.mir(
            "run", "agent", "refunds.triage", "--input", f"@{name}.json",
            "--provider", "scripted", "--responses", f"{name}.jsonl", "--json", expect=None,
        )  # fmt: skip
        return json.loads(done.stdout)


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> Desk:
    root = tmp_path_factory.mktemp("secrets") / "support_desk"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
    key = sign_as(root, root.parent / "keys", None)  # refunds need a signed approval
    (root / "secrets.json").write_text(json.dumps(TEXTS))
    adapters = root / "capabilities" / "refunds" / "adapters.py"
    adapters.write_text(adapters.read_text() + HARNESS)
    pyproject = root / "pyproject.toml"
    patterns = json.dumps([CUSTOM_PATTERN])
    pyproject.write_text(
        pyproject.read_text() + f"\n[tool.mir.traces]\nredact_patterns = {patterns}\n"
    )
    messages = chunks(TEXTS)
    assert len(messages) <= 3, "more samples than three tickets carry: add a flow"
    messages += [""] * (4 - len(messages))
    desk = Desk(root)
    desk.env["MIR_REVIEWER_KEY_FILE"] = str(key)

    def ticket(n: int, order: str, customer: str, amount: float) -> dict:
        return {
            "ticket_id": f"T-{n}", "customer_id": customer, "order_id": order,
            "category": "damaged", "requested_amount": amount, "message": messages[n],
        }  # fmt: skip

    def decision(order: str, amount: float, confidence: float, reason: str) -> dict:
        return {
            "category": "damaged", "action": "refund", "order_id": order, "amount": amount,
            "confidence": confidence, "reason": reason,
        }  # fmt: skip

    # 1: pending review, then approved: executes, the result carries the samples.
    # (Its own reason holds no secret: a stored decision that lost one to redaction is
    # not the decision proposed, and approving it aborts; see flow 4.)
    approved = desk.run("approved", ticket(0, "A-1002", "C-002", 149.0),
                        decision("A-1002", 149.0, 0.5, "arrived broken"))  # fmt: skip
    assert approved["status"] == "pending_review", approved
    done = json.loads(desk.mir("approve", approved["flow_id"], "--json", expect=None).stdout)
    assert (done["status"], done["executed"]) == ("executed", True), done
    # 4: pending review with a secret in the decision's reason: approving aborts.
    redacted = desk.run("redacted", ticket(3, "A-1004", "C-004", 19.0),
                        decision("A-1004", 19.0, 0.5, REASONS[0]))  # fmt: skip
    assert redacted["status"] == "pending_review", redacted
    out = desk.mir("approve", redacted["flow_id"], "--json", expect=None).stdout
    assert "decision_redacted" in json.loads(out)["reasons"], out
    # 2: pending review, then rejected with the samples as the reviewer's reason.
    rejected = desk.run("rejected", ticket(1, "A-1003", "C-003", 59.0),
                        decision("A-1003", 59.0, 0.5, REASONS[1]))  # fmt: skip
    assert rejected["status"] == "pending_review", rejected
    done = json.loads(
        desk.mir("reject", rejected["flow_id"], "--reason", " | ".join(TEXTS), "--json").stdout
    )
    assert done["status"] == "rejected", done
    # 3: executed at once, and the executor raises an error holding the samples.
    failed = desk.run("failed", ticket(2, "A-1001", "C-001", 24.9),
                      decision("A-1001", 24.9, 0.9, REASONS[2]))  # fmt: skip
    assert "executor_error" in failed["reasons"], failed
    desk.flows = [approved["flow_id"], rejected["flow_id"], failed["flow_id"]]
    return desk


def leaks(text: str | bytes) -> list[str]:
    blob = text.encode() if isinstance(text, str) else text
    return [secret for secret in SECRETS if secret.encode() in blob]


def state_files(desk: Desk, *, executions: bool) -> dict[str, bytes]:
    state = desk.root / ".mir"
    return {
        str(p.relative_to(state)): p.read_bytes()
        for p in state.rglob("*")
        if p.is_file() and p.relative_to(state).parts[0].startswith("executions") == executions
    }


def test_the_samples_reached_every_field(desk: Desk) -> None:
    # Guards the test itself: each field holds a redacted sample, so the greps below
    # look at places where the secrets really went.
    out = desk.mir("traces", "export", "--format", "json").stdout
    events = [json.loads(line) for line in out.splitlines()]
    text = {e["flow_id"]: [] for e in events}
    for e in events:
        text[e["flow_id"]].append(json.dumps(e))
    approved, rejected, failed = (" ".join(text[f]) for f in desk.flows)
    for flow in (approved, rejected, failed):
        assert flow.count("[REDACTED]") >= 3 * len(SAMPLES)  # context, raw output, notes
    assert '"gateway"' in approved  # the executor's result
    assert "gateway refused" in failed  # the executor's error
    review = [e for e in events if e["flow_id"] == desk.flows[1] and e["step"] == "review"]
    assert "customer ref [REDACTED]" in json.dumps(review)  # the reviewer's reason
    snapshot = next(e for e in events if e["flow_id"] == desk.flows[0] and e["step"] == "snapshot")
    infer = [e for e in events if e["flow_id"] == desk.flows[0] and e["step"] == "infer"]
    assert "[REDACTED]" in json.dumps(infer[0]["data"])  # the model's raw output
    assert "[REDACTED]" in snapshot["data"]["input"]["message"]
    assert "[REDACTED]" in json.dumps(snapshot["data"]["context"]["customer"]["notes"])


def test_no_secret_in_any_trace_file(desk: Desk) -> None:
    files = state_files(desk, executions=False)
    assert any(name.startswith("traces") for name in files)
    assert {name: leaks(blob) for name, blob in files.items() if leaks(blob)} == {}


def test_no_secret_in_the_database_after_compaction(desk: Desk) -> None:
    desk.mir("traces", "compact")
    files = state_files(desk, executions=False)
    assert any(name.endswith("traces.duckdb") for name in files)
    assert {name: leaks(blob) for name, blob in files.items() if leaks(blob)} == {}
    # DuckDB may compress strings on disk: read them back through mir too.
    assert leaks(desk.mir("traces", "export", "--format", "json").stdout) == []


@pytest.mark.parametrize("fmt", ["json", "otlp", "parquet"])
def test_no_secret_in_any_export(desk: Desk, fmt: str) -> None:
    out = desk.root.parent / f"export.{fmt}"
    desk.mir("traces", "export", "--format", fmt, "--output", str(out))
    assert out.stat().st_size > 0
    if fmt == "parquet":
        import duckdb

        rows = duckdb.sql(f"SELECT * FROM read_parquet('{out}')").fetchall()
        assert len(rows) > 10
        assert leaks(repr(rows)) == []
    assert leaks(out.read_bytes()) == []


def test_no_secret_in_what_mir_prints_from_traces(desk: Desk) -> None:
    # (``mir run`` / ``mir approve`` print the live decision to its caller, reason
    # included, as ``Agent.decide`` returns it: that is not read back from a trace.)
    printed = [desk.mir("traces", "list", "--json").stdout, desk.mir("traces", "list").stdout]
    for flow in desk.flows:
        printed.append(desk.mir("traces", "show", flow).stdout)
        printed.append(desk.mir("traces", "show", flow, "--json").stdout)
    assert all(printed)
    assert leaks("\n".join(printed)) == []


def test_no_secret_in_execution_records(desk: Desk) -> None:
    files = state_files(desk, executions=True)
    assert files, "no execution records found"
    assert {name: leaks(blob) for name, blob in files.items() if leaks(blob)} == {}


def test_a_bad_project_pattern_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.mir]\n\n[tool.mir.traces]\nredact_patterns = ["ACME-[0-9"]\n'
    )
    done = subprocess.run(
        [str(MIR_EXE), "traces", "list"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr
    assert "redact_patterns" in done.stderr and "pyproject.toml" in done.stderr
    assert "Traceback" not in done.stderr
