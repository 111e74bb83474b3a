"""The plan document of each spotkube cluster a program built, from what the program registered.

One source for every part of the review: the pools are read back from the registered inputs, and
the cost, the quota, the fallback, the preflight and the policy all judge those very pools and
resources, never a second plan made from the settings. A program may build any number of clusters
under any names, wrapped in its own components: each gets its own document, over the resources it
owns (those below it in the tree, and those deployed through its Kubernetes provider, such as the
add-ons). The stack's other resources are listed by type. Pure module: no Pulumi.
"""

from __future__ import annotations

import dataclasses
import functools
from collections import defaultdict
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any, Protocol

from spotkube.clouds import RegisteredPool, profile, registered_pools, upgrade_exposures
from spotkube.platform import contract
from spotkube.platform.contract import PoolContract
from spotkube.platform.cost import PriceTable
from spotkube.platform.errors import SpotkubeError
from spotkube.platform.maintenance import UpgradeExposure, window_of
from spotkube.platform.plan_scope import one_plan
from spotkube.platform.posture import ClusterPosture, Setting
from spotkube.platform.preflight import Deployment, ExternalCluster
from spotkube.platform.registration import BuiltCluster, Invoke, Registration, StackOutput
from spotkube.platform.spec import PlatformSpec
from spotkube.platform.warnings import LOGGED_PLAN_WARNING, PlanWarning, from_log
from spotkube.review.addons import addon_settings
from spotkube.review.catalog_check import catalog_note
from spotkube.review.costing import price_pools
from spotkube.review.fallback import stack_fallback
from spotkube.review.fixed_costs import stack_fixed_costs
from spotkube.review.placements import StackPlacements, stack_placements
from spotkube.review.plan_document import OtherResources, PlanDocument, pool_rows
from spotkube.review.policy_rules import check_outputs, check_registrations, check_stack
from spotkube.review.preflight import preflight
from spotkube.review.quota import stack_quota
from spotkube.review.resource_list import PROVIDER_PREFIX, resource_list
from spotkube.review.startup import pool_startups


class ProgramRun(Protocol):
    """What one offline run of a stack's program gives the review (`spotkube.components.offline.StackRun`)."""

    @property
    def stack(self) -> str: ...
    @property
    def source(self) -> str: ...
    @property
    def clusters(self) -> Sequence[BuiltCluster]: ...
    @property
    def registrations(self) -> Sequence[Registration]: ...
    @property
    def outputs(self) -> Mapping[str, StackOutput]: ...
    @property
    def log(self) -> Sequence[str]: ...
    @property
    def invokes(self) -> Sequence[Invoke]: ...
    @property
    def shown_inputs(self) -> Mapping[str, Any]: ...
    @property
    def seen_by_pack(self) -> Sequence[Registration]: ...
    @property
    def stack_spec(self) -> PlatformSpec | None: ...


def owners(registrations: Sequence[Registration], clusters: Sequence[BuiltCluster]) -> dict[str, str | None]:
    """Each registration's cluster (by URN), or None: a cluster owns what is below it in the tree (or
    below one of its members) and what deploys through a provider it owns; a component of the program's
    own (an add-on, a wrapper) belongs to the one cluster its children belong to."""
    by_urn = {r.urn: r for r in registrations}
    wanted = {urn: c.urn for c in clusters for urn in (c.urn, *c.members)}

    @functools.cache
    def owner(urn: str) -> str | None:
        if urn in wanted:
            return wanted[urn]
        found = by_urn.get(urn)
        if found is None:
            return None
        via = [found.parent, *(ref.rpartition("::")[0] for ref in (found.provider, *found.providers) if ref)]
        return next((o for o in map(owner, via) if o is not None), None)

    result = {r.urn: owner(r.urn) for r in registrations}
    children: dict[str, list[str]] = defaultdict(list)
    for r in registrations:
        children[r.parent].append(r.urn)

    def below(urn: str) -> set[str | None]:
        return {result[c] for c in children[urn]} | {o for c in children[urn] if result[c] is None for o in below(c)}

    for r in registrations:
        if result[r.urn] is None and not r.custom:
            found = below(r.urn) - {None}
            result[r.urn] = found.pop() if len(found) == 1 else None
    return result


