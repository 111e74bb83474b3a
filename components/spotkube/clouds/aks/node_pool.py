"""`AksGpuNodePool`: one spot or on-demand pool, GPU or CPU, on any AKS cluster.

A team that already runs AKS (made with the Azure Verified Module, `az aks create` or its own code) adds
spotkube's pools to it; `AksGpuCluster` builds its own pools with this same component. Every input comes
from `resources.agent_pool_inputs`, as for a pool of a spotkube cluster.

Like every module that defines a component, it does without `from __future__ import annotations`:
Pulumi's schema analyzer needs the `args` annotation as a real TypedDict, not a string.
"""

from typing import Any

import pulumi
import pulumi_azure_native as azure

from spotkube.clouds.aks import resources
from spotkube.clouds.aks.args import AksGpuNodePoolArgs
from spotkube.clouds.aks.spec import AksSpec
from spotkube.platform.errors import Problem, SpecError
from spotkube.platform.records import record
from spotkube.shell.common import built_from, then, validated
from spotkube.shell.outputs import PoolContractOutput
from spotkube.shell.pools import PoolBuild, pool_from_args, pool_options, report_pool

#: Why a pool on another cluster can't create its capacity reservation group.
RESERVATION_CREATE_REFUSAL = (
    "is refused on a cluster spotkube didn't make: AKS places reserved VMs as the cluster's own user-assigned "
    "identity, which needs Contributor on the group's resource group, and only the cluster's owner can grant that; "
    "create the group (and the grant) beside the cluster and give its id: capacity_reservation_group.id")


@record
class AgentPoolTarget:
    """The cluster an AgentPool joins, as azure-native takes it, and how the pool is chained: AKS runs one
    agent-pool operation on a cluster at a time (409 OperationNotAllowed, Azure/AKS#1913)."""

    resource_group_name: pulumi.Input[str]
    cluster_name: pulumi.Input[str]
    reservation_group_id: pulumi.Input[str] | None = None
    #: The subnets of the team's virtual network the nodes and the pods join (None: AKS's own network).
    vnet_subnet_id: pulumi.Input[str] | None = None
    pod_subnet_id: pulumi.Input[str] | None = None
    #: The resources the AgentPool waits for (the pool before it on the same cluster).
    after: tuple[pulumi.Resource, ...] = ()
    #: The AgentPool's parent before it moved under this component (an `AksGpuCluster`), kept as an alias
    #: so an existing stack keeps its pool.
    moved_from: pulumi.Resource | None = None


