"""Pure import-linter semantics: expressions, the import graph, contracts, checks."""
