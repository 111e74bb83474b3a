"""Shared fixtures: the repository's project, and throwaway copies of it with one stack file."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from spotkube.core.project import Project, find_project

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def repo_project() -> Project:
    return find_project(REPO)


@pytest.fixture
def project_with_stack(tmp_path: Path) -> Callable[[str, dict[str, Any]], Project]:
    """A copy of the real project (Pulumi.yaml and infra/) whose only stack is the one given."""

    def make(stack: str, config: dict[str, Any]) -> Project:
        shutil.copy(REPO / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
        shutil.copytree(REPO / "infra", tmp_path / "infra", dirs_exist_ok=True)
        (tmp_path / "stacks").mkdir(exist_ok=True)
        body = {"config": {f"spotkube:{k}": v for k, v in config.items()}}
        (tmp_path / "stacks" / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(body))
        return find_project(tmp_path)

    return make
