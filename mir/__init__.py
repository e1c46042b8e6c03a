"""mir: Machine Intelligence Runtime.

The runtime is a library first: production code calls it in-process (``from mir import
load_agent``); the ``mir`` CLI is a thin shell over the same functions. Public names are
resolved lazily so ``import mir`` stays cheap.
"""

from importlib import import_module as _import_module

__version__ = "0.1.0"

# name -> module that defines it; filled in as capabilities publish library API.
_LAZY: dict[str, str] = {
    "MirError": "mir.errors",
    "MirUserError": "mir.errors",
    "ConfigError": "mir.errors",
    "find_project": "mir.project",
    "load_contract": "mir.contracts",
    "load_agent": "mir.runtime",
    "Agent": "mir.runtime",
    "DecisionRecord": "mir.runtime",
    "approve": "mir.runtime",
    "reject": "mir.runtime",
    "run_eval": "mir.evals",
    "EvalReport": "mir.evals",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        return getattr(_import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'mir' has no attribute {name!r}")


def __dir__() -> list[str]:
    # the public API only: not this module's helpers, not sub-packages imported by now
    return sorted(["__version__", *_LAZY])
