"""The `spotkube` command line: the offline plan and the tools around it.

Every user mistake ends with one clear message and exit code 2; an unsafe plan with exit code 1;
never a traceback.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
import typer.main
from rich.markup import escape
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

import spotkube
from spotkube.cli import terminal
from spotkube.cli.markdown_cells import GITHUB_COMMENT_LIMIT
from spotkube.clouds import CLOUDS, PROFILES, price_table
from spotkube.components.mock_host import no_full_collections
from spotkube.components.offline import run_stack
from spotkube.platform import stack_names
from spotkube.platform.cost import PRICES_ENV
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.plan_scope import one_plan
from spotkube.platform.project import find_project
from spotkube.platform.registration import BuiltCluster
from spotkube.review.program_review import stack_documents

if TYPE_CHECKING:
    from spotkube.review.plan_diff import StackDiff

NO_COLOR_FLAG = "--no-color"


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
        terminal.quiet_sdk_logs([n for m in PROFILES.values() for n in m.sdk_loggers])
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
    commands = getattr(command, "commands", {})
    for sub in (commands.loaded() if isinstance(commands, LazyCommands) else commands).values():
        tidy_help(sub)


#: The commands each in a module of its own, by name: "module:function" for a command, "module:attribute"
#: for a group of commands (a typer.Typer). `spotkube plan` imports none of them, nor the clouds' flags
#: some of them declare.
LAZY_COMMANDS = {
    "quota": "spotkube.cli.commands.quota:quota",
    "doctor": "spotkube.cli.doctor_views:doctor",
    "verify": "spotkube.cli.verify_views:verify",
    "pipeline-check": "spotkube.cli.commands.pipeline_check:pipeline_check_command",
    "drill": "spotkube.cli.commands.drill:drill_command",
    "new-stack": "spotkube.cli.commands.new_stack:new_stack",
    "simulate": "spotkube.cli.commands.simulate:simulate",
    "prices": "spotkube.cli.commands.prices:prices_app",
    "catalog": "spotkube.cli.commands.catalog:catalog_app",
    "logs": "spotkube.cli.commands.logs:logs",
}
#: The order help lists the commands in.
COMMAND_ORDER = ("plan", "cost", "quota", "doctor", "verify", "pipeline-check", "drill", "new-stack", "simulate",
                 "logs", "prices", "catalog")


def load_command(name: str) -> TyperCommand | TyperGroup:
    """The command `name` of `LAZY_COMMANDS`, built as typer builds a registered one, its help tidied."""
    module, _, attribute = LAZY_COMMANDS[name].partition(":")
    found = getattr(import_module(module), attribute)
    holder = typer.Typer()
    if isinstance(found, typer.Typer):
        holder.add_typer(found, name=name)
    else:
        holder.command(name, cls=SpotkubeCommand)(found)
    command = typer.main.get_group(holder).commands[name]
    tidy_help(command)
    return command  # type: ignore[return-value]


class LazyCommands(MutableMapping[str, Any]):
    """The root group's commands by name, in help's order: those of `LAZY_COMMANDS` are built the first
    time they are asked for, so that their names are known (for help, suggestions and completion)
    without importing them."""

    def __init__(self, registered: Mapping[str, Any]) -> None:
        self._loaded = dict(registered)

    def loaded(self) -> dict[str, Any]:
        return self._loaded

    def __getitem__(self, name: str) -> Any:
        if name not in self._loaded and name in LAZY_COMMANDS:
            self._loaded[name] = load_command(name)
        return self._loaded[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        del self._loaded[name]

    def __contains__(self, name: object) -> bool:
        return name in self._loaded or name in LAZY_COMMANDS

    def __iter__(self) -> Iterator[str]:
        names = dict.fromkeys([*(n for n in COMMAND_ORDER if n in self), *self._loaded, *LAZY_COMMANDS])
        return iter(names)

    def __len__(self) -> int:
        return len({*self._loaded, *LAZY_COMMANDS})


class SpotkubeRoot(SpotkubeGroup):
    """The `spotkube` group, whose commands other than the plan's load when they run (`LazyCommands`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = LazyCommands(self.commands)


app = typer.Typer(help="Plan and check spotkube platforms offline.", no_args_is_help=True, cls=SpotkubeRoot,
                  pretty_exceptions_enable=False, add_completion=True,
                  context_settings={"help_option_names": ["-h", "--help"]})
stderr = terminal.console(stderr=True)


class Format(StrEnum):
    table = "table"
    json = "json"
    markdown = "markdown"


