"""`spotkube new-stack`: a new region or environment in one step, as a stack file that plans cleanly.

Copying an existing stack file by hand carries over its GPU, zones and project, which are often wrong
in the new region (an L4 pool in a region without L4s fails only when GKE creates it). The template
here starts from safe defaults for the cloud (spot GPU pool scaling from 0, on-demand system and
platform pools) and picks a GPU the region really offers, then the new file is validated exactly as
`spotkube plan` would load it before the user is told it exists. Pure module: no Pulumi.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import yaml

from spotkube.core.errors import SpecError, SpotkubeError
from spotkube.core.profiles import PROFILES, profile
from spotkube.core.project import Project, load_stack_spec
from spotkube.core.reference import modeline
from spotkube.core.spec import CONFIG_NAMESPACE
from spotkube.core.validation import parse_spec

#: The clouds a stack can target (`--cloud`): one per profile.
CloudName = StrEnum("CloudName", {cloud: cloud for cloud in PROFILES})


class StackExists(SpotkubeError):
    """new-stack never overwrites a stack file."""


@dataclass(frozen=True)
class NewStack:
    """The stack file that was written, and the stack's name."""

    stack: str
    path: Path


def render(stack: str, config: dict[str, Any], schema_line: str | None = None) -> str:
    """The stack file's text: the editor's schema line, a header saying where it came from, then the
    namespaced config."""
    body = {"config": {f"{CONFIG_NAMESPACE}:{key}": value for key, value in config.items()}}
    header = (
        (f"{schema_line}\n" if schema_line else "")
        + f"# Stack {stack}, written by `spotkube new-stack`: an on-demand system pool, an untainted\n"
        "# on-demand platform pool for Kubeflow, and one spot GPU pool that scales from 0. Every key is\n"
        "# documented in README.md's configuration reference; check the result with\n"
        f"# `spotkube plan --stack {stack}`.\n"
    )
    return header + yaml.safe_dump(body, sort_keys=False, default_flow_style=False)


def create_stack(
    project: Project, cloud: CloudName, environment: str, region: str, gcp_project: str | None = None
) -> NewStack:
    """Write `stacks/Pulumi.<cloud>-<env>-<region>.yaml` and validate it as `spotkube plan` loads it.

    Bad flags are refused before anything is written (so no odd file names appear); a file that
    then fails to load with the project's defaults is removed again, so a refused stack leaves
    nothing behind.
    """
    stack = f"{cloud.value}-{environment}-{region}"
    path = project.stack_file(stack)
    source = project.relative(path)
    config = profile(cloud.value).new_stack_config(environment, region, gcp_project)
    parse_spec(config, source)
    if path.exists():
        raise StackExists(f"{source} already exists; edit it, or choose another --env or --region")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(stack, config, modeline(project.stack_dir, project.root)))
    try:
        load_stack_spec(project, stack)
    except SpecError:
        path.unlink()
        raise
    return NewStack(stack=stack, path=path)
