"""The layers hold in the tests too: a test of the platform, the judges or a cloud never needs the CLI.

import-linter keeps the package's layers (`lint-imports`); these tests keep the tests that mirror the lower
layers from leaning on the top one, so each can be read and run as a test of its own layer.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
#: The test folders of the layers below the CLI.
LOWER_LAYERS = ("platform", "review", "clouds")


def imported_modules(path: Path) -> set[str]:
    """Every module a Python file imports, wherever the import statement is (a function body too)."""
    modules = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            modules |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            modules.add(node.module)
            modules |= {f"{node.module}.{alias.name}" for alias in node.names}
    return modules


@pytest.mark.parametrize("folder", LOWER_LAYERS)
def test_no_test_of_a_lower_layer_imports_the_cli(folder: str) -> None:
    files = sorted((TESTS / folder).rglob("*.py"))
    assert files, f"tests/{folder} has no tests"
    offenders = {str(path.relative_to(TESTS)): sorted(m for m in imported_modules(path)
                                                       if m == "spotkube.cli" or m.startswith("spotkube.cli."))
                 for path in files}
    assert {path: modules for path, modules in offenders.items() if modules} == {}


def test_the_import_scan_sees_every_form_of_import(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("import spotkube.cli.app\nfrom spotkube import cli\nfrom .local import x\n\n"
                      "def late() -> None:\n    from spotkube.cli.offline import run_stack\n")
    assert {"spotkube.cli.app", "spotkube.cli", "spotkube.cli.offline"} <= imported_modules(sample)
