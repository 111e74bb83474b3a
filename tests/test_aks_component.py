"""AksGpuCluster registers what the AKS facts require, seen through a recording mock monitor."""

from __future__ import annotations

from typing import Any

import pulumi
import pytest
import yaml

from spotkube import AksGpuCluster, GpuClusterArgs
from spotkube.offline import Recording, Registration, record_program

AGENT_POOL = "azure-native:containerservice:AgentPool"
CLUSTER = "azure-native:containerservice:ManagedCluster"
SPOT_TAINT = "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"
GPU_TAINT = "nvidia.com/gpu=present:NoSchedule"

ARGS: GpuClusterArgs = {
    "environment": "dev",
    "region": "uksouth",
    "system_pool": {"machine": "Standard_D4s_v3", "min": 2, "max": 3},
    "gpu_pools": [
        {"name": "t4spot", "machine": "Standard_NC4as_T4_v3", "capacity": "spot", "max_price": 0.25, "max": 5},
        {"name": "t4demand", "machine": "Standard_NC4as_T4_v3", "capacity": "on-demand", "max": 2},
    ],
}


def build(args: GpuClusterArgs) -> Recording:
    def program() -> None:
        cluster = AksGpuCluster("ml", args=args)
        pulumi.export("kubeconfig", cluster.kubeconfig)
        pulumi.export("poolContracts", cluster.pool_contracts)

    return record_program(program, project="spotkube", stack="test", config={})


@pytest.fixture(scope="module")
def dev() -> Recording:
    return build(ARGS)


def only(recording: Recording, type_token: str, name: str) -> Registration:
    (match,) = [r for r in recording.registrations if r.type == type_token and r.name == name]
    return match


def test_spot_pool_inputs_match_the_spec(dev: Recording) -> None:
    pool: dict[str, Any] = dict(only(dev, AGENT_POOL, "ml-t4spot").inputs)
    assert pool["agentPoolName"] == "t4spot"
    assert pool["vmSize"] == "Standard_NC4as_T4_v3"
    assert pool["mode"] == "User"
    assert pool["scaleSetPriority"] == "Spot"
    assert pool["scaleSetEvictionPolicy"] == "Delete"
    assert pool["spotMaxPrice"] == 0.25
    assert (pool["minCount"], pool["maxCount"], pool["count"]) == (0, 5, 0)
    assert pool["enableAutoScaling"] is True


def test_spot_pool_repeats_the_taint_and_label_aks_adds(dev: Recording) -> None:
    pool = only(dev, AGENT_POOL, "ml-t4spot").inputs
    assert pool["nodeTaints"] == [SPOT_TAINT, GPU_TAINT]
    assert pool["nodeLabels"]["kubernetes.azure.com/scalesetpriority"] == "spot"
    assert pool["nodeLabels"]["spotkube.io/capacity"] == "spot"
    assert pool["nodeLabels"]["spotkube.io/accelerator"] == "nvidia-tesla-t4"
    assert pool["nodeLabels"]["spotkube.io/pool"] == "t4spot"


def test_on_demand_gpu_pool_has_gpu_taint_but_no_spot_fields(dev: Recording) -> None:
    pool = only(dev, AGENT_POOL, "ml-t4demand").inputs
    assert pool["nodeTaints"] == [GPU_TAINT]
    assert pool["scaleSetPriority"] == "Regular"
    assert "spotMaxPrice" not in pool and "scaleSetEvictionPolicy" not in pool


def test_create_only_fields_replace_the_pool_and_count_is_left_to_the_autoscaler(dev: Recording) -> None:
    pool = only(dev, AGENT_POOL, "ml-t4spot")
    assert pool.ignore_changes == ("count",)
    assert {"scaleSetPriority", "scaleSetEvictionPolicy", "spotMaxPrice"} <= set(pool.replace_on_changes)
    assert pool.delete_before_replace


