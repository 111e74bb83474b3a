"""`-s/--stack` accepts Pulumi's names for a stack: NAME, ORG/NAME and ORG/PROJECT/NAME, never a path."""

from __future__ import annotations

import pytest

from spotkube.platform.project import Project
from spotkube.platform.stack_names import StackNameError, check_stack_name, stack_name


@pytest.mark.parametrize(("given", "stack"), [
    ("aks-dev-uksouth", "aks-dev-uksouth"),
    ("acme/aks-dev-uksouth", "aks-dev-uksouth"),
    ("acme/spotkube/aks-dev-uksouth", "aks-dev-uksouth"),
    ("organization/spotkube/gke_dev.1", "gke_dev.1"),
])
def test_the_stack_part_is_used(repo_project: Project, given: str, stack: str) -> None:
    assert stack_name(repo_project, given) == stack


def test_another_project_is_refused_with_the_project_it_expected(repo_project: Project) -> None:
    with pytest.raises(StackNameError) as refused:
        stack_name(repo_project, "acme/webshop/aks-dev-uksouth")
    assert str(refused.value) == ("--stack acme/webshop/aks-dev-uksouth: project 'webshop' is not this project; "
                                  "Pulumi.yaml names it 'spotkube'")


@pytest.mark.parametrize("given", ["x/../../y", "../y", "a/b/c/d", "..", ".", "", "acme//dev", "dev eu",
                                   "a" * 101, "acme/spotkube/", "/etc/passwd", "dev\\..\\x"])
def test_a_name_that_is_not_a_stack_name_is_refused(repo_project: Project, given: str) -> None:
    with pytest.raises(StackNameError, match="not a stack name"):
        stack_name(repo_project, given)


def test_a_bare_name_is_checked_the_same_way() -> None:
    assert check_stack_name("aks-dev-eastus") == "aks-dev-eastus"
    with pytest.raises(StackNameError, match=r"^--env/--region 'aks-\.\./x-eastus': not a stack name"):
        check_stack_name("aks-../x-eastus", "--env/--region")
