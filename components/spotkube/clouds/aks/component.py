"""`AksGpuCluster`: an AKS cluster with an on-demand system pool and spot GPU pools.

A thin shell: every decision comes from `spotkube.platform.plan`; this module only spells it in
azure-native's terms and applies the AKS facts that are about resources rather than decisions
(inline system pool, separate AgentPools created one at a time, create-only fields, the deployer's
data-plane rights, the autoscaler ConfigMap).

The AKS facts it relies on, with sources: docs/platform-facts.md#aks.
"""


import base64
from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
import pulumi_azure_native as azure
import pulumi_kubernetes as k8s
import pulumiverse_time as time
import yaml

from spotkube.clouds.aks.catalog import INLINE_POOL_FIXED_FIELDS, RBAC_CLUSTER_ADMIN_ROLE_ID
from spotkube.clouds.aks.identities import role_definition_id
from spotkube.platform.kubeconfigs import with_kubelogin_mode
from spotkube.platform.plan import PlatformPlan, PoolPlan, autoscaler_priorities, versioned_name
from spotkube.platform.spec import PlatformSpec
from spotkube.shell.args import GpuClusterArgs, PoolContractOutput
from spotkube.shell.common import (
    ClusterPlan,
    Wiring,
    built_from,
    child,
    kubernetes_provider,
    log_plan_warnings,
    plan_from_args,
    plan_from_spec,
    pool_contract_outputs,
    protected,
    refuse_bad_name,
    security_concerns,
    then,
)

#: AgentPool fields Azure fixes at creation but azure-native does not mark as replacing; with
#: vmSize (which azure-native does replace on), changing any of them replaces the pool.
CREATE_ONLY_POOL_FIELDS = [
    "scaleSetPriority", "scaleSetEvictionPolicy", "spotMaxPrice", "osType", "gpuProfile",
    "availabilityZones",
]
#: A versioned control-plane pool name is the pool's name plus this many hex digits; AKS allows 12
#: characters in all, so such a pool's own name has at most 8.
VERSION_DIGITS = 4
#: Regex for the VM scale sets AKS creates per pool, e.g. `aks-gpuspot-12345678-vmss`.
VMSS_PATTERN = "^aks-{pool}-[0-9]+-vmss$"
PRIORITY_EXPANDER_CONFIGMAP = "cluster-autoscaler-priority-expander"


def cloud_pool_name(pool: PoolPlan) -> str:
    """The AgentPool name. A pool that hosts the control plane is versioned by its create-only
    fields, so that replacing it creates the new pool before the old one is deleted; spot and GPU
    pools keep their name and may be deleted first (workloads there are retried)."""
    if not pool.hosts_control_plane:
        return pool.name
    fields = {k: v for k, v in _api_fields(_pool_fields(pool)).items()
              if k in ("vmSize", *CREATE_ONLY_POOL_FIELDS)}
    return versioned_name(pool.name, fields, separator="", digits=VERSION_DIGITS)


def _api_fields(fields: Mapping[str, Any]) -> dict[str, Any]:
    """snake_case SDK field names as the API spells them (vm_size -> vmSize)."""
    def camel(name: str) -> str:
        head, *rest = name.split("_")
        return head + "".join(part.title() for part in rest)
    return {camel(k): v for k, v in fields.items() if v is not None}


def system_pool_change_problem(
    wanted: PoolPlan, deployed_profiles: Sequence[Mapping[str, Any]] | None, source: str
) -> str | None:
    """Why the deployed inline system pool can't become `wanted`, or None when nothing fixed changes.

    AKS can't change a pool's VM size, zones or OS in place, and azure-native can't replace the
    inline pool, so such a change would fail half-way through an update. It is refused instead,
    with the migration that works.
    """
    profiles = list(deployed_profiles or ())
    if not profiles:
        return None  # a new cluster: nothing deployed yet
    deployed = next((p for p in profiles if p.get("name") == wanted.cloud_name), None)
    fixed = _api_fields(_pool_fields(wanted))
    migration = (
        "AKS can't change an existing pool's VM size, zones or OS, and the cluster's inline system pool "
        "can't be replaced. To move it: `az aks nodepool add --mode System --name <newname> ...` with the new "
        "settings, wait until its nodes are Ready, `az aks nodepool delete --name {old}`, then set "
        "systemPool.name to <newname> with the new settings, run `pulumi refresh`, then `pulumi up`"
    )
    if deployed is None:
        names = ", ".join(str(p.get("name")) for p in profiles)
        return (f"{source}: spotkube:systemPool.name: {wanted.cloud_name!r} is not the deployed system pool "
                f"({names}); a system pool can't be renamed in place. {migration.format(old=names)}")
    changed = [f for f in INLINE_POOL_FIXED_FIELDS if _normal(deployed.get(f)) != _normal(fixed.get(f))]
    if not changed:
        return None
    what = "; ".join(f"{f} {deployed.get(f)!r} -> {fixed.get(f)!r}" for f in changed)
    return (f"{source}: spotkube:systemPool: {what} is refused. {migration.format(old=wanted.cloud_name)}")


