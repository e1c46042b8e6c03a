"""``--source``: which flow sources a traces command reads."""

from __future__ import annotations

import pytest

from mir.errors import UsageError
from mir.traces import chosen_sources


def test_eval_and_shadow_flows_are_kept_apart_by_default():
    assert chosen_sources(None) == ("production", "replay")
    assert chosen_sources("all") is None
    assert chosen_sources("shadow") == ("shadow",)


def test_an_unknown_source_is_a_usage_error_with_a_suggestion():
    with pytest.raises(UsageError) as caught:
        chosen_sources("evals")
    assert "--source: unknown source 'evals'" in str(caught.value)
    assert "did you mean 'eval'?" in str(caught.value)
