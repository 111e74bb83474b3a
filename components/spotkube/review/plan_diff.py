"""What changes between two plans of the same project: `spotkube plan --diff REF`.

Both sides are plan documents in their JSON form (`PlanDocument.to_json(details=True)`), because the
base side is planned by the base tree's own spotkube in another process and arrives as JSON. The diff
names what a reviewer asks about: the resources added, removed and changed (each changed input old →
new), which changes replace a resource and why, the pools and security settings that moved, and the
monthly cost delta. Pure module: no Pulumi, no rendering.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal

from spotkube.clouds import CLOUDS
from spotkube.platform.cloud import covers
from spotkube.platform.cost.pricing import Figure
from spotkube.platform.records import record
from spotkube.review.costing import UnpricedPool

Action = Literal["add", "remove", "update", "replace"]
Status = Literal["added", "removed", "changed", "unchanged"]
#: The pool fields a reviewer reads in the plan's pool table, compared one by one.
POOL_FIELDS = ("role", "capacity", "machine", "gpu", "min", "max", "taints", "labels", "evictionPolicy",
               "maxPrice", "zones", "cloudName")


@record
class Change:
    """One value that differs: where, before and after (None for absent)."""

    path: str
    old: Any
    new: Any

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "old": self.old, "new": self.new}


@record
class ResourceDiff:
    """A resource that is added, removed, updated in place or replaced. Inputs under the resource's
    `ignoreChanges` are left out: Pulumi does not apply them."""

    type: str
    name: str
    parent: str
    action: Action
    changes: tuple[Change, ...] = ()
    #: Why the change replaces the resource (which input, and what says it replaces).
    replace_reasons: tuple[str, ...] = ()
    delete_before_replace: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "name": self.name, "parent": self.parent, "action": self.action,
                "changes": [c.to_json() for c in self.changes], "replaceReasons": list(self.replace_reasons),
                "deleteBeforeReplace": self.delete_before_replace}


@record
class NamedDiff:
    """A pool or a security setting that is added, removed or changed."""

    name: str
    action: Literal["add", "remove", "update"]
    changes: tuple[Change, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "action": self.action, "changes": [c.to_json() for c in self.changes]}


#: The idle floor's two parts, each compared on its own: what the nodes at min cost, and the fixed lines.
FloorPart = Literal["nodesIdleFloor", "fixedIdleFloor"]
#: The monthly totals a diff compares, each known or not on its own: an unpriced disk leaves the idle
#: floor unknown but not the nodes' part of it, and an unpriced pool leaves the fixed part known.
DIFF_FIGURES: tuple[Figure | FloorPart, ...] = ("idleFloor", "nodesIdleFloor", "fixedIdleFloor", "scenario")


@record
class CostSide:
    """One side's monthly totals and its unpriced pools. A stack that is absent on a side costs $0.00
    there: nothing of it exists. A total is None when an unpriced pool would add to it."""

    present: bool
    totals: Mapping[str, float | None]
    unpriced: tuple[UnpricedPool, ...] = ()
    #: The idle floor's fixed lines without a price (cluster fee, NAT, disks...), as the plan names them.
    fixed_unpriced: tuple[str, ...] = ()

    def blockers(self, figure: str) -> list[UnpricedPool]:
        """The unpriced pools that leave `figure` unknown (the nodes' part of the floor: the floor's)."""
        figure = "idleFloor" if figure == "nodesIdleFloor" else figure
        return [u for u in self.unpriced if figure in u.blocks]

    def fixed_blockers(self, figure: str) -> tuple[str, ...]:
        """The fixed lines without a price that leave `figure` unknown."""
        return self.fixed_unpriced if figure in ("idleFloor", "fixedIdleFloor") else ()

    def to_json(self) -> dict[str, Any]:
        return {"present": self.present, **{f: self.totals.get(f) for f in DIFF_FIGURES},
                "unpriced": [u.to_json() for u in self.unpriced]}


@record
class CostDelta:
    """Monthly totals before and after. A delta is a number only when both sides' totals cover every
    pool (like with like); otherwise it is None and `why_not` names the pools without a price."""

    old: CostSide
    new: CostSide

    def pair(self, figure: str) -> tuple[float | None, float | None]:
        return self.old.totals.get(figure), self.new.totals.get(figure)

    def delta(self, figure: str) -> float | None:
        old, new = self.pair(figure)
        return None if old is None or new is None else round(new - old, 2)

    def why_not(self, figure: str) -> str | None:
        """Why `figure` can't be compared: `not comparable: platform, Standard_D8s_v3 in uksouth, has no price`."""
        if self.delta(figure) is not None:
            return None
        after = self.new.blockers(figure)
        named = {(u.pool, u.machine, u.gpu) for u in after}
        before = [u for u in self.old.blockers(figure) if (u.pool, u.machine, u.gpu) not in named]
        fixed = [*self.new.fixed_blockers(figure),
                 *(t for t in self.old.fixed_blockers(figure) if t not in self.new.fixed_blockers(figure))]
        reasons = [*(u.text("has") for u in after), *(u.text("had") for u in before), *fixed]
        return "not comparable: " + ("; ".join(reasons) or "a plan by an older spotkube doesn't state it")

    @property
    def changed(self) -> bool:
        return any(self.pair(f)[0] != self.pair(f)[1] for f in DIFF_FIGURES) or (
            [u.to_json() for u in self.old.unpriced] != [u.to_json() for u in self.new.unpriced])

    def to_json(self) -> dict[str, Any]:
        figures = {f: {"old": self.pair(f)[0], "new": self.pair(f)[1], "delta": self.delta(f),
                       "comparable": self.delta(f) is not None, "whyNot": self.why_not(f)} for f in DIFF_FIGURES}
        return {**figures, "unpriced": {"old": [u.to_json() for u in self.old.unpriced],
                                        "new": [u.to_json() for u in self.new.unpriced]}}


