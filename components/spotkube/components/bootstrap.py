"""The glue of infra/bootstrap/__main__.py: read the bootstrap stack's settings and the platform stacks
they name, validated before anything is registered.

Each named stack is read from the repository's own project (the folder above infra/bootstrap with
Pulumi.yaml and stacks/), exactly as `spotkube plan` reads it, because the identities' scopes follow
from it: an AKS stack's resource group and region, a GKE stack's project.
"""

from __future__ import annotations

import re
from pathlib import Path

import pulumi

from spotkube.clouds import load_stack_spec, read_bootstrap
from spotkube.components.program import delivered_config
from spotkube.platform.bootstrap import BootstrapSpec
from spotkube.platform.errors import Problem, SpecError, SpotkubeError
from spotkube.platform.project import find_project, read_stack_file
from spotkube.platform.spec import PlatformSpec
from spotkube.shell.common import validated


def platform_stacks(spec: BootstrapSpec, platform_root: Path, source: str) -> dict[str, PlatformSpec]:
    """The platform stacks the bootstrap serves, each validated; a missing one, or one of another
    cloud, is refused with the bootstrap stack file's name."""
    project = find_project(platform_root)
    problems, found = [], {}
    for i, stack in enumerate(spec.stacks):
        if stack not in project.stacks():
            problems.append(Problem(f"spotkube:stacks[{i}]", f"{stack!r} is not a stack of {project.root.name}; "
                                    f"stacks: {', '.join(project.stacks()) or 'none'}"))
            continue
        platform = load_stack_spec(project, stack)
        if platform.cloud != spec.cloud:
            problems.append(Problem(f"spotkube:stacks[{i}]", f"{stack!r} is a {platform.cloud} stack; list only "
                                    f"{spec.cloud} stacks in a {spec.cloud} bootstrap stack"))
        found[stack] = platform
    prod = [stack for stack, platform in found.items() if platform.is_prod]
    if prod and spec.reviewers is None:
        problems.append(Problem("spotkube:reviewers", f"is required: {', '.join(prod)} is prod, and its GitHub "
                                "environment gets required reviewers; write e.g. {teams: [1234567]} (GitHub ids: "
                                "`gh api orgs/ORG/teams/SLUG --jq .id`)"))
    if spec.create_backend:
        names = spec.backend_names(tuple(prod))
        problems += [Problem("spotkube:backendUrl", f"makes {name!r} for {stack}'s state, which is no name the cloud "
                             f"accepts (pattern {spec.backend_name}); use a shorter backend or stack name")
                     for stack, name in names.items() if not re.fullmatch(spec.backend_name, name)]
    if problems:
        raise SpecError(source, problems)
    return found


def platform_project_name(program_dir: Path) -> str:
    """The platform project's name (its Pulumi.yaml), which Pulumi Cloud's stack permissions name."""
    return find_project(find_project(program_dir).root.parent.parent).name


def read_bootstrap_stack(program_dir: Path) -> tuple[BootstrapSpec, dict[str, PlatformSpec]]:
    """The bootstrap stack's settings and its platform stacks; bad input stops the program with one message."""

    def read() -> tuple[BootstrapSpec, dict[str, PlatformSpec]]:
        project = find_project(program_dir)
        stack = pulumi.get_stack()
        source = project.relative(project.stack_file(stack))
        if project.stack_file(stack).is_file():
            read_stack_file(project, stack)
        spec = read_bootstrap(delivered_config(), source)
        return spec, platform_stacks(spec, project.root.parent.parent, source)

    try:
        return validated(read)
    except SpotkubeError as err:
        raise pulumi.RunError(str(err)) from None
