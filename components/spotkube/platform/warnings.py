"""A warning of the plan, with the stable id a stack acknowledges it by.

`spotkube plan --strict` gates CI, so a team accepts one warning by its id without switching the gate
off: a kind in kebab case, optionally `:subject` (`fallback-no-on-demand:nvidia-l4`); the bare kind
covers every subject. A program logs one with `pulumi.log.warn(tagged(id, message))`, which the
offline plan reads back (`from_log`); an untagged line shows as `program-warning`. Pure module.
"""

from __future__ import annotations

import re
from typing import Any

from spotkube.platform.records import record

#: A warning id: a kebab-case kind, then optionally `:` and a subject (a pool, a GPU type, an id).
ID_PATTERN = r"^[a-z][a-z0-9]*(-[a-z0-9]+)*(:[A-Za-z0-9][A-Za-z0-9._/:-]*)?$"
#: The id of a program log warning that carries no `[id]` tag of its own.
UNTAGGED = "program-warning"
#: How a cluster component tags the plan's warnings it logs under `pulumi up`
#: (`AksGpuCluster 'ml': plan warning: cost: ...`). The offline plan computes them itself, with the
#: price file its user chose, so it leaves these log lines out rather than show each warning twice.
LOGGED_PLAN_WARNING = "plan warning"

_TAG = re.compile(r"^\[(?P<id>[a-z][a-z0-9:._/-]*)\] (?P<message>.*)$", re.DOTALL)


@record
class PlanWarning:
    """One warning: its stable `id` and the sentence a reader sees."""

    id: str
    message: str

    def covered_by(self, acknowledged_id: str) -> bool:
        """Whether an acknowledgement of `acknowledged_id` accepts this warning: the same id, or the
        kind this warning's id qualifies with a subject."""
        return self.id == acknowledged_id or self.id.startswith(acknowledged_id + ":")

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "message": self.message}

    def __str__(self) -> str:
        return f"[{self.id}] {self.message}"


def slug(text: str) -> str:
    """A name as an id part: `API server` -> `api-server`, `Entra ID / RBAC` -> `entra-id-rbac`."""
    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))


def tagged(warning_id: str, message: str) -> str:
    """The text a program logs so the plan reads the warning's id back: `[id] message`."""
    if not re.fullmatch(ID_PATTERN, warning_id):
        raise ValueError(f"{warning_id!r} is not a warning id (kebab case, then optionally :subject)")
    return f"[{warning_id}] {message}"


def from_log(text: str) -> PlanWarning:
    """A program's logged warning: its `[id]` tag when it has one, else `program-warning`."""
    match = _TAG.match(text)
    if match and re.fullmatch(ID_PATTERN, match["id"]):
        return PlanWarning(match["id"], match["message"])
    return PlanWarning(UNTAGGED, text)
