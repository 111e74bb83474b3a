"""What both clouds' pool components share: reading their args, and reporting each pool to the review.

A pool component's args are one entry of a cluster's `gpu_pools` plus the keys that name the cluster it
joins; the pool is validated as the one pool of a platform (`validation.parse_node_pool`), so it meets
every rule a pool of a spotkube cluster meets, before anything is registered.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pulumi

from spotkube.clouds import CLOUDS, plan_platform, profile
from spotkube.platform.contract import PoolContract
from spotkube.platform.errors import Problem, SpecError
from spotkube.platform.input_messages import kind, shown
from spotkube.platform.plan import PlatformPlan, PoolPlan
from spotkube.platform.records import record
from spotkube.platform.validation import parse_node_pool
from spotkube.shell.common import (
    checked_args,
    child,
    is_output,
    pool_watchers,
    refuse_outputs,
    validated,
    wired_cluster_args,
)


@record
class PoolBuild:
    """What a pool component builds from: the plan its pool belongs to (its cluster's, or the one-pool
    platform of a pool on another cluster), the pool, and the target keys as given (Outputs included)."""

    plan: PlatformPlan
    pool: PoolPlan
    target: Mapping[str, Any]
    #: Whether the pool joins a cluster spotkube didn't make here (the component's own args), which the
    #: review then reviews as an external cluster.
    external: bool

    @property
    def contract(self) -> PoolContract:
        return self.pool.contract


def pool_from_args(cloud: str, args: object, typed: type, where: str) -> PoolBuild:
    """A pool component's args, checked and planned before anything is registered: only the target keys
    typed `Input[...]` may be Outputs (the cluster's id, the project), every other key decides the pool."""
    facts = profile(cloud).node_pool
    inputs = {key.name for key in facts.target if key.annotation.startswith("Input[")}
    placeholders = {key: placeholder for key, (_, placeholder) in wired_cluster_args(cloud).items()}

    def parse() -> PoolBuild:
        values = checked_args(args, typed, where)
        missing = [key.name for key in facts.target if key.required and key.name not in values]
        if missing:
            raise SpecError(where, [Problem(key, "is required: " + next(
                t.description for t in facts.target if t.name == key)) for key in missing])
        untyped = [key for key in facts.target if key.name in values and not is_output(values[key.name])
                   and not (isinstance(values[key.name], str) and values[key.name])]
        if untyped:
            raise SpecError(where, [Problem(key.name, f"{shown(values[key.name])} is "
                                            f"{'empty' if values[key.name] == '' else kind(values[key.name])}; "
                                            f"give text: {key.description}") for key in untyped])
        plain = dict(values)
        for key in facts.target:
            if key.name in inputs and is_output(plain.get(key.name)):
                leaf = (key.spec_key or "").rpartition(".")[2]
                if leaf in placeholders:
                    plain[key.name] = placeholders[leaf]
                else:
                    plain.pop(key.name)
        refuse_outputs({k: v for k, v in plain.items() if k not in inputs}, where)
        spec = parse_node_pool(plain, profile(cloud), where, CLOUDS)
        planned = plan_platform(spec)
        added = next(p for p in planned.node_pools if p.role in ("gpu", "batch"))
        # A spot or GPU pool keeps its own name in the cloud, on every cloud (only pools that host the
        # control plane are versioned), and the cloud writes that name into its node-pool label.
        plan = planned.with_cloud_names({added.name: added.name})
        pool = next(p for p in plan.pools if p.name == added.name)
        return PoolBuild(plan, pool, {k: values[k] for k in (t.name for t in facts.target) if k in values}, True)

    return validated(parse)


def pool_builds(pools: object, source: str, what: str) -> list[PoolBuild]:
    """What each of an add-on's pool components (`NvidiaDevicePlugin.for_pools`, `Kueue.for_pools`) was
    built from; anything else is refused with `source` and what the add-on serves (`what`)."""
    found = [getattr(pool, "build", None) for pool in pools] if isinstance(pools, list | tuple) else []
    builds = [b for b in found if isinstance(b, PoolBuild)]
    if not builds or len(builds) != len(found):
        components = " or ".join(cloud.node_pool.component for cloud in CLOUDS.values())
        raise pulumi.RunError(f"{source}: pools: give a list of the pool components {what} ({components})")
    clouds = sorted({b.plan.cloud for b in builds})
    # An add-on serves one cluster: pools whose plain ids name two can't share it (an Output is the cloud's).
    ids = {str(b.target["cluster_id"]).lower(): str(b.target["cluster_id"]) for b in builds
           if b.external and isinstance(b.target.get("cluster_id"), str)}
    if len(clouds) > 1 or len(ids) > 1:
        where = " and ".join(clouds) if len(clouds) > 1 else " and ".join(sorted(ids.values()))
        raise SpecError(source, [Problem("pools", f"are on {where}: one add-on serves one cluster; make one per "
                                         "cluster")])
    return builds


def report_pool(component: pulumi.ComponentResource, build: PoolBuild) -> None:
    """Tell the review (`shell.common.built_clusters`) about a pool a program added to a cluster
    spotkube didn't make here; a spotkube cluster's own pools are reviewed with their cluster."""
    if build.external:
        for watcher in pool_watchers():
            watcher.pools.append((component, build))


def pool_options(component: pulumi.ComponentResource, opts: pulumi.ResourceOptions | None,
                 after: list[pulumi.Resource], moved_from: pulumi.Resource | None,
                 **options: Any) -> pulumi.ResourceOptions:
    """The pool resource's options: a child of its component that waits for `after` and for whatever the
    component's own `depends_on` names (Pulumi doesn't pass a component's dependencies on to its
    children), with an alias to its parent before it moved under the component (`moved_from`), so an
    existing stack keeps its pool instead of replacing it."""
    own = child(component, depends_on=after,
                aliases=[pulumi.Alias(parent=moved_from)] if moved_from is not None else None, **options)
    if opts is None or not opts.depends_on:
        return own
    return pulumi.ResourceOptions.merge(own, pulumi.ResourceOptions(depends_on=opts.depends_on))
