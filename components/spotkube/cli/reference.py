"""Regenerate the configuration reference from the spec models, or check that it is up to date.

    python -m spotkube.cli.reference write    # docs/configuration.md, Pulumi.yaml, schemas/, stack modelines
    python -m spotkube.cli.reference check    # exit 1 and name the stale files, write nothing

Run from the project root (or pass --project). The text comes from `spotkube.platform.reference`;
only the parts between its markers, the schema file and each stack file's first line are written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from spotkube.clouds import CLOUDS
from spotkube.platform.reference import generated_files

app = typer.Typer(help="The configuration reference, generated from spotkube.platform.spec.", no_args_is_help=True,
                  pretty_exceptions_enable=False, add_completion=False)

ProjectOption = Annotated[Path, typer.Option("--project", help="Folder with Pulumi.yaml and docs/configuration.md.")]


def _stale(root: Path) -> dict[Path, str]:
    """The generated files whose content on disk differs, with the content they should have."""
    try:
        expected = generated_files(root, CLOUDS)
    except (OSError, ValueError) as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None
    return {path: text for path, text in expected.items() if not path.is_file() or path.read_text() != text}


def _shown(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


@app.command()
def write(project: ProjectOption = Path(".")) -> None:
    """Write every generated file that is out of date."""
    stale = _stale(project)
    for path, text in stale.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        typer.echo(f"wrote {_shown(path, project)}")
    if not stale:
        typer.echo("up to date")


@app.command()
def check(project: ProjectOption = Path(".")) -> None:
    """Exit 1 if regenerating would change a file; writes nothing."""
    stale = _stale(project)
    for path in stale:
        typer.echo(f"out of date: {_shown(path, project)}", err=True)
    if stale:
        typer.echo("run: python -m spotkube.cli.reference write", err=True)
        raise typer.Exit(1)
    typer.echo("up to date")


if __name__ == "__main__":
    app()
