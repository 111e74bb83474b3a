"""`plan --diff REF` plans the base with the spotkube of REF, found where REF's pyproject.toml says its
command is, and says exactly what went wrong when that spotkube can't give a plan to compare with.

Each test builds a git repository holding this project, its stack files and a spotkube package of the
shape the case needs: the real one with its command line moved, or a stand-in for a release whose
`plan` fails or prints another schema version.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

Run = Any  # tests/conftest.py's `spotkube_process` fixture
REPO = Path(__file__).resolve().parents[2]
STACK = "gke-dev-us-central1"


@pytest.fixture
def spotkube(spotkube_process: Run) -> Run:
    """`spotkube` as a process of its own: `plan --diff` starts one for the base anyway."""
    return spotkube_process


def _git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
                   check=True, capture_output=True)


def _project(into: Path, package: dict[str, str] | None = None, command: str = "spotkube.cli.app:app") -> Path:
    """This project at one commit: its package copied (or `package`, file -> text), and pyproject.toml
    naming `command` as the `spotkube` script."""
    shutil.copy(REPO / "Pulumi.yaml", into / "Pulumi.yaml")
    for folder in ("infra", "stacks"):
        shutil.copytree(REPO / folder, into / folder)
    if package is None:
        shutil.copytree(REPO / "components", into / "components",
                        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    else:
        for name, text in package.items():
            (into / "components" / name).parent.mkdir(parents=True, exist_ok=True)
            (into / "components" / name).write_text(text)
    pyproject = (REPO / "pyproject.toml").read_text()
    assert 'spotkube = "spotkube.cli.app:app"' in pyproject
    (into / "pyproject.toml").write_text(pyproject.replace('spotkube = "spotkube.cli.app:app"',
                                                           f'spotkube = "{command}"'))
    _git(into, "init", "-q")
    _git(into, "add", "-A")
    _git(into, "commit", "-qm", "base")
    return into


def _stand_in(body: str) -> dict[str, str]:
    """A spotkube package whose `spotkube` command runs `body`."""
    return {"spotkube/__init__.py": "", "spotkube/cli/__init__.py": "",
            "spotkube/cli/app.py": f"import json, sys\n\n\ndef app() -> None:\n{body}"}


def test_a_base_whose_command_line_lives_elsewhere_is_planned_through_its_pyproject(
        tmp_path: Path, spotkube: Run) -> None:
    """Releases before 2026-11-25 kept the command in spotkube.tools.cli; the base's own pyproject.toml
    says where, and the diff compares with it."""
    repository = _project(tmp_path, command="spotkube.console:app")
    _git(repository, "mv", "components/spotkube/cli/app.py", "components/spotkube/console.py")
    _git(repository, "commit", "-qm", "the command line moved")
    result = spotkube("plan", "-s", STACK, "--diff", "HEAD", "-f", "markdown", cwd=repository)
    assert result.returncode == 0, result.stderr
    assert f"| {STACK} | unchanged | ±$0.00 | ±$0.00 | pass |" in result.stdout


def test_a_base_without_the_command_its_pyproject_names_is_one_clear_error(tmp_path: Path, spotkube: Run) -> None:
    repository = _project(tmp_path, _stand_in("    pass\n"), command="spotkube.gone:app")
    result = spotkube("plan", "-s", STACK, "--diff", "HEAD", cwd=repository)
    assert result.returncode == 2
    assert " ".join(result.stderr.split()) == (
        "error: --diff HEAD: the base is planned by its own spotkube (components/spotkube at HEAD), whose "
        "pyproject.toml names its command spotkube.gone:app, and HEAD has no module spotkube.gone; compare with a "
        "ref whose spotkube has its command line")


def test_a_base_plan_that_fails_is_reported_with_its_own_words(tmp_path: Path, spotkube: Run) -> None:
    failing = ("    sys.stderr.write('Usage: spotkube plan [OPTIONS]\\nTry \\'spotkube plan --help\\' for help.\\n'\n"
               "                     '╭─ Error ─╮\\n│ No such option: --details │\\n╰─────────╯\\n')\n"
               "    sys.exit(2)\n")
    repository = _project(tmp_path, _stand_in(failing))
    result = spotkube("plan", "-s", STACK, "--diff", "HEAD", cwd=repository)
    assert result.returncode == 2
    message = " ".join(result.stderr.split())
    assert message == "error: could not plan HEAD: HEAD's own spotkube failed (exit 2): No such option: --details"
    assert "schema version" not in message


@pytest.mark.parametrize(("printed", "said"), [
    ({"schemaVersion": 3, "stacks": []}, "plan JSON of schema version 3"),
    ({"stacks": []}, "plan JSON of no schema version"),
])
def test_a_base_plan_of_another_schema_version_names_it(
        tmp_path: Path, spotkube: Run, printed: dict[str, Any], said: str) -> None:
    repository = _project(tmp_path, _stand_in(f"    print(json.dumps({printed!r}))\n"))
    result = spotkube("plan", "-s", STACK, "--diff", "HEAD", cwd=repository)
    assert result.returncode == 2
    assert " ".join(result.stderr.split()) == (
        f"error: could not compare with HEAD: HEAD's own spotkube printed {said}, and --diff compares versions 1 "
        "or 2 (this spotkube prints 2); compare with a ref whose spotkube prints one of them")


def test_a_base_that_prints_no_json_says_so(tmp_path: Path, spotkube: Run) -> None:
    repository = _project(tmp_path, _stand_in("    print('pools: 3')\n    sys.stderr.write('planned 1 stack\\n')\n"))
    result = spotkube("plan", "-s", STACK, "--diff", "HEAD", cwd=repository)
    assert result.returncode == 2
    assert " ".join(result.stderr.split()) == (
        "error: could not plan HEAD: HEAD's own spotkube printed no plan JSON: planned 1 stack")
