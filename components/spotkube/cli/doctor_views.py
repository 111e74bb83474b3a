"""`spotkube doctor`: before a stack's first `pulumi up`, check live what it needs, one line per item.

The I/O half: it runs the stack offline (the registered types, the identity table's calls, the pools),
asks the cloud's profile to read the live state (`read_access`) and `spotkube quota`'s reader for the
quota, and prints `review.doctor`'s findings. Exit 0 when nothing fails, 1 when something the first
`up` needs is missing, 2 on bad input or missing credentials.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from spotkube.cli import terminal
from spotkube.cli.cloud_flags import only_on
from spotkube.cli.github_api import DEFAULT_API, read_environment
from spotkube.clouds import CLOUDS, profile
from spotkube.components.offline import StackRun, run_stack
from spotkube.platform import stack_names
from spotkube.platform.bootstrap import BACKEND_URL, BACKEND_VARIABLE, REPOSITORY
from spotkube.platform.doctor import DoctorQuery, Finding
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.identities import Identity
from spotkube.platform.live_quota import QuotaQuery
from spotkube.platform.project import find_project
from spotkube.review.backend_grants import backend_findings
from spotkube.review.doctor import DoctorReport, doctor_report
from spotkube.review.github_environments import environment_findings
from spotkube.review.identities import stack_calls
from spotkube.review.live_quota import live_report
from spotkube.review.plan_document import pool_rows


def principals(run: StackRun, deploy: str | None, preview: str | None) -> dict[Identity, str]:
    """Whose roles to read: as given, the deployer defaulting to the stack's `cluster.deployer.objectId`."""
    deployer = deploy or getattr(run.spec.cluster.deployer, "object_id", None)
    found: dict[Identity, str] = {}
    if deployer:
        found["deploy"] = str(deployer)
    if preview:
        found["preview"] = preview
    return found


def check(run: StackRun, *, deploy: str | None, preview: str | None, endpoint: str | None, account: str | None,
          timeout: float, github: tuple[str, str] | None = None) -> DoctorReport:
    """Read the cloud live and judge what the stack's first `up` needs; with `github` (repository, API),
    the stack's GitHub environment too."""
    cloud = profile(run.spec.cloud)
    if cloud.commands.read_access is None:
        raise SpotkubeError(f"stack {run.stack}: spotkube can't check {cloud.title} live")
    rows = pool_rows(run.spec.cloud, run.registrations)
    who = principals(run, deploy, preview)
    types = tuple(dict.fromkeys(r.type for r in run.registrations))
    live = cloud.commands.read_access(DoctorQuery(run.spec, types, rows, who, endpoint, account, timeout))
    quota = None
    quota_problem: Finding | None = None
    if cloud.commands.read_quota is not None:
        try:
            quota = live_report(run.stack, run.spec.cloud, rows, cloud.commands.read_quota(
                QuotaQuery(run.spec, tuple(r.machine for r in rows), endpoint, account, timeout)))
        except SpotkubeError as err:
            quota_problem = Finding("quota", "quota", "fail", f"the quota could not be read: {err}")
    report = doctor_report(run.stack, live, stack_calls(run.spec.cloud, run.registrations, run.invokes),
                           cloud.commands.identities, who, f"its {cloud.principal} on {cloud.vendor}", quota)
    if quota_problem is not None:
        report = DoctorReport(report.stack, report.where, (*report.findings, quota_problem))
    if github is not None:
        repository, api = github
        environment, variables = read_environment(repository, run.stack, api, timeout)
        found = environment_findings(run.stack, run.spec.is_prod, environment, variables)
        url = (variables or {}).get(BACKEND_VARIABLE, "")
        if re.fullmatch(BACKEND_URL, url):
            found += backend_check(run, url, who, endpoint, account, timeout)
        report = DoctorReport(report.stack, report.where, (*report.findings, *found))
    return report


