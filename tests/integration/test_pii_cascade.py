"""Personal data kept off a remote model: a local route fails, the flow cascades to a
litellm route whose server (127.0.0.1, recording every request it receives) must never
see the planted emails, card numbers or IBANs, while the decision comes back with the
right order id and the real email restored."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from mir.runtime import load_agent
from mir.traces import TraceStore
from tests.support import pii_samples as ps
from tests.support.recording_llm import recording_server

FIXTURE = Path(__file__).parents[1] / "fixtures" / "runtime" / "project"

pytestmark = pytest.mark.slow  # `import litellm` takes seconds

CONTRACT = """\
agent: contact
mission: Refund the order of a customer's message, and say where to reply.
scope:
  input: [order_id, message]
decision:
  json_schema:
    type: object
    additionalProperties: false
    required: [action, confidence, order_id, reply_to]
    properties:
      action: {{type: string}}
      confidence: {{type: number}}
      order_id: {{type: string}}
      reply_to: {{type: string}}
actions:
  refund:
    executor: adapters:issue_refund
    bindings: {{order_id: $input.order_id}}
  escalate:
    executor: adapters:escalate
retries: 0
prompt: contact.j2
routes:
  - {{name: local, provider: scripted, responses: bad.jsonl}}
  - {{name: remote, provider: litellm, model: openai/recorder, api_base: '{url}',
      timeout_s: 30{pii}}}
cascade_on: [invalid]
fallback:
  default:
    action: escalate
    params: {{order_id: $input.order_id, reply_to: none, confidence: 0}}
"""
PROMPT = "{{ mission }}\nMessage: {{ input | tojson }}\nSchema: {{ schema | tojson }}\n"


def project(tmp_path: Path, url: str, pii: str = "") -> Path:
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    agents = root / "capabilities/refunds/agents"
    (agents / "contact.yaml").write_text(CONTRACT.format(url=url, pii=pii))
    (agents / "contact.j2").write_text(PROMPT)
    (root / "bad.jsonl").write_text('"not json"\n' * 20)
    return root


def planted(seed: int) -> tuple[dict, list[str]]:
    rng = random.Random(seed)
    email, card, iban = ps.email(rng), ps.card(rng), ps.iban(rng)
    order = f"ORD-{rng.randint(10000, 99999)}"
    message = (
        f"Hi, order {order} never came. Write to {email} (or {ps.email(rng)}). "
        f"I paid with {card}; refund to {iban} please. Regards, {rng.choice(ps.FIRST)} Doe."
    )
    return {"order_id": order, "message": message}, [email, card, iban]


def _leaked(bodies: list[bytes], values: list[str]) -> list[str]:
    sent = b"\n".join(bodies).decode()
    squeezed = sent.replace(" ", "").replace("-", "")
    return [v for v in values if v in sent or v.replace(" ", "").replace("-", "") in squeezed]


def test_a_cascade_to_a_remote_route_never_sends_the_planted_values(tmp_path: Path):
    with recording_server() as server:
        root = project(tmp_path, server.url)
        store = TraceStore(tmp_path / "traces")
        records, values = [], []
        with load_agent("refunds.contact", project=root, traces=store) as agent:
            for seed in range(5):
                case, secrets = planted(seed)
                values += secrets
                records.append((case, agent.decide(case)))
        assert len(server.bodies) == 5
        assert _leaked(server.bodies, values) == []
        assert b"<EMAIL_1>" in server.bodies[0] and b"<CARD_1>" in server.bodies[0]
        for case, record in records:
            assert record.status == "executed", record
            assert record.decision["order_id"] == case["order_id"]
            assert record.decision["reply_to"] in case["message"]  # the real email, restored
            assert "@" in record.decision["reply_to"]
        infer = [e for e in store.flow(records[0][1].flow_id) if e.step == "infer"]
        remote = [e for e in infer if e.provider == "litellm"]
        assert remote[0].data["pii"] == {
            "masked": {"email": 2, "iban": 1, "card": 1, "person": 1},
            "restored": 1,
        }
        store.close()
    executed = [json.loads(x) for x in (root / "executed.jsonl").read_text().splitlines()]
    assert [e["params"]["order_id"] for e in executed] == [c["order_id"] for c, _ in records]


def test_block_keeps_the_prompt_home_and_the_rules_decide(tmp_path: Path):
    with recording_server() as server:
        root = project(tmp_path, server.url, pii=", pii: block")
        store = TraceStore(tmp_path / "traces")
        case, _ = planted(1)
        with load_agent("refunds.contact", project=root, traces=store) as agent:
            record = agent.decide(case)
        assert server.bodies == []
        assert record.status == "fallback" and "pii_blocked" in record.reasons
        assert record.decision["action"] == "escalate"
        store.close()


def test_allow_sends_the_prompt_as_it_is(tmp_path: Path):
    with recording_server() as server:
        root = project(tmp_path, server.url, pii=", pii: allow")
        case, values = planted(2)
        with load_agent("refunds.contact", project=root, traces=TraceStore(tmp_path / "t")) as a:
            a.decide(case)
        assert _leaked(server.bodies, values) == values
