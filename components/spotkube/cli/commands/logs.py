"""`spotkube logs`: the query and console link for a step's logs, which outlive its pod."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from spotkube.cli.app import Format, FormatOption, ProjectOption, fail, stderr
from spotkube.cli.cloud_flags import only_on
from spotkube.clouds import load_stack_spec
from spotkube.clouds import profile as cloud_profile
from spotkube.platform import stack_names
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.logs import LogTarget
from spotkube.platform.project import find_project


def logs(
    stack: Annotated[str, typer.Option("--stack", "-s", metavar="NAME", help="The stack the pipeline ran on.")],
    pod: Annotated[str | None, typer.Option("--pod", metavar="POD", help="The step's pod, as the KFP UI names it.")]
    = None,
    run_id: Annotated[str | None, typer.Option("--run", metavar="RUN_ID", help="A KFP run id: every pod of the run.")]
    = None,
    cluster: Annotated[str | None, typer.Option("--cluster", metavar="NAME", help=only_on("--cluster"))] = None,
    workspace: Annotated[str | None, typer.Option("--workspace", metavar="RESOURCE_ID", help=only_on("--workspace"))]
    = None,
    output: FormatOption = Format.table,
    project_dir: ProjectOption = Path("."),
) -> None:
    """The exact query and console link for a step's logs on the stack's cloud, which outlive the pod
    when spot takes its node: a Cloud Logging filter on GKE, a KQL query over ContainerLogV2 on AKS."""
    try:
        project = find_project(project_dir)
        name = stack_names.stack_name(project, stack)
        spec = load_stack_spec(project, name)
        target = LogTarget(pod=pod, run=run_id, cluster=cluster, workspace=workspace)
        writer = cloud_profile(spec.cloud).commands.log_query
        if writer is None:
            raise fail(f"stack {name}: spotkube knows no log backend of {spec.cloud}")
        query = writer(spec, target)
    except SpotkubeError as err:
        raise fail(str(err)) from None
    if output is Format.json:
        typer.echo(json.dumps({"stack": name, "language": query.language, "query": query.query, "link": query.link,
                               "command": query.command, "notes": list(query.notes)}, indent=2))
        return
    fence = "```" if output is Format.markdown else ""
    typer.echo(f"{query.language}:" + (f"\n{fence}" if fence else ""))
    typer.echo(query.query + (f"\n{fence}" if fence else ""))
    if query.link:
        typer.echo(f"\nconsole: {query.link}")
    if query.command:
        typer.echo(f"\ncommand line:\n{query.command}")
    for note in query.notes:
        stderr.print(f"note: {note}", markup=False, highlight=False, soft_wrap=True)
