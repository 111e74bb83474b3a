"""`spotkube drill`: rehearse an eviction on a running stack."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from spotkube.cli import drill
from spotkube.cli.app import Format, ProjectOption, fail
from spotkube.components.offline import run_stack
from spotkube.platform import stack_names
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.project import find_project
from spotkube.review.gang_drill import GangDrillReport

#: Where kubectl looks for a kubeconfig when KUBECONFIG is unset.
DEFAULT_KUBECONFIG = Path("~/.kube/config").expanduser()


def drill_command(
    stack: Annotated[str, typer.Option("--stack", "-s", metavar="NAME", help="Stack name.")],
    pool: Annotated[str, typer.Option("--pool", "-p", metavar="POOL", help="A spot or preemptible pool of the stack.")],
    trainjob: Annotated[str | None, typer.Option(
        "--trainjob", metavar="NAME",
        help="Evict the node of one worker of this running TrainJob and time how long until every worker runs "
        "again.")] = None,
    run: Annotated[bool, typer.Option("--run", help="Evict the node through the cloud's CLI and watch what "
                                      "follows; without it, only say which node and which command.")] = False,
    kubeconfig: Annotated[Path, typer.Option(
        "--kubeconfig", metavar="FILE", envvar="KUBECONFIG",
        help="The stack's kubeconfig (pulumi stack output kubeconfig --show-secrets).")] = DEFAULT_KUBECONFIG,
    timeout: Annotated[str, typer.Option(
        "--timeout", metavar="DURATION", help="How long to watch before giving up, e.g. 45m.")] = "45m",
    boot_allowance: Annotated[str, typer.Option(
        "--boot-allowance", metavar="DURATION",
        help="Time a new node may take to boot and join, added to the plan's fallback bound (which leaves it out).")]
    = "10m",
    output: Annotated[Format, typer.Option("--format", "-f", metavar="table|json", help="How to print it.")]
    = Format.table,
    project_dir: ProjectOption = Path("."),
) -> None:
    """Rehearse an eviction: evict one node of a spot pool the way the cloud reclaims it, then watch the
    node go, each pipeline pod's Argo retry and the replacement, against the plan's fallback bound.
    With --trainjob, the node of one worker of a running TrainJob, and the time until all its workers run again.

    Exit code 0 when every pipeline pod came back and the bound held, 1 when a pod was lost or the
    bound was missed, 2 on bad input or a drill that could not start.
    """
    try:
        timeout_s = drill.seconds(timeout, "--timeout")
        allowance_s = drill.seconds(boot_allowance, "--boot-allowance")
        project = find_project(project_dir)
        name = stack_names.stack_name(project, stack)
        offline = run_stack(project, name)
        drill.pool_facts(offline, pool)  # a pool the stack lacks fails before the cluster is asked
        cluster = drill.Cluster(kubeconfig)
        if trainjob is not None:
            gang = (drill.run_gang_drill(offline, pool, trainjob, cluster, timeout_s=timeout_s) if run
                    else drill.dry_gang_report(offline, pool, trainjob, cluster))
            _show_gang(gang, output)
            return
        report_ = (drill.run_drill(offline, pool, cluster, timeout_s=timeout_s, boot_allowance_s=allowance_s)
                   if run else drill.dry_report(offline, pool, cluster, allowance_s))
    except SpotkubeError as err:
        raise fail(str(err)) from None
    if output is Format.json:
        typer.echo(drill.report_json(report_))
    else:
        for line in drill.timeline_lines(report_):
            typer.echo(line)
    if not report_.ok:
        raise typer.Exit(1)


def _show_gang(report: GangDrillReport, output: Format) -> None:
    if output is Format.json:
        typer.echo(json.dumps(report.to_json(), indent=2))
    else:
        for line in drill.gang_lines(report):
            typer.echo(line)
    if not report.ok:
        raise typer.Exit(1)
