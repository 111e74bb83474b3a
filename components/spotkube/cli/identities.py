"""Regenerate docs/identities.md's tables from the shipped stacks, or check that they are up to date.

    python -m spotkube.cli.identities write    # docs/identities.md, between its markers
    python -m spotkube.cli.identities check    # exit 1 when the tables would change, write nothing

Each stack is run offline (`cli.offline`), and its registrations and invokes become calls through the
cloud's profile (`review.identities`): the tables follow the program, never a list kept by hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from spotkube.clouds import CLOUDS
from spotkube.components.offline import run_stack
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.identities import Call
from spotkube.platform.project import Project, find_project
from spotkube.platform.reference import replace_between
from spotkube.review.identities import END, REGENERATE, START, cloud_section, generated, stack_calls

DOC = Path("docs") / "identities.md"

app = typer.Typer(help="docs/identities.md's tables, generated from the stacks' offline runs.", no_args_is_help=True,
                  pretty_exceptions_enable=False, add_completion=False)
ProjectOption = Annotated[Path, typer.Option("--project", help="Folder with Pulumi.yaml.")]


def tables(project: Project) -> str:
    """The generated part: a section per cloud, from every stack of that cloud in the project."""
    runs: dict[str, list[tuple[str, list[Call]]]] = {cloud: [] for cloud in CLOUDS}
    for stack in project.stacks():
        run = run_stack(project, stack)
        runs[run.spec.cloud].append((stack, stack_calls(run.spec.cloud, run.registrations, run.invokes)))
    return generated([cloud_section(cloud, runs[cloud]) for cloud in CLOUDS])


def expected(project: Project) -> tuple[Path, str]:
    """docs/identities.md as it should be, and its path."""
    path = project.root / DOC
    return path, replace_between(path.read_text(), START, END, tables(project), str(DOC))


def _load(project_dir: Path) -> tuple[Path, str]:
    try:
        return expected(find_project(project_dir))
    except (SpotkubeError, OSError, ValueError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None


@app.command()
def write(project: ProjectOption = Path(".")) -> None:
    """Write docs/identities.md when its tables are out of date."""
    path, text = _load(project)
    if path.read_text() == text:
        typer.echo("up to date")
        return
    path.write_text(text)
    typer.echo(f"wrote {DOC}")


@app.command()
def check(project: ProjectOption = Path(".")) -> None:
    """Exit 1 if regenerating would change docs/identities.md; writes nothing."""
    path, text = _load(project)
    if path.read_text() != text:
        typer.echo(f"out of date: {DOC}\nrun: {REGENERATE}", err=True)
        raise typer.Exit(1)
    typer.echo("up to date")


if __name__ == "__main__":
    app()
