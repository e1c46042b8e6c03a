"""The JSON schemas mir publishes, composed over every capability (public interface)."""

from mir.schemas.catalogue import (
    SchemaAnswer,
    all_schemas,
    rendered_schemas,
    schema_answer,
    schema_file,
    stale_lines,
    stale_schemas,
    write_schemas,
)

__all__ = [
    "SchemaAnswer",
    "all_schemas",
    "rendered_schemas",
    "schema_answer",
    "schema_file",
    "stale_lines",
    "stale_schemas",
    "write_schemas",
]
