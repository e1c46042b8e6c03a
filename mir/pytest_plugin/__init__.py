"""pytest plugin (entry point ``pytest11``, name ``mir``): ``pytest --mir-evals`` collects
mir eval suites as test items (``collection.py``). Without the flag it imports nothing
of mir but this package."""

from mir.pytest_plugin.collection import pytest_addoption, pytest_collect_file

__all__ = ["pytest_addoption", "pytest_collect_file"]
