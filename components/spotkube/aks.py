"""`AksGpuCluster`: an AKS cluster with an on-demand system pool and spot GPU pools.

A thin shell: every decision comes from `spotkube.plan`; this module only spells it in
azure-native's terms and applies the AKS facts that are about resources rather than decisions
(inline system pool, separate AgentPools, create-only fields, the autoscaler ConfigMap).
"""


import base64

import pulumi
import pulumi_azure_native as azure
import pulumi_kubernetes as k8s
import yaml

from spotkube.args import GpuClusterArgs, PoolContractOutput
from spotkube.plan import PlatformPlan, PoolPlan, autoscaler_priorities
from spotkube.shell import child, kubernetes_provider, plan_from_args, pool_contract_outputs

#: AgentPool fields Azure fixes at creation but azure-native does not mark as replacing: changing
#: them must replace the pool, and the old pool has to go first because the name is reused.
CREATE_ONLY_POOL_FIELDS = [
    "scaleSetPriority", "scaleSetEvictionPolicy", "spotMaxPrice", "osType", "gpuProfile",
    "availabilityZones",
]
#: Regex for the VM scale sets AKS creates per pool, e.g. `aks-gpuspot-12345678-vmss`.
VMSS_PATTERN = "^aks-{pool}-[0-9]+-vmss$"
PRIORITY_EXPANDER_CONFIGMAP = "cluster-autoscaler-priority-expander"


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
        plan = plan_from_args("aks", args, f"AksGpuCluster {name!r} args")
        super().__init__("spotkube:index:AksGpuCluster", name, {}, opts)
        self.plan = plan
        spec = plan.spec

        if spec.cluster.resource_group_name:
            resource_group_name: pulumi.Input[str] = spec.cluster.resource_group_name
        else:
            group = azure.resources.ResourceGroup(
                f"{name}-rg", location=spec.region, opts=child(self, protect=spec.is_prod)
            )
            resource_group_name = group.name

        cluster = self._cluster(name, plan, resource_group_name)
        for pool in plan.node_pools:
            azure.containerservice.AgentPool(
                f"{name}-{pool.name}",
                resource_group_name=resource_group_name,
                resource_name_=cluster.name,
                agent_pool_name=pool.name,
                mode="User",
                **_pool_fields(pool),
                opts=child(
                    self,
                    ignore_changes=["count"],
                    replace_on_changes=CREATE_ONLY_POOL_FIELDS,
                    delete_before_replace=True,
                ),
            )

        credentials = azure.containerservice.list_managed_cluster_user_credentials_output(
            resource_group_name=resource_group_name,
            resource_name=cluster.name,
            opts=pulumi.InvokeOutputOptions(parent=self),
        )
        self.kubeconfig = pulumi.Output.secret(
            credentials.kubeconfigs[0].value.apply(lambda v: base64.b64decode(v).decode())
        )
        self.provider = kubernetes_provider(self, name, self.kubeconfig)
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
        self, name: str, plan: PlatformPlan, resource_group_name: pulumi.Input[str]
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
                "name": plan.system_pool.name,
                "mode": "System",
                **_pool_fields(plan.system_pool),
            }],
            enable_rbac=True,
            aad_profile={
                "managed": True,
                "enable_azure_rbac": True,
                "admin_group_object_ids": list(settings.admin_group_object_ids) or None,
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
                "authorized_ip_ranges": list(settings.authorized_ip_ranges) or None,
            },
            auto_upgrade_profile={
                "upgrade_channel": settings.channel,
                "node_os_upgrade_channel": "NodeImage",
            },
            auto_scaler_profile={
                "expander": autoscaler.expander,
                "scan_interval": autoscaler.scan_interval,
                "scale_down_unneeded_time": autoscaler.scale_down_unneeded_time,
                "scale_down_delay_after_add": autoscaler.scale_down_delay_after_add,
                "max_graceful_termination_sec": str(autoscaler.max_graceful_termination_sec),
                "skip_nodes_with_local_storage": str(autoscaler.skip_nodes_with_local_storage).lower(),
            },
            opts=child(
                self,
                protect=spec.switch(settings.deletion_protection),
                ignore_changes=["agentPoolProfiles[0].count"],
            ),
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
