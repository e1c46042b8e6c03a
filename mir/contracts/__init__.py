"""The formats users write (contracts, intent docs, eval suites) and their loaders."""

from mir.contracts.application import json_schemas
from mir.contracts.domain import (
    LAYERS,
    ActionSpec,
    AgentContract,
    Budget,
    DecisionSpec,
    Ensemble,
    EvalCase,
    EvalSuite,
    Fallback,
    IntentDoc,
    Layer,
    ParamLimit,
    Review,
    Route,
    Rule,
    RuleCondition,
    Scope,
)
from mir.contracts.entrypoints import (
    load_contract,
    load_eval_suite,
    load_intent_doc,
    load_yaml_model,
)

__all__ = [
    "LAYERS",
    "ActionSpec",
    "AgentContract",
    "Budget",
    "DecisionSpec",
    "Ensemble",
    "EvalCase",
    "EvalSuite",
    "Fallback",
    "IntentDoc",
    "Layer",
    "ParamLimit",
    "Review",
    "Route",
    "Rule",
    "RuleCondition",
    "Scope",
    "json_schemas",
    "load_contract",
    "load_eval_suite",
    "load_intent_doc",
    "load_yaml_model",
]
