"""``decision.confidence_source: logprobs``: the action's probability from token logprobs."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from mir.inference import TokenLogprob
from mir.runtime import load_agent
from mir.runtime.confidence import action_probability, string_value_span
from tests.unit.runtime.fakes import MemoryTraces

FIXTURE = Path(__file__).parents[2] / "fixtures" / "runtime" / "project"
ACTIONS = ("refund", "deny", "escalate")
TEXT = '{"action": "refund", "confidence": 1.0, "amount": 40, "reason": "broken"}'


def tokens(*items: tuple[str, float, dict[str, float]]) -> list[TokenLogprob]:
    return [TokenLogprob(token=t, logprob=lp, top=top) for t, lp, top in items]


def spelled(text: str, covering: list[TokenLogprob]) -> list[TokenLogprob]:
    """``covering`` (the tokens from the action key on) padded with plain one-character
    tokens before and after, so the whole list spells ``text``."""
    head = text.index(' "refund"') if covering[0].token.startswith(' "') else text.index("refund")
    body = "".join(t.token for t in covering)
    assert text[head : head + len(body)] == body
    before = [TokenLogprob(token=c, logprob=-0.01) for c in text[:head]]
    after = [TokenLogprob(token=c, logprob=-0.01) for c in text[head + len(body) :]]
    return before + covering + after


@pytest.mark.parametrize(
    ("text", "span"),
    [
        ('{"action": "deny"}', (12, 16)),
        ('{ "x": {"action": "no"}, "action":"deny" }', (35, 39)),
        ('{"reason": "a \\"q\\"", "action" :\n "escalate"}', (35, 43)),
    ],
)
def test_the_action_value_is_found_at_the_top_level(text: str, span: tuple[int, int]):
    assert string_value_span(text, "action") == span
    first, close = span
    assert text[close] == '"' and json.loads(text)["action"] == text[first:close]


@pytest.mark.parametrize(
    "text",
    ['{"action": "re\\u0066und"}', '{"action": 3}', '{"other": "refund"}', "[1]", '{"action'],
)
def test_no_plain_string_action_means_no_span(text: str):
    assert string_value_span(text, "action") is None


def test_the_probability_is_renormalised_over_the_allowed_actions_only():
    covering = tokens(
        # the token that opens the value: ' {' cannot start a string, 'I' is no action
        (' "', -0.1, {' "': -0.1, " {": -2.0}),
        ("re", -1.0, {"re": -1.0, "es": -2.0, "de": -3.0, "I": -0.2, "You": -0.5}),
        ("fund", -0.3, {"fund": -0.3, "ject": -0.4, "lax": -1.5}),
        ('",', -0.2, {'",': -0.2, '"}': -1.0, "s": -0.5}),
    )
    found = action_probability(TEXT, spelled(TEXT, covering), "action", ACTIONS)
    # by hand: each step is p(chosen) / sum p(alternatives an allowed action can continue)
    # ' "' ends before the value: it is not a step. 'ject' (reject) is no allowed action.
    step_re = math.exp(-1.0) / (math.exp(-1.0) + math.exp(-2.0) + math.exp(-3.0))
    step_fund = 1.0  # only 'fund' continues an allowed action after 're'
    step_quote = math.exp(-0.2) / (math.exp(-0.2) + math.exp(-1.0))
    assert found.steps == pytest.approx((step_re, step_fund, step_quote))
    assert found.value == pytest.approx(step_re * step_fund * step_quote)
    assert found.raw == pytest.approx(math.exp(-1.0 - 0.3 - 0.2))
    assert 0 < found.raw < found.value <= 1


def test_a_token_across_the_value_start_is_compared_after_its_prefix():
    covering = tokens(
        (' "ref', -0.5, {' "ref': -0.5, ' "esc': -1.5, ' "': -3.0, " [": -0.1, "ref": -0.2}),
        ('und"', -0.1, {}),
    )
    found = action_probability(TEXT, spelled(TEXT, covering), "action", ACTIONS)
    # ' "' keeps the value open (a prefix of every action): it counts; ' [' and 'ref'
    # do not reproduce the ' "' before the value. A step without alternatives is raw.
    first = math.exp(-0.5) / (math.exp(-0.5) + math.exp(-1.5) + math.exp(-3.0))
    assert found.steps == pytest.approx((first, math.exp(-0.1)))


def test_without_token_probabilities_there_is_a_note_and_no_number():
    assert action_probability(TEXT, None, "action", ACTIONS).note == (
        "the provider returned no token probabilities"
    )
    wrong = tokens(("{}", -0.1, {}))
    assert "do not spell" in (action_probability(TEXT, wrong, "action", ACTIONS).note or "")


# --------------------------------------------------------------------------- the flow
def _app(tmp_path: Path, source: str = "logprobs") -> Path:
    root = tmp_path / "app"
    shutil.copytree(FIXTURE, root)
    path = root / "capabilities" / "refunds" / "agents" / "triage.yaml"
    contract = yaml.safe_load(path.read_text())
    contract["decision"]["confidence_source"] = source
    contract.pop("cascade_on", None)
    path.write_text(yaml.safe_dump(contract, sort_keys=False))
    return root


def _script(root: Path, *lines: dict) -> Path:
    path = root / "r.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _answer(text: str, covering: list[TokenLogprob]) -> dict:
    return {
        "text": text,
        "logprobs": [t.model_dump() for t in spelled(text, covering)],
    }


UNSURE = tokens(
    ("re", -1.0, {"re": -1.0, "de": -1.2, "es": -1.4}),
    ("fund", -0.05, {"fund": -0.05}),
    ('",', -0.01, {'",': -0.01}),
)


def _decide(root: Path, script: Path) -> tuple[object, dict]:
    traces = MemoryTraces()
    with load_agent(
        "refunds.triage", project=root, provider="scripted", responses=script, traces=traces
    ) as agent:
        record = agent.decide({"order_id": "A1", "amount": 40})
        events = agent.trace(record.flow_id)
    validate = [e for e in events if e.step == "validate"][-1]
    return record, validate.data


def test_a_sure_sounding_model_is_sent_to_review_by_its_own_token_probabilities(tmp_path):
    root = _app(tmp_path)
    record, data = _decide(root, _script(root, _answer(TEXT, UNSURE)))
    # 're' is renormalised; 'fund' and '",' came without alternatives: their raw p
    expected = math.exp(-1.0) / (math.exp(-1.0) + math.exp(-1.2) + math.exp(-1.4))
    expected *= math.exp(-0.05 - 0.01)
    assert record.status == "pending_review"
    assert "low_confidence" in record.reasons
    assert record.decision["confidence"] == pytest.approx(expected, abs=1e-6)
    note = data["confidence"]
    assert note["used"] == "logprobs" and note["reported"] == 1.0
    assert note["logprobs"] == pytest.approx(expected, abs=1e-6)
    assert data["decision"]["confidence"] == note["logprobs"]


def test_the_reported_number_does_not_count_under_logprobs(tmp_path):
    root = _app(tmp_path)
    text = TEXT.replace("1.0", "7777")
    sure = tokens(("refund", -0.01, {"refund": -0.01, "deny": -6.0}), ('",', -0.01, {}))
    record, data = _decide(root, _script(root, _answer(text, sure)))
    assert record.status == "executed"
    assert data["confidence"]["reported"] == 7777
    assert record.decision["confidence"] > 0.98


def test_without_logprobs_the_reported_number_stays_and_the_event_says_why(tmp_path):
    root = _app(tmp_path)
    record, data = _decide(root, _script(root, {"text": TEXT}))
    assert record.status == "executed" and record.decision["confidence"] == 1.0
    assert data["confidence"]["used"] == "reported"
    assert data["confidence"]["note"] == "the provider returned no token probabilities"


def test_the_reported_source_ignores_logprobs(tmp_path):
    root = _app(tmp_path, source="reported")
    record, data = _decide(root, _script(root, _answer(TEXT, UNSURE)))
    assert record.status == "executed" and record.decision["confidence"] == 1.0
    assert "confidence" not in data


def test_an_invalid_proposal_stays_invalid_under_logprobs(tmp_path):
    root = _app(tmp_path)
    bad = TEXT.replace('"amount": 40', '"amount": -4').replace("1.0", "9")
    record, data = _decide(root, _script(root, _answer(bad, UNSURE)))
    assert record.status == "fallback"
    assert "confidence" not in data


# --------------------------------------------------------------------------- any split
@st.composite
def tokenised(draw: st.DrawFn) -> list[TokenLogprob]:
    """TEXT cut into random tokens; at each, the chosen token and random alternatives share
    one probability distribution (with some mass left to the rest of the vocabulary)."""
    cuts = sorted(draw(st.sets(st.integers(1, len(TEXT) - 1), max_size=30)))
    pieces = [TEXT[a:b] for a, b in zip([0, *cuts], [*cuts, len(TEXT)], strict=True)]
    weight = st.floats(1e-6, 1.0, allow_nan=False)
    alternative = st.sampled_from(['"', ' "', "re", "ref", "de", "esc", "x", '",', "fund", "I"])
    tokens = []
    for piece in pieces:
        others = draw(
            st.dictionaries(alternative.filter(lambda a, p=piece: a != p), weight, max_size=5)
        )
        chosen, rest = draw(weight), draw(st.floats(0, 1.0))
        total = chosen + rest + sum(others.values())
        tokens.append(
            TokenLogprob(
                token=piece,
                logprob=math.log(chosen / total),
                top={a: math.log(w / total) for a, w in others.items()},
            )
        )
    return tokens


@settings(max_examples=200, deadline=None)
@given(tokenised())
def test_any_tokenisation_gives_a_probability_no_lower_than_the_raw_one(tokens):
    found = action_probability(TEXT, tokens, "action", ACTIONS)
    assert found.value is not None and found.raw is not None
    assert 0 < found.raw <= found.value * (1 + 1e-9) and found.value <= 1
    assert all(0 < step <= 1 for step in found.steps)
