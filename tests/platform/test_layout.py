"""What import-linter can't check: no code outside a cloud's folder tests a cloud's name or names one in
its identifiers, and the tests of the lower layers never need the CLI.

A test of a cloud's name (`if cloud == "aks"`) outside `components/spotkube/clouds/` is cloud knowledge
out of its folder: a third cloud would have to edit it. So is a name that spells a cloud or its SDK
(`gcp_project`, `GKE_PLUGIN_NAME`, `from_azure`): the neutral code asks the cloud's profile instead
(docs/architecture.md#adding-a-cloud). The neutral code is the package outside `clouds/`, the stack
programs in infra/ (the bootstrap program too: it loads its stack's cloud by name, and each cloud's
identities live in the cloud's folder) and the policy pack. Not checked: bench/ and examples/, which
are consumers that pick a cloud on purpose (the floor registers each cloud's own SDK resources, the
examples build on AKS and GKE), and the names an import binds, which belong to the module they come
from and are checked there (`spotkube.testing` hands out the clouds' fixtures under their names, only
where import-linter lets a module import a cloud).

import-linter keeps the package's layers (`lint-imports`); the tests that mirror the lower layers must
not lean on the top one either, so each can be read and run as a test of its own layer.
"""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import pytest

from spotkube.clouds import CLOUDS as REGISTRY

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
CLOUDS = REPO / "components" / "spotkube" / "clouds"
#: Where the project keeps Python code other than tests, and the root program.
CODE = ("components", "infra", "policy", "bench", "examples")
#: The neutral code whose identifiers may name no cloud (see the module's docstring for what is left out).
NEUTRAL_CODE = ("components", "infra", "policy")
#: The registered clouds' names, and the price table's names for them.
CLOUD_NAMES = frozenset({*REGISTRY, *(cloud.pricing.name for cloud in REGISTRY.values())})
#: The words of an identifier that name a cloud, its vendor or its SDK: the clouds' names, Google's,
#: Azure Resource Manager's and Entra ID's, and their SDKs' and CLIs' distinctive words.
CLOUD_WORDS = CLOUD_NAMES | frozenset({"google", "googleapis", "gcloud", "gce", "arm", "azurerm", "entra", "msal",
                                       "kubelogin", "eks", "aws"})
#: The test folders of the layers below the CLI.
LOWER_LAYERS = ("platform", "review", "clouds")


def code_outside_the_clouds() -> list[Path]:
    files = [REPO / "__main__.py", *(p for folder in CODE for p in (REPO / folder).rglob("*.py"))]
    return sorted(p for p in files if CLOUDS not in p.parents and not {"venv", ".venv"} & set(p.parts))


def neutral_code() -> list[Path]:
    files = [REPO / "__main__.py", *(p for folder in NEUTRAL_CODE for p in (REPO / folder).rglob("*.py"))]
    return sorted(p for p in files if CLOUDS not in p.parents and not {"venv", ".venv"} & set(p.parts))


def words(identifier: str) -> set[str]:
    """An identifier's words, lower case: split at underscores and where a capital follows a small letter or
    digit (`GkePluginName`, `gke_plugin_name`, `GKE_PLUGIN_NAME` are all gke, plugin, name)."""
    return {w.lower() for w in re.split(r"_+|(?<=[a-z0-9])(?=[A-Z])", identifier) if w}


def _identifiers(tree: ast.AST) -> list[tuple[int, str]]:
    """Every name a module defines or uses, with its line, except the names its imports bind."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            found.append((node.lineno, node.name))
        elif isinstance(node, ast.Name):
            found.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute):
            found.append((node.lineno, node.attr))
        elif isinstance(node, ast.arg):
            found.append((node.lineno, node.arg))
        elif isinstance(node, ast.keyword) and node.arg:
            found.append((node.value.lineno, node.arg))
    return found


def cloud_names_in_identifiers(source: str) -> list[tuple[int, str]]:
    """Every identifier a module defines or uses (classes, functions, parameters, variables, attributes and
    dataclass fields, keyword arguments) that names a cloud or its SDK, with its line."""
    return sorted({(line, name) for line, name in _identifiers(ast.parse(source)) if words(name) & CLOUD_WORDS})


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
    assert cloud_name_tests('if stack.startswith("aks-"): pass') == []


def test_no_neutral_module_names_a_cloud_in_its_identifiers() -> None:
    files = neutral_code()
    assert REPO / "infra" / "bootstrap" / "__main__.py" in files
    offenders = {str(path.relative_to(REPO)): names for path in files
                 if (names := cloud_names_in_identifiers(path.read_text(encoding="utf-8")))}
    assert offenders == {}


@pytest.mark.parametrize(("source", "name"), [
    ("def gcp_project() -> None: pass", "gcp_project"),
    ("class GkeManagedPlugin: pass", "GkeManagedPlugin"),
    ("GKE_PLUGIN_NAME = 'x'", "GKE_PLUGIN_NAME"),
    ("def f(azure_subscription: str) -> None: pass", "azure_subscription"),
    ("@dataclass\nclass Request:\n    google_endpoint: str", "google_endpoint"),
    ("x = contract.gke_default_device_plugin_serves(labels)", "gke_default_device_plugin_serves"),
    ("request(arm_endpoint=url)", "arm_endpoint"),
    ("self.fromAzure = 1", "fromAzure"),
])
def test_the_identifier_scan_sees_every_kind_of_name(source: str, name: str) -> None:
    assert [found for _, found in cloud_names_in_identifiers(source)] == [name]


def test_the_identifier_scan_leaves_imports_strings_and_other_words_alone() -> None:
    source = ("from spotkube.clouds.gke.offline import ENDPOINT as GKE_ENDPOINT\nimport pulumi_azure_native\n"
              "mode = 'gke-managed'\nparking = charge = garment = 1\n")
    assert cloud_names_in_identifiers(source) == []


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
