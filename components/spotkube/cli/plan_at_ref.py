"""The plan of the project as it was at a git ref, for `spotkube plan --diff REF`.

The ref's tree is exported into a temporary folder (`git archive`: the committed files, nothing
untracked) and planned there by the spotkube of that tree, in a separate Python process: a pull
request that changes a component's code must show the registrations the base's code made, and one
process can't import two versions of spotkube. When the tree carries no spotkube of its own (a repo
that only imports the components), the installed spotkube plans it. Either way both sides go
through the offline engine and meet as plan JSON, which carries a schema version.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from spotkube.platform.errors import SpotkubeError
from spotkube.platform.project import Project, find_project
from spotkube.review.plan_document import BASE_SCHEMA_VERSIONS, SCHEMA_VERSION

#: Where this repository keeps the spotkube package; a tree without it plans with the installed one.
PACKAGE_FOLDER = "components"
#: This spotkube's command (pyproject.toml's [project.scripts]), as (module, attribute).
ENTRY_POINT = ("spotkube.cli.app", "app")


class RefPlanFailed(SpotkubeError):
    """The tree at the ref could not be exported or planned."""


def _git(folder: Path, *args: str) -> bytes:
    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, check=False)
    except FileNotFoundError:
        raise RefPlanFailed("--diff needs git on PATH") from None
    if done.returncode != 0:
        raise RefPlanFailed(f"git {' '.join(args)}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def resolve_commit(top: Path, ref: str) -> str:
    """The commit `ref` names, or a RefPlanFailed saying why there is none (git itself says nothing)."""
    try:
        return _git(top, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}").decode().strip()
    except RefPlanFailed:
        pass
    shallow = _git(top, "rev-parse", "--is-shallow-repository").decode().strip() == "true"
    hint = (" This clone is shallow: fetch the history first (`git fetch --unshallow`, or actions/checkout with "
            "fetch-depth: 0)." if shallow else "")
    raise RefPlanFailed(f"--diff {ref}: no commit, branch or tag of that name in {top}; give a ref `git log` "
                        f"knows, e.g. origin/main (after `git fetch`), HEAD~1 or a commit id.{hint}")


def export_tree(project: Project, ref: str, into: Path) -> Path:
    """Write the repository's files at `ref` into `into`; return where the project's folder is there."""
    try:
        top = Path(_git(project.root, "rev-parse", "--show-toplevel").decode().strip())
    except RefPlanFailed:
        raise RefPlanFailed(f"--diff {ref}: {project.root} is not in a git repository, so there is no base to "
                            "compare with") from None
    commit = resolve_commit(top, ref)
    with tarfile.open(fileobj=io.BytesIO(_git(top, "archive", "--format=tar", commit))) as archive:
        archive.extractall(into, filter="data")
    return into / project.root.resolve().relative_to(top.resolve())


def _own_spotkube(tree: Path) -> bool:
    return (tree / PACKAGE_FOLDER / "spotkube" / "__init__.py").is_file()


def _environment(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    if _own_spotkube(tree):
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree / PACKAGE_FOLDER), env.get("PYTHONPATH")]))
    return env


def _entry_point(tree: Path, ref: str) -> tuple[str, str]:
    """The `spotkube` command of the spotkube that plans the tree, as (module, attribute): the one its
    own pyproject.toml declares (the command line has moved between releases), else this one's. A
    declared module the tree lacks is refused, rather than shown as the ModuleNotFoundError its Python
    would print."""
    if not _own_spotkube(tree):
        return ENTRY_POINT
    try:
        scripts = tomllib.loads((tree / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
        declared = scripts["spotkube"]
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, KeyError, TypeError):
        return ENTRY_POINT
    match = re.fullmatch(r"([\w.]+):([\w.]+)", declared) if isinstance(declared, str) else None
    if match is None:
        return ENTRY_POINT
    module, attribute = match.groups()
    source = tree / PACKAGE_FOLDER / Path(*module.split("."))
    if not (source.with_suffix(".py").is_file() or (source / "__init__.py").is_file()):
        raise RefPlanFailed(f"--diff {ref}: the base is planned by its own spotkube ({PACKAGE_FOLDER}/spotkube at "
                            f"{ref}), whose pyproject.toml names its command {declared}, and {ref} has no module "
                            f"{module}; compare with a ref whose spotkube has its command line")
    return module, attribute


def plan_documents(
    project: Project, ref: str, stacks: Sequence[str] | None, prices: Path | None = None,
) -> list[dict[str, Any]]:
    """The plan JSON (with details) of `stacks` at `ref`, or of all its stacks when None; a stack
    the ref does not have is simply absent (the diff shows it as added). `prices` is the user's
    price file, used on both sides so the cost delta is the change's, not the prices'."""
    with tempfile.TemporaryDirectory(prefix="spotkube-diff-") as folder:
        tree = Path(folder)
        project_dir = export_tree(project, ref, tree)
        if not (project_dir / "Pulumi.yaml").is_file():
            raise RefPlanFailed(f"{ref} has no Pulumi.yaml at {project.root.name}")
        module, attribute = _entry_point(tree, ref)
        who = f"{ref}'s own spotkube" if _own_spotkube(tree) else "the installed spotkube"
        args = ["plan", "--format", "json", "--details", "--project", str(project_dir)]
        args += ["--prices", str(prices.resolve())] if prices is not None else []
        existing = find_project(project_dir).stacks()
        names = [s for s in stacks if s in existing] if stacks is not None else existing
        if not names:
            return []
        for name in names:
            args += ["--stack", name]
        done = subprocess.run(
            [sys.executable, "-c", f"import functools, importlib; functools.reduce(getattr, {attribute.split('.')!r}, "
             f"importlib.import_module({module!r}))()", *args],
            capture_output=True, text=True, cwd=project_dir, env=_environment(tree), check=False,
        )
    return _documents(ref, who, done)


def _documents(ref: str, who: str, done: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    """The stacks of the base's plan JSON; an unsafe base plan (exit 1) still has its JSON. Otherwise
    the error says what went wrong at `ref`: the base's plan failed, printed no JSON, or JSON of a
    schema version this diff can't compare."""
    # The last line that says something (typer frames its errors in a box).
    said = [line.strip("│╭╰─╮╯ ") for line in done.stderr.splitlines()]
    last = next((line for line in reversed(said) if any(c.isalnum() for c in line)), None)
    if done.returncode not in (0, 1):
        raise RefPlanFailed(f"could not plan {ref}: {who} failed (exit {done.returncode})"
                            f"{': ' + last if last else ''}")
    try:
        body = json.loads(done.stdout)
    except json.JSONDecodeError:
        raise RefPlanFailed(f"could not plan {ref}: {who} printed no plan JSON{': ' + last if last else ''}") from None
    version = body.get("schemaVersion") if isinstance(body, dict) else None
    if not isinstance(body, dict) or version not in BASE_SCHEMA_VERSIONS or not isinstance(body.get("stacks"), list):
        versions = " or ".join(map(str, BASE_SCHEMA_VERSIONS))
        printed = f"schema version {version}" if version is not None else "no schema version"
        raise RefPlanFailed(f"could not compare with {ref}: {who} printed plan JSON of {printed}, and --diff compares "
                            f"versions {versions} (this spotkube prints {SCHEMA_VERSION}); compare with a ref whose "
                            "spotkube prints one of them")
    return list(body["stacks"])
