"""The plan's resource list: every resource and component the program registers, nested ones
included, each with what it is and, for a component, what it expands to.

A component's children are listed under it (its note counts them by type). A remote component whose
children only exist at deploy time, such as a kustomize Directory that the Kubernetes provider
renders, says what it renders instead. Pure module: no Pulumi.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from spotkube.platform.addons import kfp_transforms, trainer_transforms
from spotkube.platform.registration import Registration
from spotkube.review.placements import DIRECTORY_TYPE, is_kueue_manifest, registered_runtimes

Kind = Literal["resource", "component", "provider"]
PROVIDER_PREFIX = "pulumi:providers:"


@dataclass(frozen=True, order=True)
class Resource:
    """One registration: its place in the tree (`path`, the names from the stack's top component
    down to it), and the options that decide how a change to it is applied. `inputs` are the
    registered inputs with secrets already masked; they are printed only with `--details`."""

    path: tuple[str, ...]
    type: str
    name: str
    kind: Kind = "resource"
    note: str | None = None
    protect: bool = False
    replace_on_changes: tuple[str, ...] = ()
    delete_before_replace: bool = False
    ignore_changes: tuple[str, ...] = ()
    inputs: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)
    #: The names of the parents it had before it moved under this one (its aliases keep it).
    former_parents: tuple[str, ...] = ()

    @property
    def parent(self) -> str:
        return self.path[-2] if len(self.path) > 1 else ""

    @property
    def key(self) -> tuple[str, str, str]:
        """What identifies the resource across two plans (Pulumi's URN, without project and stack)."""
        return (self.parent, self.type, self.name)

    def to_json(self, details: bool) -> dict[str, Any]:
        row: dict[str, Any] = {"type": self.type, "name": self.name, "kind": self.kind, "parent": self.parent,
                               "note": self.note, "protect": self.protect,
                               "replaceOnChanges": list(self.replace_on_changes),
                               "deleteBeforeReplace": self.delete_before_replace,
                               "ignoreChanges": list(self.ignore_changes)}
        if self.former_parents:
            row["formerParents"] = list(self.former_parents)
        if details:
            row["inputs"] = self.inputs
        return row


def _kind(registration: Registration) -> Kind:
    if registration.type.startswith(PROVIDER_PREFIX):
        return "provider"
    return "resource" if registration.custom else "component"


def _short(type_token: str) -> str:
    return type_token.rpartition(":")[2]


def _note(registration: Registration, inputs: Mapping[str, Any], children: Sequence[Registration]) -> str | None:
    if _kind(registration) != "component":
        return None
    if registration.type == DIRECTORY_TYPE:
        directory = str(inputs.get("directory"))
        note = (f"rendered by the Kubernetes provider at deploy time from {directory}; its objects are not "
                "visible offline")
        if kfp_transforms.PLATFORM_AGNOSTIC_PATH in directory or trainer_transforms.is_manifest_url(directory):
            note += " (its Deployments are described under where workloads land)"
        return note
    runtimes = registered_runtimes([registration])
    if runtimes:
        names = ", ".join(str((r.get("metadata") or {}).get("name")) for r in runtimes)
        return (f"applied by the Kubernetes provider at deploy time: {len(runtimes)} × ClusterTrainingRuntime "
                f"({names}), described under where workloads land")
    if is_kueue_manifest(registration):
        return (f"rendered by the Kubernetes provider at deploy time from {inputs.get('file')}; its objects are not "
                "visible offline (its Deployment is described under where workloads land)")
    if not children:
        return "expands to nothing on this stack"
    counts = Counter(_short(child.type) for child in children)
    return "expands to " + ", ".join(f"{n} × {t}" for t, n in sorted(counts.items()))


def resource_list(
    registrations: Sequence[Registration], inputs: Mapping[str, Mapping[str, Any]],
) -> tuple[Resource, ...]:
    """Every registration as a `Resource`, sorted by its place in the tree so that two runs give the
    same order (the mocks record registrations from worker threads). `inputs` maps a URN to the
    inputs to show, secrets masked."""
    by_urn = {r.urn: r for r in registrations}
    children: dict[str, list[Registration]] = {}
    for registration in registrations:
        children.setdefault(registration.parent, []).append(registration)

    def path(registration: Registration) -> tuple[str, ...]:
        parent = by_urn.get(registration.parent)
        return (*path(parent), registration.name) if parent else (registration.name,)

    return tuple(sorted(
        Resource(path(r), r.type, r.name, _kind(r), _note(r, inputs.get(r.urn, {}), children.get(r.urn, [])),
                 r.protect, tuple(r.replace_on_changes), r.delete_before_replace, tuple(r.ignore_changes),
                 inputs.get(r.urn, {}), tuple(urn.rpartition("::")[2] for urn in r.moved_from))
        for r in registrations
    ))