ProjectOption = Annotated[Path, typer.Option("--project", metavar="DIR", help="Folder with Pulumi.yaml.")]
#: The clouds, as help shows them.
CLOUD_CHOICES = "|".join(CLOUDS)
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
# The runs' objects live until the documents are printed: a full collection would walk them all to free
# next to nothing (about 0.15 CPU s a stack), and the peak memory is the run's either way.
@no_full_collections()
def plan(
    stack: Annotated[list[str] | None, typer.Option("--stack", "-s", metavar="NAME", help=(
        "A stack to plan; repeatable."))] = None,
    all_stacks: Annotated[bool, typer.Option("--all", help="Every stack in the project (not with --stack).")] = False,
    output: FormatOption = Format.table,
    details: Annotated[bool, typer.Option("--details", help="Also print every resource's registered inputs, "
                                          "secrets masked (not with --diff, which lists the changed ones).")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="Fail (exit 1) on warnings too.")] = False,
    diff: Annotated[str | None, typer.Option("--diff", metavar="REF", help=(
        "Show what changed since the git ref REF (e.g. origin/main, HEAD~1) instead of the plan; with --format "
        "markdown, the pull-request comment: a summary table, then each stack's diff and plan."))] = None,
    max_chars: Annotated[int, typer.Option("--max-chars", metavar="N", min=1000, help=(
        "With --diff and --format markdown: the most characters the pull-request comment may have (GitHub's "
        "limit, 65536, by default); each stack's plan that doesn't fit is named, with where to read it."))] = (
        GITHUB_COMMENT_LIMIT),
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
        with one_plan():  # one reading of the user's catalog for the whole plan, program and review alike
            documents = [document for name in terminal.progress(names, stderr=stderr)
                         for document in stack_documents(run_stack(project, name), table)]
        wanted = None if all_stacks else names
        base = None
        for ref in terminal.progress([diff] if diff is not None else [], verb="planning the base", stderr=stderr):
            # What only some runs need is imported where it is needed: every plan pays for what this module loads.
            from spotkube.cli import plan_at_ref

            base = plan_at_ref.plan_documents(project, ref, wanted, prices)
    except SpotkubeError as err:
        raise fail(str(err)) from None
    if base is not None and diff is not None:
        from spotkube.review.plan_diff import plan_diff

        diffs = plan_diff(base, [d.to_json(details=True) for d in documents])
        if output is Format.markdown:
            from spotkube.cli import plan_comment

            typer.echo(plan_comment.comment(diffs, documents, diff, strict=strict, limit=max_chars), nl=False)
        else:
            _print_diff(diffs, diff, output)
    elif output is Format.json:
        from spotkube.cli import report

        typer.echo(report.to_json(documents, details=details))
    elif output is Format.markdown:
        from spotkube.cli import plan_views

        typer.echo(plan_views.to_markdown(documents, details=details))
    else:
        from spotkube.cli import plan_views

        plan_views.render_table(documents, terminal.console(), details=details)
    unsafe = [f"{d.title}: {e}" for d in documents for e in d.errors]
    if strict:
        from spotkube.cli import cost_views

        unsafe += [f"{d.title}: warning {cost_views.warning_text(w)}" for d in documents for w in d.warnings]
    if unsafe:
        raise fail(f"the plan is unsafe{' (--strict)' if strict else ''}:\n" + "\n".join(unsafe), code=1)


def _print_diff(diffs: Sequence[StackDiff], ref: str, output: Format) -> None:
    from spotkube.cli import diff_views

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


def _hours(pairs: list[str]) -> dict[str, tuple[str, Decimal]]:
    """`--hours POOL=H` options by pool, each as given and its hours (-1 when not a number)."""
    hours: dict[str, tuple[str, Decimal]] = {}
    for pair in pairs:
        pool, sep, value = pair.partition("=")
        try:
            hours[pool] = (pair, Decimal(value) if sep else Decimal(-1))
        except InvalidOperation:
            hours[pool] = (pair, Decimal(-1))
    return hours


def _check_hours(hours: dict[str, tuple[str, Decimal]], pools: list[str]) -> None:
    """A pool the stack lacks or a bad number in `--hours` is a user error."""
    for pool, (pair, amount) in hours.items():
        if pool not in pools or amount < 0:
            raise fail(f"--hours {pair}: use POOL=HOURS with HOURS >= 0 and POOL one of {', '.join(pools)}")


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
    (cluster fee, network, disks): the pools and resources its program registers offline, priced as the
    plan prices them; needs no Pulumi CLI."""
    from spotkube.cli import cost_views

    try:
        project = find_project(project_dir)
        stack = stack_names.stack_name(project, stack)
        table = price_table(prices)
        run = run_stack(project, stack)
        chosen = _one_cluster(run.clusters, cluster, run.source)
        what_if = _hours(hours or [])
        document = next(d for d in stack_documents(run, table, hours={p: h for p, (_, h) in what_if.items() if h >= 0})
                        if d.cluster == chosen)
        _check_hours(what_if, [p.pool.name for p in document.cost.pools])
        report_ = document.cost
        stack = f"{stack}/{chosen}" if len(run.clusters) > 1 else stack
    except SpotkubeError as err:
        raise fail(str(err)) from None
    if output is Format.json:
        typer.echo(cost_views.cost_json(stack, report_))
    elif output is Format.markdown:
        typer.echo(cost_views.cost_markdown(stack, report_), nl=False)
    else:
        cost_views.render_cost(stack, report_, terminal.console())


