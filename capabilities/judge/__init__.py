"""judge: the public interface; other capabilities import only these names.

mir itself never imports this package: it loads the judge agents by path
(``agents/grade.yaml``, ``agents/compare.yaml``) like any user agent.
"""

from .adapters import record_verdict
from .domain import CompareRequest, Grade, GradeRequest, Preference

__all__ = [
    "CompareRequest",
    "Grade",
    "GradeRequest",
    "Preference",
    "record_verdict",
]
