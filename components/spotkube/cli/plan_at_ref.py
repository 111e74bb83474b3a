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
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from spotkube.platform.errors import SpotkubeError
from spotkube.platform.project import Project, find_project
from spotkube.review.plan_document import BASE_SCHEMA_VERSIONS, SCHEMA_VERSION

#: Where this repository keeps the spotkube package; a tree without it plans with the installed one.
PACKAGE_FOLDER = "components"


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


def _environment(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    if (tree / PACKAGE_FOLDER / "spotkube" / "__init__.py").is_file():
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree / PACKAGE_FOLDER), env.get("PYTHONPATH")]))
    return env


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
        args = ["plan", "--format", "json", "--details", "--project", str(project_dir)]
        args += ["--prices", str(prices.resolve())] if prices is not None else []
        existing = find_project(project_dir).stacks()
        names = [s for s in stacks if s in existing] if stacks is not None else existing
        if not names:
            return []
        for name in names:
            args += ["--stack", name]
        done = subprocess.run(
            [sys.executable, "-c", "from spotkube.cli.app import app; app()", *args],
            capture_output=True, text=True, cwd=project_dir, env=_environment(tree), check=False,
        )
    return _documents(ref, done)


def _documents(ref: str, done: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    """The stacks of the base's plan JSON; an unsafe base plan (exit 1) still has its JSON."""
    try:
        body = json.loads(done.stdout) if done.returncode in (0, 1) else None
    except json.JSONDecodeError:
        body = None
    if not isinstance(body, dict) or body.get("schemaVersion") not in BASE_SCHEMA_VERSIONS:
        # The last line that says something (typer frames its errors in a box).
        said = [line.strip("│╭╰─╮╯ ") for line in done.stderr.splitlines()]
        last = next((line for line in reversed(said) if any(c.isalnum() for c in line)), "no plan JSON")
        versions = " or ".join(map(str, BASE_SCHEMA_VERSIONS))
        raise RefPlanFailed(f"could not plan {ref} (its spotkube must print plan JSON schema version "
                            f"{versions} with --details; this one prints {SCHEMA_VERSION}): {last}")
    return list(body["stacks"])