@record
class StackDiff:
    """Everything that differs for one stack between the base and the working tree."""

    stack: str
    status: Status
    resources: tuple[ResourceDiff, ...] = ()
    pools: tuple[NamedDiff, ...] = ()
    posture: tuple[NamedDiff, ...] = ()
    cost: CostDelta | None = None
    #: Errors of the new plan that the base did not have (they fail the plan).
    new_errors: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"stack": self.stack, "status": self.status,
                "resources": [r.to_json() for r in self.resources],
                "pools": [p.to_json() for p in self.pools],
                "posture": [p.to_json() for p in self.posture],
                "cost": None if self.cost is None else self.cost.to_json(),
                "newErrors": list(self.new_errors)}


# --- Comparing --------------------------------------------------------------------------------------


def flatten(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Leaf values by path (`a.b[0].c`); an empty mapping or list is a leaf, so it still compares."""
    if isinstance(value, Mapping) and value:
        for key in sorted(value):
            yield from flatten(value[key], f"{path}.{key}" if path else str(key))
    elif isinstance(value, list) and value:
        for i, item in enumerate(value):
            yield from flatten(item, f"{path}[{i}]")
    else:
        yield path, value


def changes(old: Any, new: Any) -> tuple[Change, ...]:
    before, after = dict(flatten(old)), dict(flatten(new))
    return tuple(Change(path, before.get(path), after.get(path))
                 for path in sorted(before.keys() | after.keys()) if before.get(path) != after.get(path))


def replace_reasons(cloud: str, resource: Mapping[str, Any], diff: Sequence[Change]) -> tuple[str, ...]:
    """Why a change replaces the resource: its `replaceOnChanges` option, or an input the cloud
    fixes at creation (the cloud profile's `create_only`)."""
    reasons = []
    profile = CLOUDS.get(cloud)
    for change in diff:
        option = next((p for p in resource.get("replaceOnChanges") or () if covers(p, change.path)), None)
        if option is not None:
            reasons.append(f"{change.path}: replaceOnChanges {option}")
        elif profile is not None and profile.replaces(resource["type"], change.path):
            reasons.append(f"{change.path}: {profile.title} fixes it at creation")
    return tuple(reasons)


def _key(resource: Mapping[str, Any]) -> tuple[str, str, str]:
    return (resource.get("parent") or "", resource["type"], resource["name"])


def resource_diffs(cloud: str, old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> tuple[
        ResourceDiff, ...]:
    before, after = {_key(r): r for r in old}, {_key(r): r for r in new}
    # A resource that moved under a new parent with an alias to the old one is the same resource.
    for key, resource in list(after.items()):
        former = next((k for k in ((p, key[1], key[2]) for p in resource.get("formerParents") or ())
                       if k in before and k not in after), None)
        if key not in before and former is not None:
            before[key] = before.pop(former)
    out = []
    for key in sorted(before.keys() | after.keys()):
        parent, type_token, name = key
        if key not in before:
            out.append(ResourceDiff(type_token, name, parent, "add"))
        elif key not in after:
            out.append(ResourceDiff(type_token, name, parent, "remove"))
        else:
            ignored = after[key].get("ignoreChanges") or ()
            diff = tuple(c for c in changes(before[key].get("inputs", {}), after[key].get("inputs", {}))
                         if not any(covers(p, c.path) for p in ignored))
            if not diff:
                continue
            reasons = replace_reasons(cloud, after[key], diff)
            out.append(ResourceDiff(type_token, name, parent, "replace" if reasons else "update", diff, reasons,
                                    bool(after[key].get("deleteBeforeReplace")) and bool(reasons)))
    return tuple(out)


def _named_diffs(old: Mapping[str, Any], new: Mapping[str, Any]) -> tuple[NamedDiff, ...]:
    out = []
    for name in sorted(old.keys() | new.keys()):
        if name not in old:
            out.append(NamedDiff(name, "add", changes(None, new[name])))
        elif name not in new:
            out.append(NamedDiff(name, "remove", changes(old[name], None)))
        elif diff := changes(old[name], new[name]):
            out.append(NamedDiff(name, "update", diff))
    return tuple(out)


def _pools(document: Mapping[str, Any]) -> dict[str, Any]:
    return {p["name"]: {f: p.get(f) for f in POOL_FIELDS} for p in document.get("pools", ())}


def _posture(document: Mapping[str, Any]) -> dict[str, Any]:
    settings = {f"{c['resource']}: {s['name']}": s["value"]
                for c in document.get("posture", ()) for s in c.get("settings", ())}
    settings.update({f"add-on: {s['name']}": s["value"] for s in document.get("addons", ())})
    return settings


def cost_side(document: Mapping[str, Any] | None) -> CostSide:
    """One side's totals from its plan JSON, rebuilt from the pools so that a base planned by an older
    spotkube (which summed the priced pools only) is judged by the same rule: an unpriced pool with
    nodes at min leaves the idle floor unknown, one with scenario hours the scenario."""
    if document is None:
        return CostSide(False, dict.fromkeys(DIFF_FIGURES, 0.0))
    cost = document.get("cost") or {}
    rows = {p.get("name"): p for p in document.get("pools", ())}
    unpriced = []
    for line in cost.get("pools", ()):
        if line.get("priced"):
            continue
        row = rows.get(line.get("pool")) or {}
        blocks = ["idleFloor"] if (row.get("min") is None or row["min"] > 0) else []
        blocks += ["scenario", "onDemandEquivalent"] if (line.get("scenarioHours") or 0) > 0 else []
        gpu = next((u.get("gpu") for u in (cost.get("total") or {}).get("unpriced", ())
                    if u.get("pool") == line.get("pool")), None)
        unpriced.append(UnpricedPool(str(line.get("pool")), str(row.get("machine") or "?"), gpu,
                                     str(document.get("region", "?")), (), tuple(blocks)))
    total = cost.get("total") or {}
    fixed = tuple(str(t) for t in (cost.get("fixed") or {}).get("unpriced", ()))
    side = CostSide(True, {}, tuple(unpriced), fixed)
    # A plan that reviews no fixed lines counts none: its idle floor is its nodes'.
    stated = {**total, "fixedIdleFloor": 0.0} if cost.get("fixed") is None else total
    totals = {f: None if side.blockers(f) or side.fixed_blockers(f) else stated.get(f) for f in DIFF_FIGURES}
    return CostSide(True, totals, tuple(unpriced), fixed)


def stack_diff(stack: str, old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> StackDiff:
    """The diff of one stack; either side may be missing (a stack added or removed)."""
    if old is None and new is None:
        raise ValueError(f"stack {stack} is on neither side")
    cloud = str((new or old or {}).get("cloud"))
    cost = CostDelta(cost_side(old), cost_side(new))
    resources = resource_diffs(cloud, (old or {}).get("resources", ()), (new or {}).get("resources", ()))
    pools = _named_diffs(_pools(old or {}), _pools(new or {}))
    posture = _named_diffs(_posture(old or {}), _posture(new or {}))
    new_errors = tuple(e for e in (new or {}).get("errors", ()) if e not in (old or {}).get("errors", ()))
    if old is None:
        status: Status = "added"
    elif new is None:
        status = "removed"
    else:
        status = "changed" if resources or pools or posture or cost.changed or new_errors else "unchanged"
    return StackDiff(stack, status, resources, pools, posture, cost, new_errors)


def _titled(documents: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """Each document by the name the plan shows it under: its stack, and its cluster when the stack's
    program builds several (`dev/training`). A document from before clusters were named is its stack's."""
    per_stack = Counter(d["stack"] for d in documents)
    return {f"{d['stack']}/{d.get('cluster', '')}" if per_stack[d["stack"]] > 1 else d["stack"]: d for d in documents}


def plan_diff(old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> tuple[StackDiff, ...]:
    """Stack by stack (cluster by cluster in a stack that builds several), in name order, over either side."""
    before, after = _titled(old), _titled(new)
    return tuple(stack_diff(name, before.get(name), after.get(name)) for name in sorted(before.keys() | after.keys()))
