"""How many CPU threads llama.cpp gets when the settings do not say."""

from __future__ import annotations

import os

from mir.inference.llama_setup import THREADS_ENV, default_threads


def test_environment_pins_the_thread_count(monkeypatch):
    monkeypatch.setenv(THREADS_ENV, "3")
    assert default_threads() == 3


def test_without_the_variable_all_cores_up_to_eight(monkeypatch):
    monkeypatch.delenv(THREADS_ENV, raising=False)
    assert default_threads() == max(1, min(os.cpu_count() or 1, 8))


def test_a_bad_value_is_ignored(monkeypatch):
    monkeypatch.setenv(THREADS_ENV, "zero")
    assert default_threads() == max(1, min(os.cpu_count() or 1, 8))
