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

from spotkube.clouds import CLOUDS, load_stack_spec, parse_spec, profile
from spotkube.platform.cloud_options import NewStackOptions
from spotkube.platform.errors import SpecError, SpotkubeError
from spotkube.platform.project import Project
from spotkube.platform.reference import modeline
from spotkube.platform.spec import CONFIG_NAMESPACE
from spotkube.platform.stack_names import check_stack_name

#: The clouds a stack can target (`--cloud`): one per profile.
CloudName = StrEnum("CloudName", {cloud: cloud for cloud in CLOUDS})


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
        "# documented in docs/configuration.md; check the result with\n"
        f"# `spotkube plan --stack {stack}`.\n"
    )
    return header + yaml.safe_dump(body, sort_keys=False, default_flow_style=False)


def create_stack(
    project: Project, cloud: CloudName, environment: str, region: str, options: NewStackOptions | None = None,
) -> NewStack:
    """Write `stacks/Pulumi.<cloud>-<env>-<region>.yaml` and validate it as `spotkube plan` loads it;
    `options` are the cloud's own flags (its profile's `options.new_stack`; by default none given).

    Bad flags are refused before anything is written (so no odd file names appear); a file that
    then fails to load with the project's defaults is removed again, so a refused stack leaves
    nothing behind.
    """
    stack = check_stack_name(f"{cloud.value}-{environment}-{region}", "--env/--region")
    path = project.stack_file(stack)
    source = project.relative(path)
    facts = profile(cloud.value)
    config = facts.new_stack_config(environment, region, options or facts.options.new_stack())
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


#: What `.github/workflows/deploy.yml` reads for a stack of each cloud, from the stack's GitHub
#: environment (or the repository): variables, with what to put in them (each cloud's `deploy.py`),
#: then secrets. tests/cli/test_new_stack.py checks that the workflows read exactly these.
DEPLOY_VARIABLES: dict[str, tuple[tuple[str, str], ...]] = {cloud: p.deploy.variables for cloud, p in CLOUDS.items()}
DEPLOY_SECRETS = ("PULUMI_ACCESS_TOKEN",)


def next_steps(project: Project, created: NewStack, cloud: CloudName, cwd: Path | None = None) -> list[str]:
    """What is left after new-stack wrote the file, as the lines to print: the exact commands.

    The workflows list stacks/ themselves, so no workflow needs editing; what they can't do is
    create the Pulumi stack, the GitHub environment the deploy job runs in (named after the stack,
    holding the variables and secret it reads) and the cloud's trust in that environment's token.
    """
    stack = created.stack
    here = (cwd or Path.cwd()).resolve()
    root = project.root.resolve()
    elsewhere = root != here
    pulumi = f"pulumi --cwd {_shown(root, here)}" if elsewhere else "pulumi"
    spotkube = f"spotkube plan --project {_shown(root, here)}" if elsewhere else "spotkube plan"
    git = f"git -C {_shown(root, here)}" if elsewhere else "git"
    stack_file = project.relative(created.path)
    facts = profile(cloud.value)
    access = facts.deploy
    environment = [f'gh api --method PUT "repos/{{owner}}/{{repo}}/environments/{stack}"']
    environment += [f'gh variable set {name} --env {stack} --body "{value}"'
                    for name, value in access.variables]
    environment += [f"gh secret set {name} --env {stack}" for name in DEPLOY_SECRETS]
    lines = [
        f"Left to do for {stack} (deploy.yml and preview.yml list stacks/ themselves; no workflow to edit):",
        "1. Check it offline, deploy preflight included:",
        f"   {spotkube} --stack {stack}",
        f"2. Create the Pulumi stack (its config stays in {stack_file}, as Pulumi.yaml's "
        f"stackConfigDir says; ORG/{stack} for an organization other than your default):",
        f"   {pulumi} stack init {stack}",
        f"3. Create the GitHub environment deploy.yml runs {stack} in, with what it reads for "
        f"{facts.title} (skip the variables already set for the whole repository):",
        *(f"   {line}" for line in environment),
    ]
    if environment_needs_reviewers(created.stack):
        lines.append("   then give it required reviewers (Settings > Environments), so a prod deploy waits for "
                     "an approval.")
    lines += [
        f"   preview.yml runs every stack in the one `preview` environment: the first {facts.title} stack "
        "needs these variables there too (for an identity that may only read).",
        "4. Let that environment's GitHub token sign in as the deploying identity:",
        *(f"   {line}" for line in access.trust(stack)),
        f"   The identity needs the roles in docs/identities.md ({access.roles}); infra/bootstrap makes it with them.",
        f"5. Commit the stack file; a push to main then deploys {stack}:",
        f"   {git} add {stack_file} && {git} commit -m \"Add stack {stack}\"",
    ]
    return lines


def environment_needs_reviewers(stack: str) -> bool:
    """deploy.yml asks for required reviewers on the prod stacks' environments."""
    return "-prod-" in f"-{stack}-"


def _shown(path: Path, here: Path) -> str:
    """A path as the user would type it from where they are."""
    try:
        return str(path.resolve().relative_to(here)) or "."
    except ValueError:
        return str(path)
