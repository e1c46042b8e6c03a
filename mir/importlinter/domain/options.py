"""Raw import-linter options (strings and lists of strings) -> validated contracts.

The rules are import-linter's field by field: blank lines in multi-line values are
skipped, a single value stands for a one-item list, booleans are ``true``/``false`` in
any case, an unknown option is an error ("Did you mean ...?") rather than silently
ignored, and the error messages are import-linter's words.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mir.errors import did_you_mean
from mir.importlinter.domain.contracts import (
    AcyclicSiblingsContract,
    AlertLevel,
    Contract,
    ForbiddenContract,
    IndependenceContract,
    Layer,
    LayersContract,
    LayerTail,
    PrivateModulesContract,
    ProtectedContract,
    Session,
)
from mir.importlinter.domain.expressions import ExpressionError, ImportExpression, ModuleExpression

Raw = str | list[str]


@dataclass(frozen=True)
class RawContract:
    """One contract's options as read from the file (strings and lists of strings)."""

    options: dict[str, Any]
    line: int | None = None  # line of its INI section header, for error messages


@dataclass(frozen=True)
class RawConfig:
    """A config file's ``[importlinter]`` session options and its contracts."""

    path: Path
    session: dict[str, Any]
    contracts: list[RawContract] = field(default_factory=list)

    def where(self, contract: RawContract | None = None) -> str:
        if contract is not None and contract.line is not None:
            return f"{self.path}:{contract.line}"
        return str(self.path)


