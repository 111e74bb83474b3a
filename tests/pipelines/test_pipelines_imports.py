"""kfp stays optional and Pulumi stays out of spotkube.pipelines.

The Pulumi rule is checked on the source: it covers the examples, which import-linter's contracts
(over the package) do not, and the core modules the helper reads compiled pipelines and pool files
with.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCES = sorted((REPO / "components" / "spotkube" / "pipelines").glob("*.py")) + sorted(
    (REPO / "examples" / "pipelines").glob("*.py")
) + [REPO / "components" / "spotkube" / path for path in ("platform/pipeline_reader.py", "review/pipeline_check.py")]


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_no_pulumi_import(path: Path) -> None:
    modules = imported_modules(path)
    assert not {m for m in modules if m.split(".")[0].startswith("pulumi")}
    assert not {m for m in modules if m.startswith(("spotkube.shell", "spotkube.components", "spotkube.cli"))}


def test_without_kfp_the_pipeline_tests_skip_and_the_core_check_passes() -> None:
    """What CI's core job sees: kfp cannot be imported (`None` in sys.modules blocks it)."""
    args = ["-q", "-o", "addopts=", "-p", "no:cacheprovider", "-k", "not core_and_the_cli",
            "tests/pipelines/test_pipelines.py", "tests/review/test_pipeline_check.py"]
    code = f"import sys, pytest; sys.modules['kfp'] = None; sys.exit(pytest.main({args!r}))"
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=600,
                            check=False)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " passed, 1 skipped" in result.stdout


def test_without_kfp_importing_the_helper_says_which_extra_to_install() -> None:
    code = "import sys; sys.modules['kfp'] = None; import spotkube.pipelines"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode != 0
    assert "ImportError: spotkube.pipelines needs kfp and kfp-kubernetes; install them with: " \
           "pip install 'spotkube[pipelines]'" in result.stderr
