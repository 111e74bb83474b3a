"""Stack names as a user types them after `-s/--stack`: `NAME`, `ORG/NAME` or `ORG/PROJECT/NAME`.

Only NAME picks the file; a PROJECT other than Pulumi.yaml's is refused rather than quietly planning
this project's stack of that name, and every part must be a name Pulumi accepts, which also keeps a
stack name from being a path (`x/../../y`). Pure module: no Pulumi.
"""

from __future__ import annotations

import re

from spotkube.platform.errors import SpotkubeError
from spotkube.platform.input_messages import shown
from spotkube.platform.project import Project

#: Pulumi's own rule for a stack name (the same for the organisation and project parts here).
NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")


class StackNameError(SpotkubeError):
    """A `--stack` value that names no stack of this project."""


def _valid(part: str) -> bool:
    return NAME.fullmatch(part) is not None and part not in (".", "..")


def check_stack_name(name: str, option: str = "--stack") -> str:
    """`name` if it is a bare stack name Pulumi accepts, else a StackNameError naming `option`."""
    if not _valid(name):
        raise StackNameError(f"{option} {shown(name)}: not a stack name; use letters, digits, '-', '_' and '.' "
                             "(at most 100)")
    return name


def stack_name(project: Project, given: str, option: str = "--stack") -> str:
    """The stack part of `given`, checked against `project`: StackNameError (exit 2) for a malformed
    name or a PROJECT other than Pulumi.yaml's."""
    parts = given.split("/")
    if len(parts) > 3 or not all(_valid(part) for part in parts):
        raise StackNameError(f"{option} {shown(given)}: not a stack name; use NAME, ORG/NAME or ORG/PROJECT/NAME, each "
                             "part letters, digits, '-', '_' and '.' (at most 100)")
    if len(parts) == 3 and parts[1] != project.name:
        raise StackNameError(f"{option} {given}: project {parts[1]!r} is not this project; "
                             f"{project.relative(project.root / 'Pulumi.yaml')} names it {project.name!r}")
    return parts[-1]
