"""The `spotkube` command line: the offline plan and the tools around it.

Every user mistake ends with one clear message and exit code 2; an unsafe plan with exit code 1;
never a traceback.
"""

from __future__ import annotations

import datetime
import inspect
import json
import re
import sys
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

import spotkube
from spotkube.cli import (
    catalog_refresh,
    cost_views,
    diff_views,
    doctor_views,
    drill,
    plan_at_ref,
    plan_views,
    prices_refresh,
    quota_views,
    report,
    simulate_views,
    terminal,
    verify_views,
)
from spotkube.cli.cloud_flags import with_cloud_flags
from spotkube.cli.pipeline_views import render_reports_table, reports_json, reports_markdown
from spotkube.clouds import CLOUDS, PRICING, load_stack_spec, plan_platform, price_table
from spotkube.clouds import profile as cloud_profile
from spotkube.clouds.stack_template import CloudName, acknowledge, create_stack, next_steps
from spotkube.components.offline import run_stack
from spotkube.platform import stack_names
from spotkube.platform.addons.kfp_transforms import retry_rule
from spotkube.platform.catalog import CATALOG_ENV, CATALOG_FILE
from spotkube.platform.cloud_options import (
    CatalogRefreshOptions,
    NewStackOptions,
    PricesRefreshOptions,
    QuotaOptions,
    foreign_flag,
)
from spotkube.platform.contract import pipeline_pod_default
from spotkube.platform.cost import PRICES_ENV, user_file_path
from spotkube.platform.cost.refresh import (
    DEFAULT_RETRIES,
    DEFAULT_RETRY_AFTER_MAX_S,
    DEFAULT_TIMEOUT_S,
    FetchSettings,
)
from spotkube.platform.cost.simulate import DEFAULT_RUNS, DEFAULT_SEED
from spotkube.platform.cost.simulate import simulate as run_simulation
from spotkube.platform.errors import NewStackError, SpotkubeError
from spotkube.platform.logs import LogTarget
from spotkube.platform.pipeline_reader import load_pool_contracts, read_pipeline
from spotkube.platform.project import describes_platform, find_project, stack_config
from spotkube.platform.quota import QuotaQuery, QuotaReport
from spotkube.platform.registration import BuiltCluster
from spotkube.review.costing import price_plan
from spotkube.review.fixed_costs import stack_fixed_costs
from spotkube.review.pipeline_check import check_pipeline
from spotkube.review.plan_diff import StackDiff, plan_diff
from spotkube.review.plan_document import pool_rows
from spotkube.review.program_review import stack_document, stack_documents
from spotkube.review.quota import live_report
from spotkube.review.simulation import Overrides, sim_steps, startup_samples

NO_COLOR_FLAG = "--no-color"
#: Where kubectl looks for a kubeconfig when KUBECONFIG is unset.
DEFAULT_KUBECONFIG = Path("~/.kube/config").expanduser()


class _FlagHelp:
    """`-h` is a flag: no `<bool>` placeholder beside it."""

    def get_help_option(self, ctx: Any) -> TyperOption | None:
        option = super().get_help_option(ctx)  # type: ignore[misc]
        if option is not None:
            option.metavar = ""
        return option


class SpotkubeCommand(_FlagHelp, TyperCommand):
    """A `spotkube` command: its help shows real placeholders."""


class SpotkubeGroup(_FlagHelp, TyperGroup):
    """The `spotkube` group: plain output from NO_COLOR or `--no-color` wherever it is given, and a
    closed stdout (`spotkube plan --all | head -1`) ends the command quietly with exit code 0."""

    def main(self, args: Sequence[str] | None = None, *pos: object, **kwargs: object) -> object:
        terminal.configure(plain=terminal.wants_plain())
        terminal.quiet_sdk_logs()
        tidy_help(self)
        return super().main(args, *pos, **kwargs)  # type: ignore[arg-type]

    def parse_args(self, ctx: typer.Context, args: list[str]) -> list[str]:
        # `spotkube plan -s x --no-color` as well as `spotkube --no-color plan -s x`: the flag belongs
        # to the group, so it moves in front of the command (never past a `--`).
        end = args.index("--") if "--" in args else len(args)
        if NO_COLOR_FLAG in args[:end]:
            args = [NO_COLOR_FLAG, *(a for a in args[:end] if a != NO_COLOR_FLAG), *args[end:]]
        return super().parse_args(ctx, args)

    def invoke(self, ctx: typer.Context) -> object:
        try:
            try:
                return super().invoke(ctx)
            finally:
                sys.stdout.flush()
        except (terminal.PipeClosed, BrokenPipeError):
            terminal.stdout_gone()
            ctx.exit(0)


