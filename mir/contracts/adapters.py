"""Reading YAML and front matter with line numbers, so errors can say file:line: field."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from mir.errors import ConfigError

FRONT_MATTER_FENCE = "---"
# libyaml's C loader when available: a cold lint reads every intent doc.
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class LocatedDocument:
    """Parsed YAML data plus the node tree, to map a field path back to a line."""

    data: Any
    root: yaml.Node | None
    line_offset: int = 0  # lines before the YAML starts (front matter fence)

    def line_of(self, loc: tuple[Any, ...]) -> int | None:
        """1-based line of the deepest node found along ``loc`` (a pydantic error path)."""
        node = self.root
        line = node.start_mark.line if node is not None else None
        for part in loc:
            if isinstance(node, yaml.MappingNode):
                # the key's line: a nested mapping's value starts on the line after it
                pair = next(((k, v) for k, v in node.value if k.value == str(part)), None)
                key, match = pair if pair else (None, None)
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
                match = node.value[part] if part < len(node.value) else None
                key = match
            else:
                key = match = None
            if match is None or key is None:
                break
            node, line = match, key.start_mark.line
        return None if line is None else line + 1 + self.line_offset


def parse_yaml(text: str, where: str, line_offset: int = 0) -> LocatedDocument:
    """Parse YAML safely; malformed YAML becomes a ConfigError naming file and line."""
    try:
        # one parse: compose the node tree (for line numbers), then construct from it
        loader = _Loader(text)
        try:
            root = loader.get_single_node()
            data = loader.construct_document(root) if root is not None else None
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + 1 + line_offset}" if mark else ""
        problem = exc.problem or exc.context or "malformed YAML"
        raise ConfigError(f"invalid YAML: {problem}", where=f"{where}{line}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {exc}", where=where) from exc
    return LocatedDocument(data=data, root=root, line_offset=line_offset)


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise ConfigError("file not found", where=str(path)) from exc
    except UnicodeDecodeError as exc:
        raise ConfigError("file is not valid UTF-8", where=str(path)) from exc
    except IsADirectoryError as exc:
        raise ConfigError("is a directory, expected a file", where=str(path)) from exc


def split_front_matter(text: str, where: str) -> tuple[str, str] | None:
    """(front matter YAML, body) of a markdown file, or None when it has no front matter."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != FRONT_MATTER_FENCE:
        return None
    for index in range(1, len(lines)):
        if lines[index].strip() == FRONT_MATTER_FENCE:
            return "".join(lines[1:index]), "".join(lines[index + 1 :])
    raise ConfigError("front matter opened with '---' is never closed", where=f"{where}:1")
