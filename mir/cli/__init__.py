"""The ``mir`` command-line shell (public interface: the entry points)."""

from mir.cli.app import build_app, main, run_main

__all__ = ["build_app", "main", "run_main"]
