"""`spotkube new-stack`: a new stack file with safe defaults, planned, and what it still warns about."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from spotkube.cli.app import CLOUD_CHOICES, ProjectOption, fail
from spotkube.cli.cloud_flags import with_cloud_flags
from spotkube.clouds import CLOUDS, price_table
from spotkube.clouds.stack_template import CloudName, create_stack, left_to_fix, next_steps
from spotkube.components.offline import run_stack
from spotkube.platform.cloud_options import NewStackOptions, foreign_flag
from spotkube.platform.errors import NewStackError, SpotkubeError
from spotkube.platform.project import find_project
from spotkube.review.program_review import stack_document

#: Each cloud's own flags of `spotkube new-stack`.
NEW_STACK_OPTIONS = {cloud: p.commands.options.new_stack for cloud, p in CLOUDS.items()}


@with_cloud_flags(NEW_STACK_OPTIONS)
def new_stack(
    cloud: Annotated[CloudName, typer.Option("--cloud", metavar=CLOUD_CHOICES, help="The cloud.")],
    env: Annotated[str, typer.Option("--env", metavar="ENV", help="Environment, e.g. dev or prod.")],
    region: Annotated[str, typer.Option(
        "--region", metavar="REGION", help=" or ".join(c.vendor for c in CLOUDS.values()) + " region.")],
    options: dict[str, NewStackOptions] | None = None,
    project_dir: ProjectOption = Path("."),
) -> None:
    """Write stacks/Pulumi.<cloud>-<env>-<region>.yaml with safe defaults (never overwrites) and plan it
    offline; print each warning the plan still raises with what ends it (new-stack acknowledges none, so
    `plan --strict` fails until they are fixed), then the exact commands left: the offline plan, `pulumi
    stack init`, the GitHub environment the deploy runs it in, the cloud's trust in it, and the commit."""
    try:
        given = options or {}
        problem = foreign_flag(cloud.value, NEW_STACK_OPTIONS, given)
        if problem is not None:
            raise NewStackError(problem)
        project = find_project(project_dir)
        created = create_stack(project, cloud, env, region, given[cloud.value])
    except SpotkubeError as err:
        raise fail(str(err)) from None
    try:
        document = stack_document(run_stack(project, created.stack), price_table(None))
        left = left_to_fix(document.warnings)
    except SpotkubeError as err:
        created.path.unlink(missing_ok=True)  # a stack new-stack can't plan is not left behind
        raise fail(str(err)) from None
    typer.echo(f"wrote {project.relative(created.path)}")
    for line in next_steps(project, created, cloud, warnings=left):
        typer.echo(line)
