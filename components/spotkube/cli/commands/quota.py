"""`spotkube quota`: each stack's quota need against the cloud's live limits and usage."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from spotkube.cli import quota_views, terminal
from spotkube.cli.app import Format, FormatOption, ProjectOption, fail
from spotkube.cli.cloud_flags import with_cloud_flags
from spotkube.clouds import CLOUDS
from spotkube.clouds import profile as cloud_profile
from spotkube.components.offline import run_stack
from spotkube.platform import stack_names
from spotkube.platform.cloud_options import QuotaOptions
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.live_quota import QuotaQuery, QuotaReport
from spotkube.platform.project import find_project
from spotkube.review.live_quota import live_report
from spotkube.review.plan_document import pool_rows


@with_cloud_flags({cloud: p.commands.options.quota for cloud, p in CLOUDS.items()})
def quota(
    stack: Annotated[list[str], typer.Option("--stack", "-s", metavar="NAME", help="Stack name(s).")],
    output: FormatOption = Format.table,
    options: dict[str, QuotaOptions] | None = None,
    endpoint: Annotated[str | None, typer.Option(
        "--endpoint", metavar="URL",
        help="The cloud API to ask instead of the public one (a sovereign cloud's, a proxy's); a "
        "plain-HTTP endpoint is sent no credential.")] = None,
    timeout: Annotated[float, typer.Option("--timeout", metavar="SECONDS", help="Seconds per request.")] = 30.0,
    project_dir: ProjectOption = Path("."),
) -> None:
    """Compare each stack's quota need at full scale (as `spotkube plan` states it) with the cloud's live
    limits and usage, through the cloud's own SDK (the `refresh` extra) and your credentials.

    Exit 1 when a limit is below the need, so a CI step stops before anything is created; a need that
    fits the limit but not what is in use now is reported, not failed.
    """
    reports: list[QuotaReport] = []
    try:
        project = find_project(project_dir)
        for given in stack:
            name = stack_names.stack_name(project, given)
            run = run_stack(project, name)
            pools = pool_rows(run.spec.cloud, run.registrations)
            read = cloud_profile(run.spec.cloud).commands.read_quota
            if read is None:
                raise fail(f"stack {name}: spotkube reads no live quota for {run.spec.cloud}")
            account = (options or {})[run.spec.cloud].account
            live = read(QuotaQuery(run.spec, tuple(p.machine for p in pools), endpoint, account, timeout))
            reports.append(live_report(name, run.spec.cloud, pools, live))
    except SpotkubeError as err:
        raise fail(str(err)) from None
    if output is Format.json:
        typer.echo(quota_views.to_json(reports))
    elif output is Format.markdown:
        typer.echo(quota_views.to_markdown(reports), nl=False)
    else:
        quota_views.render_table(reports, terminal.console())
    short = [f"{r.stack}: {c.message}" for r in reports for c in r.short]
    if short:
        raise fail("quota is short; the apply would fail part-way:\n" + "\n".join(short), code=1)