class OptionsError(ValueError):
    """Options import-linter refuses; ``contract`` is None for the session section."""

    def __init__(self, message: str, contract: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.contract = contract


class _FieldError(ValueError):
    pass


_REQUIRED = object()
_ABSENT = object()  # optional, no default: the model's own default applies

_COMMON = frozenset({"id", "name", "type"})


# --------------------------------------------------------------------------- fields
def _single(raw: Raw) -> str:
    if isinstance(raw, list):
        raise _FieldError("Expected a single value, got multiple values.")
    return str(raw)


def _many(raw: Raw) -> list[str]:
    items = list(raw) if isinstance(raw, list | tuple) else [raw]
    return [str(item) for item in items if str(item).strip()]


def _boolean(raw: Raw) -> bool:
    text = _single(raw)
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    raise _FieldError(f"Could not parse a boolean from '{text}'.")


def _integer(raw: Raw) -> int:
    text = _single(raw)
    try:
        value = int(text)
    except ValueError:
        raise _FieldError(f"'{text}' is not an integer.") from None
    if value < 0:
        raise _FieldError("Must be >= 0.")
    return value


def _alert_level(raw: Raw) -> AlertLevel:
    text = _single(raw).strip()
    if not text:
        return AlertLevel.ERROR
    try:
        return AlertLevel(text)
    except ValueError:
        raise _FieldError(f"Invalid value '{text}': expected 'none', 'warn' or 'error'.") from None


def _module_expressions(raw: Raw) -> tuple[ModuleExpression, ...]:
    try:
        return tuple(dict.fromkeys(ModuleExpression.parse(_single(i)) for i in _many(raw)))
    except ExpressionError as exc:
        raise _FieldError(str(exc)) from None


def _import_expressions(raw: Raw) -> tuple[ImportExpression, ...]:
    try:
        return tuple(dict.fromkeys(ImportExpression.parse(_single(i)) for i in _many(raw)))
    except ExpressionError as exc:
        raise _FieldError(str(exc)) from None


def _text(raw: Raw) -> str:
    return "\n".join(raw) if isinstance(raw, list) else str(raw)


def _strings(raw: Raw) -> frozenset[str]:
    return frozenset(_single(i) for i in _many(raw))


def _contained_pairs(names: set[str]) -> str:
    pairs = sorted(
        (parent, child) for parent in names for child in names if child.startswith(parent + ".")
    )
    return ", ".join(f"'{parent}' contains '{child}'" for parent, child in pairs)


def _layer(text: str) -> Layer:
    if "|" in text and ":" in text:
        raise _FieldError(
            "Layer cannot have a mixture of independent and non-independent elements."
        )
    separator = "|" if "|" in text else ":" if ":" in text else None
    raw_tails = [p.strip() for p in text.split(separator)] if separator else [text.strip()]
    tails: list[LayerTail] = []
    seen: set[str] = set()
    repeated: set[str] = set()
    for raw_tail in raw_tails:
        optional = raw_tail.startswith("(") and raw_tail.endswith(")")
        name = raw_tail[1:-1] if optional else raw_tail
        if name in seen:
            repeated.add(name)
        seen.add(name)
        tails.append(LayerTail(name=name, optional=optional))
    if repeated:
        names = ", ".join(repr(n) for n in sorted(repeated))
        raise _FieldError(f"Modules cannot be repeated in a layer: {names}.")
    if contained := _contained_pairs(seen):
        raise _FieldError(f"Modules cannot contain each other in a layer: {contained}.")
    return Layer(tails=tuple(tails), independent=separator != ":")


def _layers(raw: Raw) -> tuple[Layer, ...]:
    return tuple(_layer(_single(item)) for item in _many(raw))


_Field = tuple[Callable[[Raw], Any], object]
_SHARED: dict[str, _Field] = {
    "ignore_imports": (_import_expressions, _ABSENT),
    "unmatched_ignore_imports_alerting": (_alert_level, _ABSENT),
    "broken_contract_guidance": (_text, _ABSENT),
}
_FIELDS: dict[str, tuple[type[Contract], dict[str, _Field]]] = {
    "layers": (
        LayersContract,
        {
            "layers": (_layers, _REQUIRED),
            "containers": (_module_expressions, _ABSENT),
            "exhaustive": (_boolean, _ABSENT),
            "exhaustive_ignores": (_strings, _ABSENT),
        },
    ),
    "forbidden": (
        ForbiddenContract,
        {
            "source_modules": (_module_expressions, _REQUIRED),
            "forbidden_modules": (_module_expressions, _REQUIRED),
            "allow_indirect_imports": (_boolean, _ABSENT),
            "as_packages": (_boolean, _ABSENT),
        },
    ),
    "independence": (IndependenceContract, {"modules": (_module_expressions, _REQUIRED)}),
    "acyclic_siblings": (
        AcyclicSiblingsContract,
        {
            "ancestors": (_module_expressions, _REQUIRED),
            "depth": (_integer, _ABSENT),
            "skip_descendants": (_module_expressions, _ABSENT),
        },
    ),
    "protected": (
        ProtectedContract,
        {
            "protected_modules": (_module_expressions, _REQUIRED),
            "allowed_importers": (_module_expressions, _REQUIRED),
            "as_packages": (_boolean, _ABSENT),
        },
    ),
    "private_modules": (
        PrivateModulesContract,
        {"packages_with_private_modules": (_module_expressions, _ABSENT)},
    ),
}


# --------------------------------------------------------------------------- contracts
def parse_contract(options: dict[str, Raw]) -> Contract:
    """One contract's options -> its model; ``OptionsError`` says which field is wrong."""
    if "name" not in options:
        raise OptionsError("a contract has no 'name'", contract=str(options.get("id", "?")))
    name = _single(options["name"])
    if "type" not in options:
        raise OptionsError("the contract has no 'type'", contract=name)
    kind = _single(options["type"])
    if kind not in _FIELDS:
        raise OptionsError(f"unknown contract type '{kind}'", contract=name)
    model, own_fields = _FIELDS[kind]
    fields = {**own_fields, **_SHARED}
    values: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for field_name, (parse, default) in fields.items():
        if field_name not in options:
            if default is _REQUIRED:
                errors[field_name] = "This is a required field."
            continue
        try:
            values[field_name] = parse(options[field_name])
        except _FieldError as exc:
            errors[field_name] = str(exc)
    recognised = sorted(_COMMON | set(fields))
    for option in sorted(set(options) - set(recognised)):
        close = did_you_mean(option, recognised)
        hint = f" Did you mean '{close}'?" if close else ""
        errors[option] = f"Unrecognized option.{hint}"
    if not errors:
        contract = model(name=name, **values)
        errors = _cross_field_errors(contract)
        if not errors:
            return contract
    detail = "; ".join(f"{field}: {message}" for field, message in errors.items())
    raise OptionsError(detail, contract=name)


def is_private_name(name: str) -> bool:
    """``_x`` is private; dunder names like ``__main__`` are not."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _cross_field_errors(contract: Contract) -> dict[str, str]:
    if isinstance(contract, PrivateModulesContract):
        private = sorted(
            str(e)
            for e in contract.packages_with_private_modules
            if any(is_private_name(part) for part in str(e).split("."))
        )
        if private:
            listed = ", ".join(repr(p) for p in private)
            return {
                "packages_with_private_modules": (
                    f"Packages cannot be private or inside a private module: {listed}. "
                    "List an ancestor that isn't private instead."
                )
            }
    if not isinstance(contract, LayersContract):
        return {}
    seen: set[str] = set()
    duplicated: set[str] = set()
    for layer in contract.layers:
        names = {tail.name for tail in layer.tails}
        duplicated |= seen & names
        seen |= names
    if duplicated:
        names_text = ", ".join(repr(n) for n in sorted(duplicated))
        return {"layers": f"Modules cannot be in more than one layer: {names_text}."}
    if contained := _contained_pairs(seen):
        return {"layers": f"Layers cannot contain other layers: {contained}."}
    if contract.exhaustive and not contract.containers:
        return {
            "exhaustive": "The exhaustive option is not supported for contracts without containers."
        }
    return {}


# --------------------------------------------------------------------------- session
def parse_session(options: dict[str, Any]) -> Session:
    """The ``[importlinter]`` section; ``contract_types`` plugins are refused (they need
    importing user code, which mir never does)."""
    if "contract_types" in options:
        raise OptionsError("custom contract_types are not supported (mir never imports user code)")
    raw_roots = options.get("root_packages", options.get("root_package"))
    if raw_roots is None:
        raise OptionsError("missing 'root_packages' (or 'root_package')")
    roots = tuple(_many(raw_roots))
    if not roots:
        raise OptionsError("'root_packages' is empty")

    def flag(key: str) -> bool:
        return str(options.get(key, "")) in ("True", "true")

    return Session(
        root_packages=roots,
        include_external_packages=flag("include_external_packages"),
        exclude_type_checking_imports=flag("exclude_type_checking_imports"),
    )