def reflow(text: str | None) -> str | None:
    """A docstring's paragraphs each on one line, so help wraps them at the terminal's width rather
    than at the source's line ends (typer keeps those past the first paragraph, mid-sentence)."""
    if text is None:
        return None
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(" ".join(line.strip() for line in p.splitlines()) for p in paragraphs)


def tidy_help(command: Any) -> None:
    """Help without type placeholders such as `<bool>` or `<list[str]>`: a flag takes no value, and every
    option that does names its own (NAME, FILE, DIR, table|json|markdown)."""
    command.help = reflow(command.help)
    for param in command.params:
        if isinstance(param, TyperOption) and param.is_flag and param.metavar is None:
            param.metavar = ""
        if isinstance(param, TyperArgument) and param.metavar is not None:
            # An argument's metavar already names it (COMPILED.yaml); typer would add its type, `<path>`.
            param.display_type_rich = lambda ctx: None  # type: ignore[method-assign]
    for sub in getattr(command, "commands", {}).values():
        tidy_help(sub)


app = typer.Typer(help="Plan and check spotkube platforms offline.", no_args_is_help=True, cls=SpotkubeGroup,
                  pretty_exceptions_enable=False, add_completion=True,
                  context_settings={"help_option_names": ["-h", "--help"]})
stderr = terminal.console(stderr=True)


class Format(StrEnum):
    table = "table"
    json = "json"
    markdown = "markdown"


ProjectOption = Annotated[Path, typer.Option("--project", metavar="DIR", help="Folder with Pulumi.yaml.")]
#: The clouds, and the price lists by the price table's names for them, as help shows them.
CLOUD_CHOICES = "|".join(CLOUDS)
PRICE_LIST_CHOICES = "|".join(PRICING)
#: The output formats, as help shows them.
FORMATS = "table|json|markdown"
FormatOption = Annotated[Format, typer.Option("--format", "-f", metavar=FORMATS, help="How to print it.")]
PricesOption = Annotated[Path | None, typer.Option(
    "--prices", metavar="FILE", help=f"Your price file, whose rows override the bundled ones (default: ${PRICES_ENV}, "
    "else prices.json in your config directory if it exists).")]


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"spotkube {spotkube.__version__}")
        raise typer.Exit()


def _plain_output(value: bool) -> None:
    global stderr
    terminal.configure(plain=terminal.wants_plain(value))
    stderr = terminal.console(stderr=True)


@app.callback()
def main(
    version: Annotated[bool, typer.Option("--version", callback=_show_version, is_eager=True,
                                          help="Print spotkube's version and exit.")] = False,
    no_color: Annotated[bool, typer.Option(NO_COLOR_FLAG, callback=_plain_output, is_eager=True,
                                           help="Plain text: no colour, bold or other escape codes (also: "
                                           "NO_COLOR=1).")] = False,
) -> None:
    """Plan and check spotkube platforms offline: no Pulumi CLI, cloud or credentials needed.

    Tables are as wide as the terminal, or COLUMNS; 120 columns when written to a pipe or a file.
    """


