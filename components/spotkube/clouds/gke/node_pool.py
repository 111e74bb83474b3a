"""`GkeGpuNodePool`: one spot, preemptible, flex-start or on-demand pool, GPU or CPU, on any GKE cluster.

A team that already runs GKE (made with terraform-google-modules, `gcloud` or its own code) adds
spotkube's pools to it; `GkeGpuCluster` builds its own pools with this same component. Every input comes
from `resources.node_pool_inputs`, as for a pool of a spotkube cluster.

Like every module that defines a component, it does without `from __future__ import annotations`:
Pulumi's schema analyzer needs the `args` annotation as a real TypedDict, not a string.
"""

import pulumi
import pulumi_gcp as gcp

from spotkube.clouds.gke import resources
from spotkube.clouds.gke.args import GkeGpuNodePoolArgs
from spotkube.platform.errors import Problem, SpecError
from spotkube.platform.records import record
from spotkube.shell.common import built_from, validated
from spotkube.shell.outputs import PoolContractOutput
from spotkube.shell.pools import PoolBuild, pool_from_args, pool_options, report_pool


@record
class NodePoolTarget:
    """The cluster a NodePool joins, as pulumi-gcp takes it."""

    project: pulumi.Input[str]
    location: str
    #: The cluster's id (`projects/<p>/locations/<l>/clusters/<name>`) or name.
    cluster: pulumi.Input[str]
    #: The e-mail of the nodes' service account; None: the cluster's default.
    service_account: pulumi.Input[str] | None = None
    #: The resources the NodePool waits for (its service account's role).
    after: tuple[pulumi.Resource, ...] = ()
    #: The NodePool's parent before it moved under this component (a `GkeGpuCluster`), kept as an alias.
    moved_from: pulumi.Resource | None = None


class GkeGpuNodePool(pulumi.ComponentResource):
    """One GKE node pool, spot, preemptible, flex-start or on-demand, GPU or CPU, scaling min..max, on any
    GKE Standard cluster.

    It carries everything a pool of a `GkeGpuCluster` carries: the scheduling contract's labels and
    taints (GKE's own spot and GPU taints repeated), the capacity, autoscaling from `min` with the node
    count left to the autoscaler, zones that offer the GPU, an explicit driver version, sharing and MIG,
    image streaming and a secondary boot disk, queued provisioning and upgrade settings. GKE replaces a
    pool whose create-only fields change.

    What it registers: one `NodePool`, named as this component, in the cluster `cluster_id` names.

    Its args are `GkeGpuNodePoolArgs`: `cluster_id`, `region`, `project`, `service_account` (each of the
    four may be an Output) and the keys of one entry of `GkeGpuCluster`'s `gpu_pools`; they are checked
    before anything is registered.

    What it can't set, because it is the cluster's (`spotkube plan` names each as a finding): the
    ComputeClass that falls back from spot to on-demand, Workload Identity, the nodes' egress (Cloud NAT
    for private nodes), and `roles/artifactregistry.reader` for the nodes' service account.

    Outputs:

    - `contract`: the pool's name, capacity, GPU, labels and taints, for the add-ons and pipeline steps.
    - `pool_name`: the NodePool's name in GKE.
    """

    contract: pulumi.Output[PoolContractOutput]
    """The pool's scheduling contract: labels and taints to target it."""
    pool_name: pulumi.Output[str]
    """The NodePool's name in GKE."""

    def __init__(
        self, name: str, args: GkeGpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        """Check the args and register the pool; bad args end the program with one line naming the key,
        and nothing is registered.

        :param name: the component's name, and the NodePool resource's.
        :param args: the pool's typed args, `GkeGpuNodePoolArgs`.
        :param opts: Pulumi's resource options.
        """
        where = f"GkeGpuNodePool {name!r} args"
        build = pool_from_args("gke", args, GkeGpuNodePoolArgs, where)
        self._build(name, (build, validated(lambda: _external_target(build, where))), opts)

    @classmethod
    def on_cluster(cls, name: str, build: PoolBuild, target: NodePoolTarget,
                   opts: pulumi.ResourceOptions | None = None) -> "GkeGpuNodePool":
        """A pool of a `GkeGpuCluster`, planned with its cluster."""
        return built_from(cls, name, (build, target), opts)

    def _build(self, name: str, value: tuple[PoolBuild, NodePoolTarget], opts: pulumi.ResourceOptions | None) -> None:
        build, target = value
        super().__init__("spotkube:index:GkeGpuNodePool", name, {}, opts)
        pool = build.pool
        node_pool = gcp.container.NodePool(
            name,
            **resources.node_pool_inputs(
                pool, project=target.project, location=target.location, cluster=target.cluster,
                service_account=target.service_account,
                images=resources.image_config(resources.gpu_pool_spec(build.plan.spec, pool.name))),
            # A spot or GPU pool keeps its name, so its replacement waits for it to go; a control-plane
            # pool's name is versioned, so its replacement comes up first.
            opts=pool_options(self, opts, list(target.after), target.moved_from,
                              ignore_changes=list(resources.NODE_POOL_IGNORED),
                              delete_before_replace=not pool.hosts_control_plane),
        )
        self.node_pool = node_pool
        self.build = build
        report_pool(self, build)
        self.contract = node_pool.id.apply(lambda _: build.contract.to_json())
        self.pool_name = node_pool.id.apply(lambda _: pool.cloud_name)
        self.register_outputs({"contract": self.contract, "poolName": self.pool_name})


def _external_target(build: PoolBuild, where: str) -> NodePoolTarget:
    """The cluster a pool of the component's own args joins; a plain cluster id must name the project and
    region the args give."""
    given = build.target
    cluster_id, project = given["cluster_id"], given["project"]
    problems = [Problem(key, problem) for key, problem in (
        ("cluster_id", resources.cluster_id_problem(cluster_id, project, build.plan.spec.region)),
        ("service_account", resources.service_account_problem(given.get("service_account")))) if problem]
    if problems:
        raise SpecError(where, problems)
    return NodePoolTarget(project=project, location=build.plan.spec.region, cluster=cluster_id,
                          service_account=given.get("service_account"))
