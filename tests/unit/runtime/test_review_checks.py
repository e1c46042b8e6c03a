"""review_problems: every field a review condition names is checked against the schemas
at load, each problem at its own field path (the loader turns them into file:line)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from mir.runtime.review_checks import review_problems
from tests.unit.runtime.fakes import Refund, contract


class Address(BaseModel):
    city: str
    zip: str | None = None


class Ticket(BaseModel):
    order_id: str
    amount: float
    shipping: Address | None = None  # anyOf [$ref, null]
    extra: dict[str, Any] = {}  # a free mapping: nothing below it can be checked


DECISION = Refund.model_json_schema()
INPUT = Ticket.model_json_schema()


def cond(field: str, op: str = "==", value: Any = 1) -> dict[str, Any]:
    return {"field": field, "op": op, "value": value}


def found(*conditions: dict[str, Any], input_schema: Any = INPUT, **review: Any) -> list:
    rules = [{"name": "r", "conditions": list(conditions)}] if conditions else []
    c = contract(review={"when": rules, **review})
    return review_problems(c, DECISION, input_schema)


def test_sound_conditions_have_no_problems():
    assert (
        found(
            cond("action", "in", ["refund", "deny"]),
            cond("decision.action", "==", "refund"),
            cond("decision.amount", ">", 100),
            cond("input.amount", ">=", 10.5),
            cond("input.shipping.city", "==", "Lyon"),  # through $ref and a nullable union
            cond("input.extra.anything.below", "==", 1),
            cond("context.total", "<", 50),
            always=["escalate"],
        )
        == []
    )


def test_every_problem_is_listed_at_its_own_path():
    problems = found(
        cond("decision.amout", ">", 1),
        cond("input.shipping.town"),
        cond("input.amount.cents"),
        cond("context.tier"),
        cond("amount"),
        cond("decision"),
        cond("action", "==", "refnd"),
        cond("action", ">", "refund"),
        always=["refund", "escalat"],
    )
    at = [loc for loc, _ in problems]
    texts = [text for _, text in problems]
    assert at == [
        ("review", "always", 1),
        *[("review", "when", 0, "conditions", j, "field") for j in range(6)],
        ("review", "when", 0, "conditions", 6, "value"),
        ("review", "when", 0, "conditions", 7, "op"),
    ]
    assert texts[0].startswith("unknown action 'escalat'; did you mean 'escalate'?")
    assert texts[1].startswith(
        "'decision.amout' is not in the decision schema; did you mean 'decision.amount'?"
    )
    assert texts[2].startswith(
        "'input.shipping.town' is not in the input schema ('shipping' has no field 'town'); "
        "use one of the fields: city, zip"
    )
    assert "'amount' is not an object" in texts[3]
    assert texts[4].startswith("'context.tier' is not in the contract's context scope")
    assert "use 'action', or a field under input., context. or decision." in texts[5]
    assert "use 'action'" in texts[6]  # a root alone names no field
    assert texts[7].startswith("unknown action 'refnd'; did you mean 'refund'?")
    assert "compare it with ==, !=, in or not in" in texts[8]


def test_a_comparison_its_field_cannot_take_is_a_problem():
    problems = found(
        cond("decision.amount", ">", "100"),
        cond("decision.reason", "<", 3),
        cond("input.amount", "in", 5),
        cond("decision.amount", ">", True),
    )
    messages = [text for _, text in problems]
    assert len(messages) == 4
    assert "'decision.amount' is a number; compare it with a number, not '100'" in messages[0]
    assert "'decision.reason' is text; compare it with text, not 3" in messages[1]
    assert "'in' needs a list of values, got 5" in messages[2]
    assert "not True" in messages[3]  # a boolean is not a number here


def test_risk_factors_are_checked_like_rules():
    risk = {"threshold": 1, "factors": [{"name": "f", "weight": 1, "conditions": [cond("x.y")]}]}
    (problem,) = found(risk=risk)
    assert problem[0] == ("review", "risk", "factors", 0, "conditions", 0, "field")


def test_without_an_input_schema_the_scope_lists_the_input():
    assert found(cond("input.amount"), input_schema=None) == []
    ((_, text),) = found(cond("input.amout"), input_schema=None)
    assert text.startswith("'input.amout' is not in the contract's input scope; did you mean")


def test_an_empty_context_scope_names_the_fix():
    c = contract(
        scope={"input": ["amount"], "context": []},
        review={"when": [{"name": "r", "conditions": [cond("context.total")]}]},
    )
    ((_, text),) = review_problems(c, DECISION, INPUT)
    assert "scope.context is empty" in text and "add 'total' to scope.context" in text


def test_a_self_referencing_schema_does_not_hang():
    looping = {"$ref": "#/$defs/Node", "$defs": {"Node": {"$ref": "#/$defs/Node"}}}
    assert found(cond("input.a.b.c"), input_schema=looping) == []


def test_a_schema_too_branchy_to_walk_is_given_up_on_quickly():
    import time

    defs = {f"N{i}": {"anyOf": [{"$ref": f"#/$defs/N{i + 1}"}] * 4} for i in range(30)}
    bomb = {"$ref": "#/$defs/N0", "$defs": {**defs, "N30": {"type": "object"}}}
    started = time.perf_counter()
    assert found(cond("input.a.b"), input_schema=bomb) == []  # 4**30 paths: cannot say
    assert time.perf_counter() - started < 1.0