def fail(message: str, code: int = 2) -> typer.Exit:
    stderr.print(f"[red]error:[/red] {escape(message)}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


@app.command(cls=SpotkubeCommand)
def plan(
    stack: Annotated[list[str] | None, typer.Option("--stack", "-s", metavar="NAME", help=(
        "A stack to plan; repeatable."))] = None,
    all_stacks: Annotated[bool, typer.Option("--all", help="Every stack in the project (not with --stack).")] = False,
    output: FormatOption = Format.table,
    details: Annotated[bool, typer.Option("--details", help="Also print every resource's registered inputs, "
                                          "secrets masked (not with --diff, which lists the changed ones).")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Fail (exit 1) on warnings too.")] = False,
    diff: Annotated[str | None, typer.Option("--diff", metavar="REF", help="Show what changed since the git ref "
                                             "REF (e.g. origin/main, HEAD~1) instead of the plan.")] = None,
    prices: PricesOption = None,
    project_dir: ProjectOption = Path("."),
) -> None:
    """Show what each stack would build: security posture, pools, cost, placements, policy verdicts,
    resources and outputs of each spotkube cluster its program builds (this project's, or any Pulumi
    program that uses spotkube), without a cloud. Exit 1 when the plan is unsafe (or, with --strict, warns)."""
    if all_stacks and stack:
        raise fail("--all plans every stack, --stack only the ones named: use one of them")
    if details and diff is not None:
        raise fail("--details prints every input of the plan; --diff already lists each input that changed, old "
                   "and new: use one of them")
    try:
        project = find_project(project_dir)
        names = project.stacks() if all_stacks else [stack_names.stack_name(project, s) for s in stack or []]
        if not names:
            raise fail("name a stack with --stack NAME, or use --all")
        table = price_table(prices)
        documents = [document for name in terminal.progress(names, stderr=stderr)
                     for document in stack_documents(run_stack(project, name), table)]
        wanted = None if all_stacks else names
        base = None
        for ref in terminal.progress([diff] if diff is not None else [], verb="planning the base", stderr=stderr):
            base = plan_at_ref.plan_documents(project, ref, wanted, prices)
    except SpotkubeError as err:
        raise fail(str(err)) from None
    if base is not None and diff is not None:
        _print_diff(plan_diff(base, [d.to_json(details=True) for d in documents]), diff, output)
    elif output is Format.json:
        typer.echo(report.to_json(documents, details=details))
    elif output is Format.markdown:
        typer.echo(plan_views.to_markdown(documents, details=details))
    else:
        plan_views.render_table(documents, terminal.console(), details=details)
    unsafe = [f"{d.title}: {e}" for d in documents for e in d.errors]
    if strict:
        unsafe += [f"{d.title}: warning {cost_views.warning_text(w)}" for d in documents for w in d.warnings]
    if unsafe:
        raise fail(f"the plan is unsafe{' (--strict)' if strict else ''}:\n" + "\n".join(unsafe), code=1)


def _print_diff(diffs: Sequence[StackDiff], ref: str, output: Format) -> None:
    if output is Format.json:
        typer.echo(diff_views.to_json(diffs, ref))
    elif output is Format.markdown:
        typer.echo(diff_views.to_markdown(diffs, ref))
    else:
        diff_views.render_table(diffs, ref, terminal.console())


def _one_cluster(clusters: Sequence[BuiltCluster], wanted: str | None, source: str) -> str:
    """The cluster `--cluster` names, or the stack's only one."""
    names = [c.name for c in clusters]
    if wanted is None and len(names) == 1:
        return names[0]
    if wanted in names:
        return wanted
    said = f"--cluster {wanted}: no such cluster" if wanted is not None else f"{len(names)} clusters"
    raise fail(f"{source}: {said}; the program builds {', '.join(names)}: name one with --cluster NAME")


def _hours(pairs: list[str], pools: list[str]) -> dict[str, Decimal]:
    """Parse `--hours POOL=H` options; a pool the stack lacks or a bad number is a user error."""
    hours: dict[str, Decimal] = {}
    for pair in pairs:
        pool, sep, value = pair.partition("=")
        try:
            amount = Decimal(value)
        except InvalidOperation:
            amount = Decimal(-1)
        if not sep or pool not in pools or amount < 0:
            raise fail(f"--hours {pair}: use POOL=HOURS with HOURS >= 0 and POOL one of {', '.join(pools)}")
        hours[pool] = amount
    return hours


@app.command(cls=SpotkubeCommand)
def cost(
    stack: Annotated[str, typer.Option("--stack", "-s", metavar="NAME", help="The stack to price.")],
    hours: Annotated[list[str] | None, typer.Option("--hours", metavar="POOL=HOURS", help=(
        "What-if node-hours a month for one pool; repeatable."))] = None,
    output: FormatOption = Format.table,
    prices: PricesOption = None,
    project_dir: ProjectOption = Path("."),
    cluster: Annotated[str | None, typer.Option("--cluster", metavar="NAME", help=(
        "The cluster to price, by its component's name, when the stack's program builds several."))] = None,
) -> None:
    """What a stack costs a month, with what-if node-hours per pool, and the fixed lines of its idle floor
    (cluster fee, network, disks) read from what its program registers offline; needs no Pulumi CLI. A stack
    that describes its platform under spotkube: is priced from its plan, another program's stack from the
    pools it registers."""
    try:
        project = find_project(project_dir)
        stack = stack_names.stack_name(project, stack)
        table = price_table(prices)
        if describes_platform(stack_config(project, stack)):
            plan_ = plan_platform(load_stack_spec(project, stack))
            what_if = _hours(hours or [], [p.name for p in plan_.pools])
            run = run_stack(project, stack)
            report_ = price_plan(plan_, hours=what_if, table=table)
            report_.fixed = stack_fixed_costs(run.spec, run.registrations)
        else:
            run = run_stack(project, stack)
            chosen = _one_cluster(run.clusters, cluster, run.source)
            names = [p.name for d in stack_documents(run, table) if d.cluster == chosen for p in d.pools]
            what_if = _hours(hours or [], names)
            report_ = next(d.cost for d in stack_documents(run, table, hours=what_if) if d.cluster == chosen)
            stack = f"{stack}/{chosen}" if len(run.clusters) > 1 else stack
    except SpotkubeError as err:
        raise fail(str(err)) from None
    if output is Format.json:
        typer.echo(cost_views.cost_json(stack, report_))
    elif output is Format.markdown:
        typer.echo(cost_views.cost_markdown(stack, report_), nl=False)
    else:
        cost_views.render_cost(stack, report_, terminal.console())


@app.command(cls=SpotkubeCommand)
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


app.command("doctor", cls=SpotkubeCommand)(doctor_views.doctor)
app.command("verify", cls=SpotkubeCommand)(verify_views.verify)

prices_app = typer.Typer(help="Prices: the bundled table and your own price file.", no_args_is_help=True,
                         cls=SpotkubeGroup)
app.add_typer(prices_app, name="prices")

@prices_app.command("refresh", cls=SpotkubeCommand)
@with_cloud_flags({cloud: p.commands.options.prices_refresh for cloud, p in CLOUDS.items()})
def refresh_prices(
    all_rows: Annotated[bool, typer.Option("--all", help=(
        "Refresh every row of the bundled table and of your price file too, not only what the stacks use."))] = False,
    cloud: Annotated[list[str] | None, typer.Option("--cloud", metavar=PRICE_LIST_CHOICES, help=(
        "Only this price list (repeatable); a list named here must be read, so a missing key is an error."))] = None,
    region: Annotated[str | None, typer.Option("--region", metavar="REGION", help=(
        "With --cloud and --sku: refresh these machines in this region, e.g. uksouth or us-central1."))] = None,
    sku: Annotated[list[str] | None, typer.Option("--sku", metavar="SIZE", help=(
        "With --cloud and --region: a VM size (Standard_NC4as_T4_v3) or machine type (g2-standard-8); "
        "repeatable."))] = None,
    table_path: Annotated[Path | None, typer.Option("--table", metavar="FILE", help=(
        f"Price file to write (default: ${PRICES_ENV}, else prices.json in your config directory); "
        "created with its folders when missing."))] = None,
    options: dict[str, PricesRefreshOptions] | None = None,
    timeout: Annotated[float, typer.Option("--timeout", metavar="SECONDS", help=(
        "Seconds to wait for a connection and for each answer; a service that doesn't answer is not tried again "
        "after this long, retries included."))] = DEFAULT_TIMEOUT_S,
    retries: Annotated[int, typer.Option("--retries", metavar="N", help=(
        "Attempts after the first on 429, 5xx and dropped connections, with exponential backoff."))] = DEFAULT_RETRIES,
    retry_after_max: Annotated[int, typer.Option("--retry-after-max", metavar="SECONDS", help=(
        "The longest Retry-After honoured; a server asking for more waits this long."))] = DEFAULT_RETRY_AFTER_MAX_S,
    output: Annotated[Format, typer.Option("--format", "-f", metavar="table|markdown", help=(
        "table: one line per price list; markdown: the same as a list for a pull-request comment."))] = Format.table,
    project_dir: ProjectOption = Path("."),
) -> None:
    """Read fresh on-demand and spot prices from the clouds' own price lists into your price file.

    Azure: the Retail Prices API (no credentials). GCP: the Cloud Billing Catalog API, with an API key in
    SPOTKUBE_GCP_BILLING_API_KEY; without the key GCP is skipped and the summary says so. By default it
    refreshes what the stacks use. It never writes into the installed package: the plan and `spotkube
    cost` read your price file over the bundled table.
    """
    target = user_file_path(table_path)
    asked = list(dict.fromkeys(cloud or []))
    try:
        settings = FetchSettings(timeout_s=timeout, retries=retries, retry_after_max_s=retry_after_max)
        if region is not None or sku:
            targets = prices_refresh.explicit_targets(asked, region, sku or [])
        else:
            project = find_project(project_dir)
            targets = prices_refresh.stack_targets(project, project.stacks())
            if all_rows:
                for name, extra in prices_refresh.table_targets(prices_refresh.tables_for_all(target)).items():
                    targets.setdefault(name, []).extend(extra)
        outcome = prices_refresh.refresh(targets, asked=asked, target_file=target, settings=settings,
                                         endpoints={cloud_profile(c).facts.pricing.name: o.endpoint
                                                    for c, o in (options or {}).items()})
    except ValueError as err:
        raise fail(str(err)) from None
    except SpotkubeError as err:
        raise fail(str(err)) from None
    lines = outcome.lines()
    if output is Format.markdown:
        typer.echo("**Prices** (`spotkube prices refresh`):\n\n" + "\n".join(f"- {line}" for line in lines) + "\n")
    else:
        for line in lines:
            typer.echo(line)


catalog_app = typer.Typer(help="The GPU catalog: which machines carry which GPUs, and where the clouds offer them.",
                          no_args_is_help=True, cls=SpotkubeGroup)
app.add_typer(catalog_app, name="catalog")


@catalog_app.command("refresh", cls=SpotkubeCommand)
@with_cloud_flags({cloud: p.commands.options.catalog_refresh for cloud, p in CLOUDS.items()})
def refresh_catalog(
    cloud: Annotated[list[CloudName] | None, typer.Option(
        "--cloud", metavar=CLOUD_CHOICES, help="Cloud(s) whose part to refresh (default: every cloud).")] = None,
    options: dict[str, CatalogRefreshOptions] | None = None,
    catalog_file: Annotated[Path | None, typer.Option("--file", metavar="FILE", help=(
        f"Catalog file to write (default: ${CATALOG_ENV}, else catalog.json in your config directory); created with "
        "its folders when missing."))] = None,
) -> None:
    """Read the GPU machines each cloud offers, with their GPUs, vCPUs, memory, regions and zones, from the
    cloud's own API (Azure's Resource SKUs, Compute Engine's machine and accelerator types) into your catalog
    file, which `spotkube plan` and `pulumi up` then read over the bundled catalog. Needs spotkube's `refresh`
    extra, which brings the clouds' SDKs."""
    clouds = [str(c) for c in cloud] if cloud else list(CloudName)
    today = datetime.datetime.now(datetime.UTC).date()
    try:
        path, report = catalog_refresh.refresh(clouds, today, options or {}, catalog_file)
    except SpotkubeError as err:
        raise fail(str(err)) from None
    except OSError as err:
        target = CATALOG_FILE.path(catalog_file)
        raise fail(f"{target}: cannot write the catalog file ({err.strerror or err})") from None
    for done in report:
        typer.echo(done.summary())
        for note in done.result.notes:
            typer.echo(f"  {note}")
    typer.echo(f"wrote {path}")


@app.command("pipeline-check", cls=SpotkubeCommand)
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
        stderr.print(f"[red]error:[/red] {compiled}: step {result.step.name} can land nowhere on stack "
                     f"{stack_name}: {result.error}", highlight=False, soft_wrap=True)
    if nowhere:
        raise typer.Exit(1)


@app.command("drill", cls=SpotkubeCommand)
def drill_command(
    stack: Annotated[str, typer.Option("--stack", "-s", metavar="NAME", help="Stack name.")],
    pool: Annotated[str, typer.Option("--pool", "-p", metavar="POOL", help="A spot or preemptible pool of the stack.")],
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


#: Each cloud's own flags of `spotkube new-stack`.
NEW_STACK_OPTIONS = {cloud: p.commands.options.new_stack for cloud, p in CLOUDS.items()}


@app.command("new-stack", cls=SpotkubeCommand)
@with_cloud_flags(NEW_STACK_OPTIONS)
def new_stack(
    cloud: Annotated[CloudName, typer.Option("--cloud", metavar=CLOUD_CHOICES, help="The cloud.")],
    env: Annotated[str, typer.Option("--env", metavar="ENV", help="Environment, e.g. dev or prod.")],
    region: Annotated[str, typer.Option("--region", metavar="REGION", help="Azure or Google Cloud region.")],
    options: dict[str, NewStackOptions] | None = None,
    project_dir: ProjectOption = Path("."),
) -> None:
    """Write stacks/Pulumi.<cloud>-<env>-<region>.yaml with safe defaults (never overwrites), plan it
    offline and acknowledge each warning it could not avoid (marked `# review:`), so it passes `plan
    --strict`; then print the exact commands left: the offline plan, `pulumi stack init`, the GitHub
    environment the deploy runs it in, the cloud's trust in that environment, and the commit."""
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
        acknowledged = acknowledge(project, created, document.warnings)
    except SpotkubeError as err:
        created.path.unlink(missing_ok=True)  # a stack new-stack can't plan is not left behind
        raise fail(str(err)) from None
    typer.echo(f"wrote {project.relative(created.path)}")
    for line in next_steps(project, created, cloud, acknowledged=acknowledged):
        typer.echo(line)


_DURATION = re.compile(r"([0-9]+)(s|m|h|d)")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _duration(option: str, text: str) -> int:
    """Whole seconds from `90s`, `30m`, `2h` or `1d`; anything else is a user error."""
    match = _DURATION.fullmatch(text.strip())
    if match is None or int(match[1]) == 0:
        raise fail(f"{option} {text}: use a whole number above 0 followed by s, m, h or d, e.g. 30m or 2h")
    return int(match[1]) * _UNIT_SECONDS[match[2]]


def _pairs(option: str, pairs: list[str], what: str) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key or not value:
            raise fail(f"{option} {pair}: use {what}")
        out[key] = value
    return out


def _rate(pair: str, text: str) -> float:
    try:
        rate = float(text)
    except ValueError:
        rate = -1.0
    if not 0 <= rate < 1:
        raise fail(f"--eviction-rate {pair}: use POOL=RATE with RATE from 0 up to (not including) 1, e.g. 0.05")
    return rate


@app.command(cls=SpotkubeCommand)
def simulate(
    compiled: Annotated[list[Path], typer.Argument(
        metavar="PIPELINE.yaml...", help="Pipeline(s) compiled by kfp.compiler.Compiler().compile(...).")],
    stack: Annotated[str, typer.Option("--stack", "-s", metavar="NAME",
                                       help="The stack whose pools the pipeline runs on.")],
    runs: Annotated[int, typer.Option("--runs", min=1, max=1_000_000, metavar="N",
                                      help="Runs to sample, 1 to 1,000,000.")] = DEFAULT_RUNS,
    seed: Annotated[int, typer.Option("--seed", min=0, metavar="N",
                                      help="Seed of the random generator: same seed, same figures.")]
    = DEFAULT_SEED,
    runtime: Annotated[list[str] | None, typer.Option(
        "--runtime", metavar="STEP=DURATION",
        help="A step's runtime, STEP=DURATION (e.g. train=3h); overrides what the step declares.")]
    = None,
    default_runtime: Annotated[str, typer.Option(
        "--default-runtime", metavar="DURATION",
        help="Runtime of a step that declares none (spotkube.pipelines.declare_timing).")]
    = "1h",
    eviction_rate: Annotated[list[str] | None, typer.Option(
        "--eviction-rate", metavar="POOL=RATE",
        help="A pool's eviction rate, POOL=RATE (share of node-hours evicted); default: "
        "the stack's cost.evictionRate.")] = None,
    node_start: Annotated[str, typer.Option(
        "--node-start", metavar="DURATION",
        help="How long a new node takes to be ready (VM, boot, driver, device plugin).")] = "5m",
    out_of_capacity: Annotated[float, typer.Option(
        "--out-of-capacity", min=0.0, max=1.0, metavar="SHARE",
        help="Share of scale-ups of a spot or preemptible GPU pool that find no capacity, for the sampled "
        "time to a running step (no cloud publishes it; docs/time-to-gpu.md).")] = 0.1,
    output: FormatOption = Format.table,
    prices: PricesOption = None,
    project_dir: ProjectOption = Path("."),
) -> None:
    """Median and p90 wall time and cost of a compiled pipeline on a stack, with evictions, retries,
    backoff, checkpoints and the wait for new nodes sampled (a seeded Monte Carlo), next to the linear
    cost model's figure and the same work on demand. Several pipelines share one offline run of the stack."""
    overrides = Overrides(
        runtimes={step: _duration("--runtime", text)
                  for step, text in _pairs("--runtime", runtime or [], "STEP=DURATION, e.g. train=3h").items()},
        eviction_rates={pool: _rate(f"{pool}={text}", text)
                        for pool, text in _pairs("--eviction-rate", eviction_rate or [], "POOL=RATE").items()},
        default_runtime_seconds=_duration("--default-runtime", default_runtime),
        node_start_seconds=_duration("--node-start", node_start),
    )
    try:
        pipelines = [read_pipeline(path) for path in compiled]
        project = find_project(project_dir)
        name = stack_names.stack_name(project, stack)
        run = run_stack(project, name)
        contracts = run.outputs.get("poolContracts")
        if contracts is None or contracts.secret:
            raise fail(f"stack {name} exports no poolContracts output to place the pipeline's steps on")
        _, pools = load_pool_contracts(contracts.value, f"stack {name}: poolContracts", name)
        document = stack_document(run, price_table(prices))
        simulations = []
        for pipeline in pipelines:
            steps = sim_steps(pipeline, run.spec, name, pools, document.cost, document.fallback, overrides)
            simulations.append((pipeline.name, steps, run_simulation(steps, runs=runs, seed=seed)))
        startups = startup_samples(document.startup, [s for _, steps, _ in simulations for s in steps],
                                   out_of_capacity, runs=runs, seed=seed)
    except SpotkubeError as err:
        raise fail(str(err)) from None
    if output is Format.json:
        typer.echo(simulate_views.to_json(name, simulations, startups))
    elif output is Format.markdown:
        typer.echo(simulate_views.to_markdown(name, simulations, startups), nl=False)
    else:
        simulate_views.render(name, simulations, terminal.console(), startups)


@app.command(cls=SpotkubeCommand)
def logs(
    stack: Annotated[str, typer.Option("--stack", "-s", metavar="NAME", help="The stack the pipeline ran on.")],
    pod: Annotated[str | None, typer.Option("--pod", metavar="POD", help="The step's pod, as the KFP UI names it.")]
    = None,
    run_id: Annotated[str | None, typer.Option("--run", metavar="RUN_ID", help="A KFP run id: every pod of the run.")]
    = None,
    cluster: Annotated[str | None, typer.Option(
        "--cluster", metavar="NAME", help="GKE: the cluster's name (`pulumi stack output clusterName`).")] = None,
    workspace: Annotated[str | None, typer.Option(
        "--workspace", metavar="RESOURCE_ID",
        help="AKS: the Log Analytics workspace's resource id (`pulumi stack output "
        "logWorkspaceId`; default: the stack's cluster.logs.workspaceId).")] = None,
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