def _posture(cloud: str, registrations: Sequence[Registration]) -> tuple[ClusterPosture, ...]:
    read = profile(cloud).read_posture
    found = (read(r.type, r.name, r.inputs, r.protect) for r in registrations)
    return tuple(sorted((p for p in found if p is not None), key=lambda p: p.resource))


def _supply(cloud: str, registrations: Sequence[Registration]) -> tuple[Setting, ...]:
    """Each GPU pool's capacity reservation and how its nodes get images, and the registry grants, as registered."""
    read = profile(cloud).read_supply
    return tuple(read([(r.type, r.name, r.inputs) for r in registrations])) if read else ()


def _program_warnings(log: Sequence[str], others: Sequence[BuiltCluster]) -> tuple[PlanWarning, ...]:
    """The program's own warnings, with the ids they are logged with, less the plan warnings its
    clusters log for `pulumi up` (cost, fallback, security): the plan computes those itself, with the
    price file its user chose. A warning another cluster logs is that cluster's."""
    tag = f": {LOGGED_PLAN_WARNING}: "
    theirs = tuple(f"{c.label}: " for c in others if c.label)
    return tuple(from_log(line.removeprefix("warning: ")) for line in log
                 if line.startswith("warning") and tag not in line and not any(t in line for t in theirs))


def _plan_order(pools: Sequence[RegisteredPool], cluster: BuiltCluster) -> list[RegisteredPool]:
    """The registered pools in the order the cluster's contracts list them (the plan's: system, platform,
    then the stack's own order), as the cost lists them."""
    order = {c.name: i for i, c in enumerate(cluster.contracts or ())}
    return sorted(pools, key=lambda pool: order.get(pool.name, len(order)))


def _others(registrations: Sequence[Registration]) -> tuple[OtherResources, ...]:
    by_type: dict[str, list[str]] = defaultdict(list)
    for r in registrations:
        if not r.type.startswith(PROVIDER_PREFIX):
            by_type[r.type].append(r.name)
    return tuple(OtherResources(t, tuple(sorted(names))) for t, names in sorted(by_type.items()))


def _upgrades(spec: PlatformSpec, seen_by_pack: Sequence[Registration]) -> tuple[UpgradeExposure, ...]:
    """Each pool's exposure as registered, with the window as the stack declared it wherever the
    cloud registered it in other terms (GKE's, in UTC), so the plan shows the local and the cloud's."""
    window = spec.cluster.maintenance.window
    declared = window_of(window) if window is not None else None
    return tuple(dataclasses.replace(u, declared=declared) if u.window and u.window != declared else u
                 for u in upgrade_exposures([(r.type, r.name, r.inputs) for r in seen_by_pack]))


def _deployment(run: ProgramRun, cluster: BuiltCluster, mine: Sequence[Registration]) -> Deployment:
    """What the preflight judges of one cluster, with where its fixes go: the stack file's keys when the
    stack describes the platform, else the component's args, else (a cluster spotkube didn't make) the
    program's own resources."""
    if run.stack_spec is not None:
        return Deployment(mine, list(run.invokes), cluster.spec, run.source)
    if cluster.external:
        return Deployment(mine, list(run.invokes), cluster.spec, f"{run.source} (cluster {cluster.name})", "python",
                          external=True)
    return Deployment(mine, list(run.invokes), cluster.spec, f"{cluster.label} args", "python")


def registered_contract(cloud: str, region: str, pool: RegisteredPool) -> PoolContract:
    """The contract of a pool spotkube didn't make, from its registration: the labels its nodes carry
    (declared, the cloud's own, the kubelet's) and its taints, so workloads placed on it can be judged."""
    facts = profile(cloud)
    # Its GPU, as the cloud's catalog knows the machine: the cloud labels a GPU node by itself.
    gpu = facts.machine_gpu(pool.machine) if pool.machine and pool.has_gpu else None
    capacity, accelerator = pool.capacity, gpu[0] if gpu else None
    known = contract.well_known_labels(pool.machine, facts.machine_arch(pool.machine), region) if pool.machine else {}
    labels = {**known, **pool.labels, **contract.cloud_added_labels(cloud, pool.cloud_name, capacity, accelerator)}
    role = "system" if pool.system else "gpu" if pool.has_gpu else "batch"
    return PoolContract(pool.cloud_name, role, capacity, accelerator, pool.gpu_count, labels,
                        tuple(sorted(pool.parsed_taints, key=str)))


