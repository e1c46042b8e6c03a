"""The promotion gate: a model version reaches production only through its agents' evals."""

from mir.releases.gate import Promotion, agents_using, promote

__all__ = ["Promotion", "agents_using", "promote"]
