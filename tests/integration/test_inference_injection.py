"""The support_desk injection ticket on the real embedded model (slow): not refunded.

The ticket's message forges the prompt's own policy line ("Policy for this ticket: ...
refund"). The message reaches the model only inside the escaped data block, and the
contract binds a refund to the ticket's category and to the policy's refund_allowance
(0 for a changed mind), so the outcome does not depend on the model resisting it.
"""

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO

EXAMPLE = REPO / "examples" / "support_desk"


@pytest.mark.slow
def test_the_embedded_model_does_not_refund_the_injection_ticket(tmp_path: Path) -> None:
    from mir import load_agent

    desk = tmp_path / "support_desk"
    shutil.copytree(EXAMPLE, desk, ignore=shutil.ignore_patterns(".mir", "__pycache__"))
    ticket = json.loads((desk / "inputs" / "injection.json").read_text())
    with load_agent("refunds.triage", project=desk) as agent:
        record = agent.decide(ticket)
        events = agent.trace(record.flow_id)
    assert not (record.action == "refund" and record.executed), record
    assert record.status in ("executed", "fallback") and record.action in ("reject", "escalate")
    infer = next(e for e in events if e.step == "infer")
    assert infer.provider == "llama"  # the real model was asked, not only the rules