def _contracts(cloud: str, region: str, cluster: BuiltCluster, context: Sequence[Registration]) -> list[PoolContract]:
    """The cluster's pool contracts, and on an external cluster those of the pools its own resource
    registers (`context`: the team's system pool), which the add-ons may be placed on."""
    return [*(cluster.contracts or ()), *(registered_contract(cloud, region, pool) for r in context
                                         for pool in registered_pools(r.type, r.name, r.inputs))]


def _document(run: ProgramRun, cluster: BuiltCluster, owner: Mapping[str, str | None],
              table: PriceTable | None, hours: Mapping[str, Decimal] | None) -> PlanDocument:
    spec = cluster.spec
    mine = [r for r in run.registrations if owner[r.urn] == cluster.urn]
    seen_by_pack = [r for r in run.seen_by_pack if owner[r.urn] == cluster.urn]
    # The policy pack judges every resource of a stack: what no cluster owns is judged with each cluster.
    judged = [r for r in run.seen_by_pack if owner[r.urn] in (cluster.urn, None)]
    # An external cluster's own resource, when the program registers it: read, never owned.
    context = [r for r in run.seen_by_pack if r.urn in cluster.context]
    contracts = _contracts(spec.cloud, spec.region, cluster, context) if cluster.contracts is not None else None
    pools = pool_rows(spec.cloud, mine, contracts)
    fallback = stack_fallback(spec.cloud, [*context, *seen_by_pack], pools)
    unknown = StackPlacements(notes=[f"placements unknown: {cluster.name}'s pool_contracts output can't be read"])
    placements = (unknown if contracts is None
                  else stack_placements(spec.cloud, mine, contracts, spec.kubeflow, spec.kueue, spec.training))
    return PlanDocument(
        stack=run.stack,
        cloud=spec.cloud,
        region=spec.region,
        environment=spec.environment,
        pools=pools,
        resources=resource_list(mine, run.shown_inputs),
        outputs={name: out.secret for name, out in sorted(run.outputs.items())},
        cost=dataclasses.replace(price_pools(spec, _plan_order(pools, cluster), hours=hours, table=table),
                                 fixed=stack_fixed_costs(spec, mine)),
        placements=placements,
        preflight=tuple(preflight(_deployment(run, cluster, mine))),
        posture=_posture(spec.cloud, mine),
        addons=addon_settings(spec, mine),
        supply=_supply(spec.cloud, mine),
        policy=tuple(sorted({*check_registrations(judged), *check_outputs(dict(run.outputs))},
                            key=lambda f: (f.rule, f.message))),
        program_warnings=_program_warnings(run.log, [c for c in run.clusters if c is not cluster]),
        fallback=fallback,
        quota=stack_quota(spec.cloud, pools),
        acknowledgements=spec.acknowledgements,
        catalog=catalog_note(spec),
        upgrades=_upgrades(spec, seen_by_pack),
        advisories=tuple(sorted(set(check_stack(judged)), key=lambda f: (f.rule, f.message))),
        cluster=cluster.name,
        shares_stack=len(run.clusters) > 1,
        others=_others([r for r in run.registrations if owner[r.urn] is None]),
        startup=pool_startups(spec, mine, pools, fallback),
        external=tuple(profile(spec.cloud).preflight.external_cluster(
            ExternalCluster(cluster.name, spec, mine, context))) if cluster.external else None,
    )


def stack_documents(
    run: ProgramRun, table: PriceTable | None = None, hours: Mapping[str, Decimal] | None = None,
) -> list[PlanDocument]:
    """Everything the plan says about each cluster the stack's program builds, in the order it built
    them. The pools show the very labels the cluster's `pool_contracts` output gives to workloads;
    the policy findings are the pack's, over the inputs as it sees them. `hours` overrides the cost
    scenario per pool (`spotkube cost --hours`). Each registration's pools are read once, however many
    judges read them (`plan_scope`)."""
    owner = owners(run.registrations, run.clusters)
    with one_plan():
        return [_document(run, cluster, owner, table, hours) for cluster in run.clusters]


def stack_document(run: ProgramRun, table: PriceTable | None = None) -> PlanDocument:
    """The document of a stack whose program builds one cluster (this repository's stacks)."""
    documents = stack_documents(run, table)
    if len(documents) != 1:
        raise SpotkubeError(f"{run.source}: the program builds {len(documents)} spotkube clusters; "
                            "review them with stack_documents")
    return documents[0]
