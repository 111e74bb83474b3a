"""docs/identities.md's tables are what the stacks' offline runs say, and its CLI notices a stale copy."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from spotkube.cli.identities import DOC, expected
from spotkube.platform.project import Project, find_project
from spotkube.review.identities import END, START

REPO = Path(__file__).resolve().parents[2]
PYTHON = sys.executable


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

    def run(command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([PYTHON, "-m", "spotkube.cli.identities", command, "--project", str(tmp_path)],
                              capture_output=True, text=True, timeout=300, check=False)

    stale = run("check")
    assert stale.returncode == 1 and "out of date: docs/identities.md" in stale.stderr
    assert run("write").returncode == 0
    assert run("check").returncode == 0
    assert doc.read_text() == expected(find_project(tmp_path))[1]