def backend_check(run: StackRun, url: str, who: dict[Identity, str], endpoint: str | None, account: str | None,
                  timeout: float) -> list[Finding]:
    """The grants on the environment's self-managed backend, read live where the cloud's reader can; where
    it can't, said so with what to check by hand."""
    cloud = profile(run.spec.cloud)
    read = cloud.commands.read_backend
    policy = read(run.spec, url, endpoint, account, timeout) if read is not None else None
    if policy is None:
        return [Finding("backend", run.stack, "warn", f"spotkube doctor doesn't read who holds roles on {url} on "
                        f"{cloud.title}: check by hand that only {run.stack}'s deploy identity may write it"
                        + ("" if run.spec.is_prod else " and the preview identity may only read it")
                        + (" and nobody else may read it" if run.spec.is_prod else ""),
                        "docs/identities.md, the self-managed backend")]
    return backend_findings(run.stack, run.spec.is_prod, policy, who)


def lines(report: DoctorReport) -> list[str]:
    failed = len(report.failed)
    return [f"stack {report.stack} ({report.where})", *(f"  {f.line()}" for f in report.findings),
            "ready for the first pulumi up" if not failed else f"{failed} item(s) to fix before the first pulumi up"]


def doctor(
    stack: Annotated[str, typer.Option("--stack", "-s", metavar="NAME", help="The stack to check.")],
    deploy: Annotated[str | None, typer.Option(
        "--deploy", metavar="PRINCIPAL", help="The deploy identity whose roles to check: "
        + ", ".join(f"its {c.principal} on {c.vendor}" for c in CLOUDS.values())
        + " (default: the stack's cluster.deployer.objectId, where it names one).")] = None,
    preview: Annotated[str | None, typer.Option(
        "--preview", metavar="PRINCIPAL", help="The preview identity whose roles to check, named the same way.")]
    = None,
    subscription: Annotated[str | None, typer.Option(
        "--subscription", metavar="SUBSCRIPTION_ID",
        help=only_on("--subscription"))] = None,
    endpoint: Annotated[str | None, typer.Option(
        "--endpoint", metavar="URL", help="The cloud API to ask instead of the public one; a plain-HTTP endpoint is "
        "sent no credential.")] = None,
    github_repository: Annotated[str | None, typer.Option(
        "--github-repository", metavar="OWNER/REPO", envvar="GITHUB_REPOSITORY",
        help="Also check the stack's GitHub environment there (its branch rule, reviewers on prod, the variables "
        "the workflows sign in with), with $GITHUB_TOKEN, and who holds roles on a self-managed backend.")] = None,
    github_api: Annotated[str, typer.Option("--github-api", metavar="URL", envvar="GITHUB_API_URL",
                                            help="GitHub's REST API (GitHub Enterprise: its own).")] = DEFAULT_API,
    timeout: Annotated[float, typer.Option("--timeout", metavar="SECONDS", help="Seconds per request.")] = 30.0,
    output: Annotated[str, typer.Option("--format", "-f", metavar="table|json", help="How to print it.")] = "table",
    project_dir: Annotated[Path, typer.Option("--project", metavar="DIR", help="Folder with Pulumi.yaml.")]
    = Path("."),
) -> None:
    """Before a stack's first `pulumi up`, with the deployer's credentials: check live that the cloud's APIs
    or resource providers are on, that the CI identities hold the roles the program needs, that the quota
    suffices and that the region offers each pool's size; with --github-repository, that the stack's GitHub
    environment has the bootstrap's rules and variables. One line per item, with the command that fixes it.

    Exit 0 when nothing is missing, 1 when something is, 2 on bad input or missing credentials.
    """
    stderr = terminal.console(stderr=True)
    try:
        if output not in ("table", "json"):
            raise SpotkubeError(f"--format {output}: use table or json")
        project = find_project(project_dir)
        run = run_stack(project, stack_names.stack_name(project, stack))
        if github_repository is not None and not re.fullmatch(REPOSITORY, github_repository):
            raise SpotkubeError(f"--github-repository {github_repository!r}: write OWNER/REPO")
        report = check(run, deploy=deploy, preview=preview, endpoint=endpoint, account=subscription,
                       timeout=timeout, github=(github_repository, github_api) if github_repository else None)
    except SpotkubeError as err:
        stderr.print(f"[red]error:[/red] {escape(str(err))}", highlight=False, soft_wrap=True)
        raise typer.Exit(2) from None
    if output == "json":
        typer.echo(json.dumps(report.to_json(), indent=2))
    else:
        for line in lines(report):
            typer.echo(line)
    if report.failed:
        raise typer.Exit(1)