class AksGpuNodePool(pulumi.ComponentResource):
    """One AKS node pool, spot or on-demand, GPU or CPU, scaling min..max, on any AKS cluster.

    It carries everything a pool of an `AksGpuCluster` carries: the scheduling contract's labels and
    taints (AKS's own spot label and taint repeated, so no preview shows a diff), spot priority, eviction
    policy and max price, autoscaling from `min` with `count` left to the autoscaler, upgrade settings,
    MIG, and a capacity reservation group given by id. Create-only fields replace the pool.

    What it registers: one `AgentPool`, named as this component, in the cluster `cluster_id` names.

    Its args are `AksGpuNodePoolArgs`: `cluster_id` (an Output is fine), `region`, on a cluster in your
    own virtual network `vnet_subnet_id` (and `pod_subnet_id`), and the keys of one entry of
    `AksGpuCluster`'s `gpu_pools`; they are checked before anything is registered. AKS runs one
    pool operation per cluster at a time: give a second pool on the same cluster
    `depends_on=[first_pool]`.

    What it can't set, because it is the cluster's (`spotkube plan` names each as a finding): the
    autoscaler's `expander: priority` and its priority ConfigMap (spot first, then on-demand), AcrPull for
    the cluster's kubelet identity on private registries, and the network the API server is reached from.

    Outputs:

    - `contract`: the pool's name, capacity, GPU, labels and taints, for the add-ons
      (`NvidiaDevicePlugin.for_pools`, `Kueue`) and pipeline steps.
    - `pool_name`: the AgentPool's name in AKS.
    """

    contract: pulumi.Output[PoolContractOutput]
    """The pool's scheduling contract: labels and taints to target it."""
    pool_name: pulumi.Output[str]
    """The AgentPool's name in AKS."""

    def __init__(
        self, name: str, args: AksGpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        """Check the args and register the pool; bad args end the program with one line naming the key,
        and nothing is registered.

        :param name: the component's name, and the AgentPool resource's.
        :param args: the pool's typed args, `AksGpuNodePoolArgs`.
        :param opts: Pulumi's resource options (`depends_on` the pool before it on the same cluster).
        """
        where = f"AksGpuNodePool {name!r} args"
        build = pool_from_args("aks", args, AksGpuNodePoolArgs, where)
        self._build(name, (build, validated(lambda: _external_target(build, where))), opts)

    @classmethod
    def on_cluster(cls, name: str, build: PoolBuild, target: AgentPoolTarget,
                   opts: pulumi.ResourceOptions | None = None) -> "AksGpuNodePool":
        """A pool of an `AksGpuCluster`, planned with its cluster."""
        return built_from(cls, name, (build, target), opts)

    def _build(self, name: str, value: tuple[PoolBuild, AgentPoolTarget], opts: pulumi.ResourceOptions | None) -> None:
        build, target = value
        super().__init__("spotkube:index:AksGpuNodePool", name, {}, opts)
        pool = build.pool
        agent_pool = azure.containerservice.AgentPool(
            name,
            resource_group_name=target.resource_group_name,
            resource_name_=target.cluster_name,
            **resources.agent_pool_inputs(pool, target.reservation_group_id),
            **{key: value for key, value in (("vnet_subnet_id", target.vnet_subnet_id),
                                             ("pod_subnet_id", target.pod_subnet_id)) if value is not None},
            opts=pool_options(self, opts, list(target.after), target.moved_from,
                              ignore_changes=list(resources.AGENT_POOL_IGNORED),
                              replace_on_changes=list(resources.CREATE_ONLY_POOL_FIELDS),
                              delete_before_replace=not pool.hosts_control_plane),
        )
        self.agent_pool = agent_pool
        self.build = build
        report_pool(self, build)
        self.contract = agent_pool.id.apply(lambda _: build.contract.to_json())
        self.pool_name = agent_pool.id.apply(lambda _: pool.cloud_name)
        self.register_outputs({"contract": self.contract, "poolName": self.pool_name})


def _external_target(build: PoolBuild, where: str) -> AgentPoolTarget:
    """The cluster a pool of the component's own args joins, read from `cluster_id` (now, or once the
    Output resolves), and its reservation group when the pool names one."""
    spec = build.plan.spec
    assert isinstance(spec, AksSpec), "an AKS pool's spec is an AksSpec"
    pool = next(p for p in spec.gpu_pools if p.name == build.pool.name) if spec.gpu_pools else None
    reservation = pool.capacity_reservation_group if pool is not None else None
    if reservation is not None and reservation.create is not None:
        raise SpecError(where, [Problem("capacity_reservation_group.create", RESERVATION_CREATE_REFUSAL)])
    cluster_id = build.target["cluster_id"]
    if not isinstance(cluster_id, pulumi.Output) and resources.cluster_of_id(cluster_id) is None:
        raise SpecError(where, [Problem("cluster_id", f"{cluster_id!r} is not {resources.CLUSTER_ID_ACCEPTED}")])
    parts = then(cluster_id, lambda found: _parts(found, where))
    return AgentPoolTarget(
        resource_group_name=then(parts, lambda found: found[0]),
        cluster_name=then(parts, lambda found: found[1]),
        reservation_group_id=reservation.id if reservation is not None else None,
        vnet_subnet_id=build.target.get("vnet_subnet_id"),
        pod_subnet_id=build.target.get("pod_subnet_id"),
    )


def _parts(cluster_id: Any, where: str) -> tuple[str, str]:
    """The resource group and name in a cluster id that was an Output; a wrong one fails the deployment."""
    found = resources.cluster_of_id(cluster_id)
    if found is None:
        raise pulumi.RunError(f"{where}: cluster_id: the Output resolved to {cluster_id!r}, which is not "
                              f"{resources.CLUSTER_ID_ACCEPTED}")
    return found