def _normal(value: Any) -> Any:
    """Zones compare as sets and an empty list as unset, as Azure reports them."""
    if isinstance(value, list | tuple):
        return tuple(sorted(str(v) for v in value)) or None
    return value


def _pool_fields(pool: PoolPlan) -> dict:
    """The agent pool fields the system profile and the AgentPools share."""
    fields = {
        "vm_size": pool.machine,
        "os_type": "Linux",
        "type": "VirtualMachineScaleSets",
        "enable_auto_scaling": True,
        "min_count": pool.min,
        "max_count": pool.max,
        # `count` only matters at creation; the autoscaler owns it afterwards (ignore_changes).
        "count": max(pool.min, 1) if pool.role == "system" else pool.min,
        "node_labels": pool.labels,
        "node_taints": [str(t) for t in pool.taints] or None,
        "availability_zones": list(pool.zones) or None,
    }
    if pool.capacity == "spot":
        fields.update(
            scale_set_priority="Spot",
            scale_set_eviction_policy=pool.eviction_policy,
            spot_max_price=pool.max_price,
        )
    else:
        fields["scale_set_priority"] = "Regular"
    return fields


class AksGpuCluster(pulumi.ComponentResource):
    """An AKS cluster for ML: on-demand system and platform pools plus spot GPU pools 0..N."""

    kubeconfig: pulumi.Output[str]
    """User kubeconfig (a secret). With local accounts disabled it needs kubelogin."""
    cluster_name: pulumi.Output[str]
    """The managed cluster's name."""
    resource_group_name: pulumi.Output[str]
    """The resource group the cluster lives in."""
    oidc_issuer_url: pulumi.Output[str]
    """OIDC issuer for workload identity federation."""
    pool_contracts: pulumi.Output[list[PoolContractOutput]]
    """Labels and taints of every pool, for targeting workloads."""

    def __init__(
        self, name: str, args: GpuClusterArgs, opts: pulumi.ResourceOptions | None = None
    ) -> None:
        self._build(name, plan_from_args("aks", args, GpuClusterArgs, f"AksGpuCluster {name!r} args"), opts)

    @classmethod
    def from_spec(
        cls, name: str, spec: PlatformSpec, opts: pulumi.ResourceOptions | None = None
    ) -> "AksGpuCluster":
        """The cluster of a typed spec, as the stack program reads it from the stack file with
        `parse_spec`: no dict round trip, and a spec built by hand still meets every rule."""
        return built_from(cls, name, plan_from_spec("aks", spec, f"AksGpuCluster {name!r}"), opts)

    def _build(self, name: str, built: ClusterPlan, opts: pulumi.ResourceOptions | None) -> None:
        label = f"AksGpuCluster {name!r}"
        refuse_bad_name(label, name, built.plan)
        super().__init__("spotkube:index:AksGpuCluster", name, {}, opts)
        log_plan_warnings(self, label, built.plan)
        plan, wiring = built.plan, built.wiring
        spec = plan.spec

        # The spec says whether a group was given (a wired Output shows as its placeholder there);
        # the wiring holds the value itself, which may be another resource's output.
        if spec.cluster.resource_group_name and wiring.resource_group_name is not None:
            resource_group_name: pulumi.Input[str] = wiring.resource_group_name
        else:
            group = azure.resources.ResourceGroup(
                f"{name}-rg", location=spec.region, opts=child(self, protect=protected(spec.is_prod))
            )
            resource_group_name = group.name

        plan = plan.with_cloud_names({pool.name: cloud_pool_name(pool) for pool in plan.node_pools})
        self.plan = plan
        cluster = self._cluster(name, plan, wiring, resource_group_name)
        source = f"AksGpuCluster {name!r}"
        # The cluster's name, released only once the deployed system pool is known to accept the
        # wanted one: every pool and the kubeconfig wait for it, so a refused change stops them all.
        cluster_name = pulumi.Output.all(cluster.name, cluster.agent_pool_profiles).apply(
            lambda values: _checked(values[0], plan.system_pool, values[1], source)
        )
        previous: list[pulumi.Resource] = []
        for pool in plan.node_pools:
            # AKS refuses a second agent-pool operation on a cluster while one runs (409
            # OperationNotAllowed; Azure/AKS#1913), so each pool waits for the one before it.
            previous = [azure.containerservice.AgentPool(
                f"{name}-{pool.name}",
                resource_group_name=resource_group_name,
                resource_name_=cluster_name,
                agent_pool_name=pool.cloud_name,
                mode="User",
                **_pool_fields(pool),
                opts=child(
                    self,
                    ignore_changes=["count"],
                    replace_on_changes=CREATE_ONLY_POOL_FIELDS,
                    delete_before_replace=not pool.hosts_control_plane,
                    depends_on=previous,
                ),
            )]

        credentials = azure.containerservice.list_managed_cluster_user_credentials_output(
            resource_group_name=resource_group_name,
            resource_name=cluster_name,
            opts=pulumi.InvokeOutputOptions(parent=self),
        )
        login = spec.cluster.deployer.login
        self.kubeconfig = pulumi.Output.secret(
            credentials.kubeconfigs[0].value.apply(lambda v: with_kubelogin_mode(base64.b64decode(v).decode(), login))
        )
        grants_effective = self._data_plane_rights(name, plan, wiring, cluster)
        self.provider = kubernetes_provider(self, label, name, self.kubeconfig,
                                            depends_on=[grants_effective])
        if spec.cluster.autoscaler.expander == "priority":
            self._priority_expander(name, plan)

        self.cluster_name = cluster.name
        self.resource_group_name = pulumi.Output.from_input(resource_group_name)
        self.oidc_issuer_url = cluster.oidc_issuer_profile.apply(
            lambda p: (p.issuer_url if p else None) or ""
        )
        self.pool_contracts = pulumi.Output.from_input(pool_contract_outputs(plan))
        self.register_outputs({
            "kubeconfig": self.kubeconfig,
            "clusterName": self.cluster_name,
            "resourceGroupName": self.resource_group_name,
            "oidcIssuerUrl": self.oidc_issuer_url,
            "poolContracts": self.pool_contracts,
        })

    def _cluster(
        self, name: str, plan: PlatformPlan, wiring: Wiring, resource_group_name: pulumi.Input[str]
    ) -> azure.containerservice.ManagedCluster:
        """The managed cluster with its one inline System pool, which is never renamed."""
        spec = plan.spec
        settings = spec.cluster
        autoscaler = settings.autoscaler
        private = spec.switch(settings.private)
        return azure.containerservice.ManagedCluster(
            f"{name}-aks",
            resource_group_name=resource_group_name,
            location=spec.region,
            dns_prefix=f"{name}-{spec.environment}",
            kubernetes_version=settings.kubernetes_version,
            identity={"type": "SystemAssigned"},
            agent_pool_profiles=[{
                "name": plan.system_pool.cloud_name,
                "mode": "System",
                **_pool_fields(plan.system_pool),
            }],
            enable_rbac=True,
            aad_profile={
                "managed": True,
                "enable_azure_rbac": True,
                "admin_group_object_ids": list(wiring.admin_group_object_ids) or None,
            },
            disable_local_accounts=spec.switch(settings.local_accounts_disabled),
            oidc_issuer_profile={"enabled": True},
            security_profile={"workload_identity": {"enabled": True}},
            network_profile={
                "network_plugin": "azure",
                "network_plugin_mode": "overlay",
                "network_policy": settings.network_policy,
                "network_dataplane": "cilium" if settings.network_policy == "cilium" else "azure",
                "load_balancer_sku": "standard",
            },
            api_server_access_profile={
                "enable_private_cluster": private,
                # Restricted by address when ranges are listed: their number is plain, their values may
                # be outputs, so the deployer's egress is merged in once they resolve.
                "authorized_ip_ranges": then(wiring.api_server_ranges(spec, bool(settings.authorized_ip_ranges)),
                                             lambda ranges: ranges or None),
            },
            auto_upgrade_profile={
                "upgrade_channel": settings.channel,
                "node_os_upgrade_channel": "NodeImage",
            },
            auto_scaler_profile={
                "expander": autoscaler.expander,
                "scan_interval": autoscaler.scan_interval,
                "max_node_provision_time": autoscaler.max_node_provision_time,
                "new_pod_scale_up_delay": autoscaler.new_pod_scale_up_delay,
                "scale_down_unneeded_time": autoscaler.scale_down_unneeded_time,
                "scale_down_delay_after_add": autoscaler.scale_down_delay_after_add,
                "max_graceful_termination_sec": str(autoscaler.max_graceful_termination_sec),
                "skip_nodes_with_local_storage": str(autoscaler.skip_nodes_with_local_storage).lower(),
            },
            opts=child(
                self,
                protect=protected(spec.switch(settings.deletion_protection)),
                transforms=[security_concerns(self, f"AksGpuCluster {name!r}", "aks")],
                ignore_changes=["agentPoolProfiles[0].count",
                                *(f"agentPoolProfiles[0].{field}" for field in INLINE_POOL_FIXED_FIELDS)],
            ),
        )

    def _data_plane_rights(
        self, name: str, plan: PlatformPlan, wiring: Wiring, cluster: azure.containerservice.ManagedCluster,
    ) -> pulumi.Resource:
        """Kubernetes rights for the deployer and the admin groups, and the wait until they work.

        With Azure RBAC for Kubernetes nobody, not even the subscription's Owner, may create an
        object until a role assignment says so, and a new assignment takes minutes to reach the API
        server. The Kubernetes provider waits for the returned resource, so the first ConfigMap is
        created only after the grants had time to propagate.

        The deployer is the stack's (`cluster.deployer.objectId` and `principalType`), never whoever
        runs Pulumi: a preview runs as the preview identity and a person may run `pulumi up` from a
        laptop, and neither may replace CI's grant (docs/identities.md).
        """
        settings = plan.spec.cluster
        deployer = settings.deployer
        assert deployer.object_id and deployer.principal_type, "the AKS rules require the deployer"
        # The built-in role as defined in the cluster's own subscription, read from the cluster's id.
        role = cluster.id.apply(lambda cluster_id: role_definition_id(cluster_id, RBAC_CLUSTER_ADMIN_ROLE_ID))
        principals: list[tuple[str, pulumi.Input[str], str]] = [
            ("deployer", deployer.object_id, deployer.principal_type),
            *((f"admins-{i}", group, "Group") for i, group in enumerate(wiring.admin_group_object_ids)),
        ]
        grants = [
            azure.authorization.RoleAssignment(
                f"{name}-rbac-{who}", principal_id=principal, principal_type=kind, role_definition_id=role,
                scope=cluster.id, opts=child(self),
            )
            for who, principal, kind in principals
        ]
        return time.Sleep(
            f"{name}-rbac-propagation",
            create_duration=settings.deployer.grant_propagation_wait,
            triggers={f"grant{i}": grant.id for i, grant in enumerate(grants)},
            opts=child(self, depends_on=grants),
        )

    def _priority_expander(self, name: str, plan: PlatformPlan) -> None:
        """Spot pools first, on-demand GPU fallbacks next: read by AKS's managed autoscaler."""
        priorities = autoscaler_priorities(plan, VMSS_PATTERN)
        k8s.core.v1.ConfigMap(
            f"{name}-priority-expander",
            metadata={"name": PRIORITY_EXPANDER_CONFIGMAP, "namespace": "kube-system"},
            data={"priorities": yaml.safe_dump(priorities, sort_keys=False)},
            opts=child(self, provider=self.provider),
        )


def _checked(cluster_name: str, system_pool: PoolPlan, deployed: Any, source: str) -> str:
    """`cluster_name`, or the refusal of a system pool change that AKS can't make."""
    profiles = [_profile_dict(p) for p in deployed or ()]
    problem = system_pool_change_problem(system_pool, profiles, source)
    if problem:
        raise pulumi.RunError(problem)
    return cluster_name


def _profile_dict(profile: Any) -> Mapping[str, Any]:
    """A deployed agent pool profile as the API spells it, whether the SDK gave an object or a dict."""
    if isinstance(profile, Mapping):
        return _api_fields(profile) if any("_" in k for k in profile) else profile
    return {"name": getattr(profile, "name", None), "vmSize": getattr(profile, "vm_size", None),
            "availabilityZones": getattr(profile, "availability_zones", None),
            "osType": getattr(profile, "os_type", None)}
