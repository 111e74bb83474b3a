"""`spotkube pipeline-check`: where each step of a compiled KFP pipeline can land on a stack's pools."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from spotkube.cli import app as root
from spotkube.cli import terminal
from spotkube.cli.app import Format, FormatOption, ProjectOption, fail
from spotkube.cli.pipeline_views import render_reports_table, reports_json, reports_markdown
from spotkube.components.offline import run_stack
from spotkube.platform import stack_names
from spotkube.platform.addons.kfp_transforms import retry_rule
from spotkube.platform.contract import pipeline_pod_default
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.pipeline_reader import read_pipeline
from spotkube.platform.project import find_project
from spotkube.review.pipeline_check import check_pipeline


def pipeline_check_command(
    compiled: Annotated[Path, typer.Argument(metavar="COMPILED.yaml",
                                             help="A pipeline compiled by kfp.compiler.Compiler().compile(...).")],
    stack: Annotated[list[str], typer.Option("--stack", "-s", metavar="NAME", help=(
        "A stack whose pools the steps must fit; repeatable."))],
    output: FormatOption = Format.table,
    project_dir: ProjectOption = Path("."),
) -> None:
    """Where each step of a compiled KFP pipeline can land on a stack's pools.

    Exit code 0 when every step can land somewhere (warnings allowed), 1 when one cannot, 2 on bad input.
    """
    try:
        pipeline = read_pipeline(compiled)
        project = find_project(project_dir)
        reports = []
        for given in stack:
            name = stack_names.stack_name(project, given)
            run = run_stack(project, name)
            for cluster in run.clusters:
                # A stack whose program builds several clusters checks the pipeline on each (`dev/training`).
                where = f"{name}/{cluster.name}" if len(run.clusters) > 1 else name
                if cluster.contracts is None:
                    raise fail(f"stack {where}: the cluster's pool_contracts output can't be read to check the "
                               "pipeline against")
                # spotkube's Kubeflow Pipelines sets Argo's workflow defaults, which say why a step is retried
                # and keep pipeline pods off the system pool.
                kubeflow = cluster.spec.kubeflow
                reports.append(check_pipeline(
                    pipeline, list(cluster.contracts), where,
                    retries=retry_rule(kubeflow) if kubeflow.enabled else None,
                    cluster_defaults=pipeline_pod_default() if kubeflow.enabled else None,
                    queue=cluster.spec.kueue.local_queue if cluster.spec.kueue.enabled else None))
    except SpotkubeError as err:
        raise fail(str(err)) from None
    if output is Format.json:
        typer.echo(reports_json(reports))
    elif output is Format.markdown:
        typer.echo(reports_markdown(reports))
    else:
        render_reports_table(reports, terminal.console())
    nowhere = [(r.stack, s) for r in reports for s in r.steps if s.error]
    for stack_name, result in nowhere:
        root.stderr.print(f"[red]error:[/red] {compiled}: step {result.step.name} can land nowhere on stack "
                     f"{stack_name}: {result.error}", highlight=False, soft_wrap=True)
    if nowhere:
        raise typer.Exit(1)
