"""The support desk's month-of-traces generator (examples/support_desk/scripts), loaded by
path for the drift tests and the benchmark: one generator, the one the README runs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "examples/support_desk/scripts/drift_month.py"


def load():
    name = "support_desk_drift_month"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
