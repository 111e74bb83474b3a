"""`spotkube new-stack`: a new region or environment in one step, as a stack file that plans cleanly.

Copying an existing stack file by hand carries over its GPU, zones and project, which are often wrong
in the new region (an L4 pool in a region without L4s fails only when GKE creates it). The template
here starts from safe defaults for the cloud (spot GPU pool scaling from 0, on-demand system and
platform pools) and picks a GPU the region really offers, then the new file is validated exactly as
`spotkube plan` would load it before the user is told it exists. Pure module: no Pulumi.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any

import yaml

from spotkube.clouds import CLOUDS, load_stack_spec, parse_spec, profile
from spotkube.platform.bootstrap import BACKEND_VARIABLE, ORGANIZATION_VARIABLE, STACK_VARIABLE, TEAM_VARIABLE
from spotkube.platform.cloud_options import NewStackOptions
from spotkube.platform.errors import SpecError, SpotkubeError
from spotkube.platform.project import Project
from spotkube.platform.records import record
from spotkube.platform.reference import modeline
from spotkube.platform.spec import CONFIG_NAMESPACE
from spotkube.platform.stack_names import check_stack_name
from spotkube.platform.warnings import PlanWarning

#: The clouds a stack can target (`--cloud`): one per profile.
CloudName = StrEnum("CloudName", {cloud: cloud for cloud in CLOUDS})


class StackExists(SpotkubeError):
    """new-stack never overwrites a stack file."""


@record
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
        "# on-demand platform pool for Kubeflow, and one spot GPU pool that scales from 0, with the guards\n"
        "# the plan checks switched on where they need nothing of yours. Every key is documented in\n"
        f"# docs/configuration.md; check the result with `spotkube plan --stack {stack} --strict`.\n"
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
    config = facts.commands.new_stack_config(environment, region, options or facts.commands.options.new_stack())
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


#: What ends each warning a fresh stack's plan may still raise, by the warning's kind: new-stack never
#: acknowledges one (a green `--strict` must say the stack is sound), it says what the user must do.
FIXES: dict[str, str] = {
    "security-api-server": "list the addresses CI and the team reach the API server from in "
    "cluster.authorizedIpRanges (new-stack's --api-server-ranges), or make the API server private",
    "security-master-authorized-networks": "list the addresses CI and the team reach the control plane from in "
    "cluster.authorizedIpRanges",
    "cost-unpriced": "price it: `spotkube prices refresh` (the plan's note names the command), or a row in "
    "cost.prices with its source",
    "catalog-unknown-offer": "check the size is offered in the region (`spotkube catalog refresh`), or pick another",
}
OTHER_FIX = "fix it as the plan's message says, or acknowledge it yourself with your reason (docs/configuration.md)"


@record
class Left:
    """A warning the fresh stack's plan still raises, and what ends it."""

    warning: PlanWarning
    fix: str


def left_to_fix(warnings: Sequence[PlanWarning]) -> list[Left]:
    """What the user must fix before `spotkube plan --strict` passes on the stack new-stack wrote."""
    return [Left(w, FIXES.get(w.id.split(":", 1)[0], OTHER_FIX)) for w in dict.fromkeys(warnings)]


#: What `.github/workflows/deploy.yml` reads for a stack of each cloud from the stack's GitHub
#: environment, which the bootstrap writes: the cloud identity's variables, with what is in them (each
#: cloud's `commands.py`), and the backend's and the stack's own (platform/bootstrap.py). No secret.
#: tests/cli/test_new_stack.py checks that the workflows read exactly these.
DEPLOY_VARIABLES: dict[str, tuple[tuple[str, str], ...]] = {
    cloud: p.commands.deploy.variables for cloud, p in CLOUDS.items()}
BOOTSTRAP_VARIABLES = (STACK_VARIABLE, ORGANIZATION_VARIABLE, TEAM_VARIABLE, BACKEND_VARIABLE)


def next_steps(project: Project, created: NewStack, cloud: CloudName, cwd: Path | None = None,
               warnings: Sequence[Left] = ()) -> list[str]:
    """What is left after new-stack wrote the file, as the lines to print: the exact commands, and the
    warnings its plan still raises, each with what ends it.

    The workflows list stacks/ themselves, so no workflow needs editing; what they can't do is
    create the Pulumi stack, and the GitHub environment the deploy job runs in with its rules, its
    variables and the cloud's trust in its token, which the bootstrap makes.
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
    bootstrap = f"pulumi --cwd {_shown(root / 'infra' / 'bootstrap', here)}"
    rules = "protected branches only" + (", required reviewers" if environment_needs_reviewers(stack) else "")
    identity = "a deploy identity of its own" if environment_needs_reviewers(stack) else "the shared deploy identity"
    variables = ", ".join(name for name, _ in facts.commands.deploy.variables)
    lines = [
        f"Left to do for {stack} (deploy.yml and preview.yml list stacks/ themselves; no workflow to edit):",
        "1. Check it offline, deploy preflight included:",
        f"   {spotkube} --stack {stack}",
    ]
    if warnings:
        lines += [f"   It raises {len(warnings)} warning(s), so `--strict` fails until each is fixed (new-stack "
                  f"acknowledges none):",
                  *(f"   - {w.warning.id}: {w.fix}" for w in warnings)]
    else:
        lines.append("   It plans without a warning: `--strict` passes.")
    lines += [
        f"2. Create the Pulumi stack (its config stays in {stack_file}, as Pulumi.yaml's "
        f"stackConfigDir says; ORG/{stack} for an organization other than your default):",
        f"   {pulumi} stack init {stack}",
        f"3. Add {stack} to spotkube:stacks in infra/bootstrap/Pulumi.{cloud.value}.yaml and rerun the bootstrap. "
        f"It makes the GitHub environment deploy.yml runs {stack} in ({rules}), writes its variables ({variables}, "
        f"the Pulumi backend's and {STACK_VARIABLE}; no secret) and lets that environment's token sign in as "
        f"{identity} (docs/identities.md); deploy.yml refuses the stack until then:",
        f"   {bootstrap} up -s {cloud.value}",
        f"4. Commit the stack file; a push to main then deploys {stack}:",
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
