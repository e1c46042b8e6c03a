"""``run_lint`` with hand-written fakes for its ports: no files, no cache on disk."""

from __future__ import annotations

from typing import get_args

import pytest

from mir.boundaries.application import CapabilityDir, Layout, SourceFile, run_lint
from mir.boundaries.cache import FileParseCache
from mir.boundaries.model import IntentInfo
from mir.boundaries.parsing import exported_names
from mir.boundaries.report import BaselineEntry, apply_baseline
from mir.boundaries.settings import Layer, LintSettings
from mir.contracts import LAYERS, IntentDoc


class FakeSource:
    """A project held in a dict: path -> source text; intent docs as IntentDoc objects."""

    def __init__(self, files: dict[str, str], docs: dict[str, IntentDoc]) -> None:
        self.files = files
        self.docs = docs
        self.reads: list[str] = []
        self.version = 0

    def layout(self, settings: LintSettings) -> Layout:
        entries = []
        for path, text in sorted(self.files.items()):
            parts = path[:-3].split("/")
            is_package = parts[-1] == "__init__"
            module = ".".join(parts[:-1] if is_package else parts)
            # identity(): (dev, ino, size, mtime_ns, ctime_ns), the version standing for mtime
            signature = (0, 0, len(text), self.version, 0)
            entries.append(SourceFile(path, module, is_package, signature))
        caps = sorted({path.split("/")[1] for path in self.files if path.count("/") >= 2})
        return Layout(
            "app",
            entries,
            [
                CapabilityDir(
                    name,
                    f"app/{name}",
                    f"app/{name}/__init__.py" in self.files,
                    f"app/{name}/CLAUDE.md" if name in self.docs else None,
                )
                for name in caps
            ],
            frozenset({"app"}),
        )

    def read(self, path: str) -> bytes:
        self.reads.append(path)
        if path.endswith("CLAUDE.md"):
            return self.docs[path.split("/")[1]].model_dump_json().encode()
        return self.files[path].encode()

    def intent(self, capability: CapabilityDir) -> IntentInfo | None:
        doc = self.docs.get(capability.name)
        if doc is None:
            return None
        return IntentInfo(capability.intent_path or "", doc, None, 1, {"depends_on": 3})


def _project() -> FakeSource:
    return FakeSource(
        {
            "app/__init__.py": "",
            "app/orders/__init__.py": "from app.orders.domain import Order\n__all__ = ['Order']\n",
            "app/orders/domain.py": "import litellm\nfrom app.orders import adapters\n",
            "app/orders/adapters.py": "import duckdb\nfrom app.billing.domain import Invoice\n",
            "app/billing/__init__.py": "from app.billing.domain import Invoice\n",
            "app/billing/domain.py": "from app.orders import Order\nclass Invoice: ...\n",
        },
        {
            "orders": IntentDoc(capability="orders", depends_on=["billing"], public=["Order"]),
            "billing": IntentDoc(capability="billing", depends_on=[], public=["Invoice"]),
        },
    )


def test_rules_run_over_the_fake_project() -> None:
    report = run_lint(LintSettings(), (), _project(), FileParseCache(None))
    assert [(f.code, f.path, f.line, f.imported) for f in report.findings] == [
        ("MIR103", "app/billing/domain.py", 1, "app.orders"),
        ("MIR105", "app/billing/domain.py", 1, "app.orders"),
        ("MIR102", "app/orders/adapters.py", 2, "app.billing.domain"),
        ("MIR104", "app/orders/domain.py", 1, "litellm"),
        ("MIR101", "app/orders/domain.py", 2, "app.orders.adapters"),
    ]
    assert report.findings[1].message == "capability cycle: billing -> orders -> billing"
    assert report.exit_code == 1


def test_second_run_reuses_everything_and_an_edit_reparses_one_file() -> None:
    source, cache = _project(), FileParseCache(None)
    first = run_lint(LintSettings(), (), source, cache)
    assert first.stats.parsed == 6
    source.reads.clear()
    second = run_lint(LintSettings(), (), source, cache)
    assert (second.stats.parsed, second.findings) == (0, first.findings)
    assert not [path for path in source.reads if path.endswith(".py")]  # stat said unchanged

    source.files["app/orders/domain.py"] = "from app.orders import adapters\n"
    source.version += 1  # every "mtime" changes, one content changes
    third = run_lint(LintSettings(), (), source, cache)
    assert third.stats.parsed == 1
    assert "MIR104" not in {f.code for f in third.findings if f.path == "app/orders/domain.py"}


def test_type_checking_imports_can_be_ignored() -> None:
    source = _project()
    source.files["app/orders/domain.py"] = (
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from app.orders import adapters\n"
    )
    counted = run_lint(LintSettings(), (), source, FileParseCache(None))
    ignored = run_lint(LintSettings(type_checking_imports=False), (), source, FileParseCache(None))
    assert "MIR101" in {f.code for f in counted.findings}
    assert "MIR101" not in {f.code for f in ignored.findings}


def test_shared_modules_are_exempt() -> None:
    source = _project()
    source.files["app/orders/adapters.py"] = "from app.billing.domain import Invoice\n"
    shared = run_lint(LintSettings(), ("app.billing.domain",), source, FileParseCache(None))
    assert "MIR102" not in {f.code for f in shared.findings}


def test_baseline_absorbs_counts_and_reports_stale_entries() -> None:
    report = run_lint(LintSettings(), (), _project(), FileParseCache(None))
    findings = list(report.findings)
    known = [BaselineEntry(f.code, f.path, f.importer, f.imported) for f in findings[1:]]
    known.append(BaselineEntry("MIR101", "gone.py", "x", "y", count=2))
    new, baselined, stale = apply_baseline(findings, known)
    assert new == findings[:1] and baselined == findings[1:]
    assert stale == [BaselineEntry("MIR101", "gone.py", "x", "y", count=2)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("from a import B, _c\nimport os\n__all__ = ['B']\n", ("B",)),
        ("from a import B as Bee, _c\ndef run(): ...\nclass _P: ...\n", ("Bee", "run")),
        ("from __future__ import annotations\n__all__ = ['x']\n__all__ += ['y']\n", ("x", "y")),
    ],
)
def test_exported_names(text: str, expected: tuple[str, ...]) -> None:
    assert exported_names(text) == expected


def test_settings_layer_matches_the_contract_formats() -> None:
    assert get_args(Layer) == LAYERS
