"""Each local store, and each fleet-store (Postgres) one written so far, offers every
method of its Protocol in ``mir.storage.ports``, with the same parameters (names, kinds,
defaults): what a second backend implements is what the capabilities call today."""

from __future__ import annotations

import inspect

import pytest

from mir.alerts import SentLog
from mir.evals.history import EvalHistory
from mir.evals.history_pg import PostgresEvalHistory
from mir.models.history import ModelHistory
from mir.models.history_pg import PostgresModelHistory
from mir.runtime.agent_states import AgentStateFile
from mir.runtime.ledger import SqliteExecutionLedger
from mir.storage import ports

PAIRS = [
    (ports.ExecutionLedger, SqliteExecutionLedger),
    (ports.AgentStateStore, AgentStateFile),
    (ports.ReviewAlertLog, SentLog),
    (ports.EvalRunLog, EvalHistory),
    (ports.ModelChangeLog, ModelHistory),
    (ports.EvalRunLog, PostgresEvalHistory),
    (ports.ModelChangeLog, PostgresModelHistory),
]


def _methods(protocol: type) -> list[str]:
    return [
        name
        for name, value in vars(protocol).items()
        if callable(value) and not name.startswith("_")
    ]


def _shape(function: object) -> list[tuple[str, object, object]]:
    parameters = inspect.signature(function).parameters.values()  # type: ignore[arg-type]
    return [(p.name, p.kind, p.default) for p in parameters]


@pytest.mark.parametrize(("protocol", "store"), PAIRS, ids=lambda x: x.__name__)
def test_the_store_has_its_protocols_methods_and_parameters(protocol: type, store: type):
    methods = _methods(protocol)
    assert methods  # a Protocol with nothing to implement would prove nothing
    for name in methods:
        assert hasattr(store, name), f"{store.__name__} lacks {name}"
        assert _shape(getattr(store, name)) == _shape(getattr(protocol, name)), name


def test_the_runtime_port_is_the_storage_port():
    from mir.runtime import ports as runtime_ports

    assert runtime_ports.ExecutionLedger is ports.ExecutionLedger
    assert runtime_ports.FlowHolder is ports.FlowHolder
