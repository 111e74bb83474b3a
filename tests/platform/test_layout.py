"""What import-linter can't check: no code outside a cloud's folder tests a cloud's name, and the tests of
the lower layers never need the CLI.

A test of a cloud's name (`if cloud == "aks"`) outside `components/spotkube/clouds/` is cloud knowledge
out of its folder: a third cloud would have to edit it. The neutral code asks the cloud's profile instead
(docs/architecture.md#adding-a-cloud). import-linter keeps the package's layers (`lint-imports`); the
tests that mirror the lower layers must not lean on the top one either, so each can be read and run as
a test of its own layer.
"""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
CLOUDS = REPO / "components" / "spotkube" / "clouds"
#: Where the project keeps Python code other than tests, and the root program.
CODE = ("components", "infra", "policy", "bench", "examples")
#: The clouds' names, and the price table's names for them.
CLOUD_NAMES = frozenset({"aks", "gke", "azure", "gcp"})
#: The test folders of the layers below the CLI.
LOWER_LAYERS = ("platform", "review", "clouds")


def code_outside_the_clouds() -> list[Path]:
    files = [REPO / "__main__.py", *(p for folder in CODE for p in (REPO / folder).rglob("*.py"))]
    return sorted(p for p in files if CLOUDS not in p.parents and not {"venv", ".venv"} & set(p.parts))


def _names(node: ast.expr) -> set[str]:
    """The cloud names a compared expression spells: a string, or a tuple, list or set of strings."""
    values = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
    return {v.value.lower() for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)} & CLOUD_NAMES


def cloud_name_tests(source: str) -> list[tuple[int, str]]:
    """Every place the code tests a value against a cloud's name: `==`, `!=`, `in`, `not in`, or a
    `match` case, with its line."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            names = set().union(*(_names(operand) for operand in (node.left, *node.comparators)))
            if names:
                found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.match_case):
            patterns = [p for p in ast.walk(node.pattern) if isinstance(p, ast.MatchValue)]
            if any(_names(p.value) for p in patterns):
                found.append((node.pattern.lineno, ast.unparse(node.pattern)))
    return found


def test_no_code_outside_the_clouds_tests_a_cloud_s_name() -> None:
    files = code_outside_the_clouds()
    assert REPO / "infra" / "__main__.py" in files and CLOUDS / "__init__.py" not in files
    offenders = {str(path.relative_to(REPO)): tests for path in files
                 if (tests := cloud_name_tests(path.read_text(encoding="utf-8")))}
    assert offenders == {}


@pytest.mark.parametrize("source", [
    'if spec.cloud == "aks": pass',
    'x = "GKE" != cloud',
    'ok = cloud in ("azure", "gcp")',
    'match cloud:\n    case "aks":\n        pass',
])
def test_the_cloud_name_scan_sees_every_form_of_test(source: str) -> None:
    assert cloud_name_tests(source)


def test_the_cloud_name_scan_leaves_other_strings_alone() -> None:
    assert cloud_name_tests('if stack.startswith("aks-"): pass\nmode = plugin == "gke-managed"') == []


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
                      "def late() -> None:\n    from spotkube.components.offline import run_stack\n")
    assert {"spotkube.cli.app", "spotkube.cli", "spotkube.components.offline"} <= imported_modules(sample)


def test_the_repository_tracks_no_symbolic_links() -> None:
    """A link points at one machine's files: a worktree's `.crds -> ../main/.crds`, committed once, made
    every clean clone's `make test` fail at `mkdir -p .crds`. The repository holds files only."""
    listed = subprocess.run(["git", "ls-files", "--stage"], cwd=REPO, capture_output=True, text=True, check=True)
    links = [line.split("\t", 1)[1] for line in listed.stdout.splitlines() if line.startswith("120000 ")]
    assert listed.stdout and links == []
