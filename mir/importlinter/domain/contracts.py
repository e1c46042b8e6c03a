"""The import-linter contract types mir understands, as validated pydantic models.

Each model mirrors one import-linter contract class option for option (same names,
same defaults), so a config that import-linter accepts builds the same contract here.
Parsing the raw option strings into these models lives in ``options``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict

from mir.importlinter.domain.expressions import ImportExpression, ModuleExpression


class AlertLevel(StrEnum):
    """What an ``ignore_imports`` entry that matches no import causes."""

    NONE = "none"
    WARN = "warn"
    ERROR = "error"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)


class Session(_Model):
    """The ``[importlinter]`` section: what graph to build."""

    root_packages: tuple[str, ...]
    include_external_packages: bool = False
    exclude_type_checking_imports: bool = False


class LayerTail(_Model):
    """One module of a layer, relative to its container; ``(name)`` makes it optional."""

    name: str
    optional: bool = False


class Layer(_Model):
    """One line of ``layers``: ``a | b`` are independent siblings, ``a : b`` are not."""

    tails: tuple[LayerTail, ...]
    independent: bool = True


class _Contract(_Model):
    name: str
    ignore_imports: tuple[ImportExpression, ...] = ()
    unmatched_ignore_imports_alerting: AlertLevel = AlertLevel.ERROR
    broken_contract_guidance: str | None = None


class LayersContract(_Contract):
    type: Literal["layers"] = "layers"
    layers: tuple[Layer, ...]
    containers: tuple[ModuleExpression, ...] = ()
    exhaustive: bool = False
    exhaustive_ignores: frozenset[str] = frozenset()


class ForbiddenContract(_Contract):
    type: Literal["forbidden"] = "forbidden"
    source_modules: tuple[ModuleExpression, ...]
    forbidden_modules: tuple[ModuleExpression, ...]
    allow_indirect_imports: bool = False
    as_packages: bool = True


class IndependenceContract(_Contract):
    type: Literal["independence"] = "independence"
    modules: tuple[ModuleExpression, ...]


class AcyclicSiblingsContract(_Contract):
    type: Literal["acyclic_siblings"] = "acyclic_siblings"
    ancestors: tuple[ModuleExpression, ...]
    depth: int = 10
    skip_descendants: tuple[ModuleExpression, ...] = ()


class ProtectedContract(_Contract):
    type: Literal["protected"] = "protected"
    protected_modules: tuple[ModuleExpression, ...]
    allowed_importers: tuple[ModuleExpression, ...]
    as_packages: bool = True


class PrivateModulesContract(_Contract):
    type: Literal["private_modules"] = "private_modules"
    packages_with_private_modules: tuple[ModuleExpression, ...] = ()


Contract = (
    LayersContract
    | ForbiddenContract
    | IndependenceContract
    | AcyclicSiblingsContract
    | ProtectedContract
    | PrivateModulesContract
)
