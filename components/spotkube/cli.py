"""The `spotkube` command line: the offline plan and the tools around it.

Every user mistake ends with one clear message and exit code 2; an unsafe plan with exit code 1;
never a traceback.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from spotkube import report
from spotkube.errors import SpotkubeError
from spotkube.offline import run_stack
from spotkube.project import find_project

app = typer.Typer(help="Plan and check spotkube platforms offline.", no_args_is_help=True,
                  pretty_exceptions_enable=False, add_completion=False)
stderr = Console(stderr=True)


class Format(StrEnum):
    table = "table"
    json = "json"
    markdown = "markdown"


ProjectOption = Annotated[Path, typer.Option("--project", help="Folder with Pulumi.yaml.")]


@app.callback()
def main() -> None:
    """Plan and check spotkube platforms offline: no Pulumi CLI, cloud or credentials needed."""


def fail(message: str, code: int = 2) -> typer.Exit:
    stderr.print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


@app.command()
def plan(
    stack: Annotated[list[str] | None, typer.Option("--stack", "-s", help="Stack name(s).")] = None,
    all_stacks: Annotated[bool, typer.Option("--all", help="Every stack in the project.")] = False,
    output: Annotated[Format, typer.Option("--format", "-f")] = Format.table,
    project_dir: ProjectOption = Path("."),
) -> None:
    """Show what each stack would build: pools, resources and outputs, without a cloud."""
    try:
        project = find_project(project_dir)
        names = project.stacks() if all_stacks else list(stack or [])
        if not names:
            raise fail("name a stack with --stack NAME, or use --all")
        documents = [report.stack_document(run_stack(project, name)) for name in names]
    except SpotkubeError as err:
        raise fail(str(err)) from None
    if output is Format.json:
        typer.echo(report.to_json(documents, single=not all_stacks and len(names) == 1))
    elif output is Format.markdown:
        typer.echo(report.to_markdown(documents))
    else:
        report.render_table(documents, Console(width=200))
