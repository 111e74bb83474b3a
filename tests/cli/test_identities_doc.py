"""docs/identities.md's tables are what the stacks' offline runs say, and its CLI notices a stale copy."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import Result
from typer.testing import CliRunner

from spotkube.cli.identities import DOC, app, expected
from spotkube.platform.project import Project, find_project
from spotkube.review.identities import END, START

REPO = Path(__file__).resolve().parents[2]


def test_the_tables_are_up_to_date(repo_project: Project) -> None:
    path, text = expected(repo_project)
    assert path.read_text() == text, "run: python -m spotkube.cli.identities write"
    tables = text.split(START, 1)[1].split(END, 1)[0]
    assert "### AKS" in tables and "### GKE" in tables
    assert "**MISSING**" not in tables and "unknown call" not in tables
    assert tables.count("**nothing, on purpose**") == 2, "Secrets, denied to each preview identity"


def test_check_fails_on_a_stale_copy_and_write_repairs_it(tmp_path: Path) -> None:
    for name in ("Pulumi.yaml", "stacks", "infra", "docs"):
        source = REPO / name
        (shutil.copytree if source.is_dir() else shutil.copy)(source, tmp_path / name)
    doc = tmp_path / DOC
    doc.write_text(doc.read_text().replace("Azure Kubernetes Service Cluster User Role |", "Reader |", 1))

    def run(command: str) -> Result:
        """`python -m spotkube.cli.identities COMMAND` (its typer app), in this process."""
        return CliRunner().invoke(app, [command, "--project", str(tmp_path)])

    stale = run("check")
    assert stale.exit_code == 1 and "out of date: docs/identities.md" in stale.stderr
    assert run("write").exit_code == 0
    assert run("check").exit_code == 0
    assert doc.read_text() == expected(find_project(tmp_path))[1]