def test_system_pool_is_inline_on_demand_and_tainted_for_addons(dev: Recording) -> None:
    cluster = only(dev, CLUSTER, "ml-aks")
    (system,) = cluster.inputs["agentPoolProfiles"]
    assert (system["name"], system["mode"], system["scaleSetPriority"]) == ("system", "System", "Regular")
    assert system["nodeTaints"] == ["CriticalAddonsOnly=true:NoSchedule"]
    assert cluster.ignore_changes == ("agentPoolProfiles[0].count",)
    platform = only(dev, AGENT_POOL, "ml-platform").inputs
    assert "nodeTaints" not in platform, "platform workloads need an untainted on-demand pool"


def test_security_baseline_is_on(dev: Recording) -> None:
    cluster = only(dev, CLUSTER, "ml-aks").inputs
    assert cluster["enableRBAC"] is True
    assert cluster["aadProfile"]["managed"] and cluster["aadProfile"]["enableAzureRBAC"]
    assert cluster["oidcIssuerProfile"] == {"enabled": True}
    assert cluster["securityProfile"]["workloadIdentity"] == {"enabled": True}
    assert cluster["networkProfile"]["networkPolicy"] == "cilium"
    assert cluster["disableLocalAccounts"] is False, "local accounts stay on outside prod by default"


def test_prod_disables_local_accounts_goes_private_and_protects(dev: Recording) -> None:
    prod = build({**ARGS, "environment": "prod"})
    cluster = only(prod, CLUSTER, "ml-aks")
    assert cluster.protect
    assert cluster.inputs["disableLocalAccounts"] is True
    assert cluster.inputs["apiServerAccessProfile"]["enablePrivateCluster"] is True
    assert not only(dev, CLUSTER, "ml-aks").protect


def test_autoscaler_prefers_spot_pools(dev: Recording) -> None:
    assert only(dev, CLUSTER, "ml-aks").inputs["autoScalerProfile"]["expander"] == "priority"
    config_map = only(dev, "kubernetes:core/v1:ConfigMap", "ml-priority-expander").inputs
    assert config_map["metadata"] == {"name": "cluster-autoscaler-priority-expander", "namespace": "kube-system"}
    priorities = yaml.safe_load(config_map["data"]["priorities"])
    assert priorities == {30: ["^aks-t4spot-[0-9]+-vmss$"], 20: ["^aks-t4demand-[0-9]+-vmss$"], 10: [".*"]}
    assert only(dev, "kubernetes:core/v1:ConfigMap", "ml-priority-expander").provider.startswith(
        only(dev, "pulumi:providers:kubernetes", "ml-k8s").urn)


def test_every_child_is_parented_to_the_component(dev: Recording) -> None:
    component = only(dev, "spotkube:index:AksGpuCluster", "ml")
    children = [r for r in dev.registrations if r is not component]
    assert children and all(r.parent == component.urn for r in children)


def test_kubeconfig_is_secret_and_contracts_are_not(dev: Recording) -> None:
    assert dev.outputs["kubeconfig"].secret
    assert dev.outputs["kubeconfig"].value is None
    contracts = dev.outputs["poolContracts"].value
    assert [c["name"] for c in contracts] == ["system", "platform", "t4spot", "t4demand"]


def test_existing_resource_group_is_used_by_name() -> None:
    recording = build({**ARGS, "cluster": {"resource_group_name": "shared-rg"}})
    assert not [r for r in recording.registrations if r.type == "azure-native:resources:ResourceGroup"]
    assert only(recording, CLUSTER, "ml-aks").inputs["resourceGroupName"] == "shared-rg"


def test_bad_args_stop_before_registering_anything() -> None:
    from spotkube.offline import ProgramFailed

    with pytest.raises(ProgramFailed, match=r"AksGpuCluster 'ml' args: spotkube:gpu_pools\[0\]\.max_price") as err:
        build({**ARGS, "gpu_pools": [{"name": "x", "machine": "Standard_NC4as_T4_v3", "max_price": -3}]})
    assert err.value.registrations == []
